import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../common/clock.ts';
import type { Db } from '../../store/store.ts';
import { challengeAnswer } from './sql/acme.ts';

/**
 * GET /.well-known/acme-challenge/<token> (RFC 8555 8.3): the key authorization of an HTTP-01
 * challenge in flight for the host asked on, as text. The CA fetches it over plain HTTP on port
 * 80 of the customer's host, which is a CNAME to this server. Tokens are base64url (the RFC's
 * alphabet, at least 128 bits); anything else is not a token and gets a 404 without a query.
 */
const TOKEN = /^[A-Za-z0-9_-]{16,128}$/;

export function challengeRoute(app: FastifyInstance, deps: { db: Db; clock: Clock }): void {
  app.get<{ Params: { token: string } }>('/.well-known/acme-challenge/:token', async (req, reply) => {
    const token = req.params.token;
    const host = requestHost(req.headers.host);
    const answer = TOKEN.test(token) && host ? await challengeAnswer(deps.db, token, host, deps.clock.now()) : undefined;
    if (answer === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('no such challenge\n');
    return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(answer);
  });
}

/** The Host header's name, lowercase, without port or final dot; undefined when malformed. */
export function requestHost(header: string | undefined): string | undefined {
  if (!header || header.length > 300) return undefined;
  const m = /^([A-Za-z0-9.-]+)(?::\d{1,5})?$/.exec(header);
  return m ? m[1]!.toLowerCase().replace(/\.$/, '') : undefined;
}
