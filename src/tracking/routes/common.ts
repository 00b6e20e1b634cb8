import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestFacts } from '../recorder.ts';
import { MAX_TOKEN_LENGTH } from '../../common/sealed-token.ts';
import { notFoundPage, pageHeaders } from '../pages.ts';

/**
 * A sealed token in a path: base64url, and within sealed-token.ts's lengths. Checked by Fastify's
 * schema before a handler runs, so a handler only ever unseals something token-shaped.
 *
 * The routes capture the token with a wildcard (`/t/c/*`), not a `:token` parameter: Fastify caps
 * parameters at maxParamLength (100 by default, a server-wide setting), and a sealed token is 150
 * to 3,000 characters. A wildcard is not capped, so the routes work on any server they join.
 */
const TOKEN = `[A-Za-z0-9_-]{40,${MAX_TOKEN_LENGTH}}`;

export const tokenParams = {
  type: 'object',
  properties: { '*': { type: 'string', pattern: `^${TOKEN}$` } },
  required: ['*'],
} as const;

/** The pixel's path ends in .gif, so that mail clients and proxies take it for an image. */
export const gifParams = {
  type: 'object',
  properties: { '*': { type: 'string', pattern: `^${TOKEN}\\.gif$` } },
  required: ['*'],
} as const;

export type TokenRequest = FastifyRequest<{ Params: { '*': string } }>;

export function facts(req: FastifyRequest): RequestFacts {
  return { method: req.method, userAgent: req.headers['user-agent'], ip: req.ip };
}

/** A forged, tampered, truncated or unknown token: a page that says so, never a redirect. */
export function sendNotFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).headers(pageHeaders).send(notFoundPage());
}
