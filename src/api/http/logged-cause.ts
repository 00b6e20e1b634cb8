import type { FastifyRequest } from 'fastify';

/**
 * Requests whose 5xx cause was logged where it happened (the API's error handler, /readyz), so the
 * server's catch-all 5xx log line (api/server.ts) does not log them a second time.
 */
export const loggedCause = new WeakSet<FastifyRequest>();
