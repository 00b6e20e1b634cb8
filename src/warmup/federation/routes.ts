/**
 * The federation's HTTP ends on the API server (a Fastify plugin, mounted by api/server.ts):
 *
 *   GET  /federation/card         this installation's public card, for a peer's operator to add
 *   POST /federation/v1/exchange  a peer's members, schedule and reports in; ours back (exchange.ts)
 *   POST /federation/v1/leave     the peer ended the peering: it ends here too, at once
 *
 * Authenticated by signature only (signing.ts): no session or API key reaches these. The body is
 * read as bytes under its own content type, so the signature covers exactly what was sent, and is
 * parsed and checked (wire.ts) only after the signature holds. A valid request from a pending
 * peer proves it added us: the peering turns active. Answers are signed for the request's nonce.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { Store } from '../../store/store.ts';
import { takeRequest } from './exchange.ts';
import type { FederationIdentity } from './identity.ts';
import { activatePeer, claimNonce, endPeering, peerBySignKey, type Peer } from './peers.ts';
import { signRequest, verifySigned } from './signing.ts';
import { CARD_PATH, EXCHANGE_PATH, exchangeRequest, FEDERATION_TYPE, LEAVE_PATH, leaveNotice, MAX_BODY_BYTES, readBody } from './wire.ts';

export interface FederationRouteDeps {
  store: Store;
  clock: Clock;
  random: Random;
  identity: FederationIdentity;
  log?: Logger;
}

const fail = (reply: FastifyReply, status: number, code: string, message: string, reason: string) => reply.code(status).send({ error: { code, message, details: { reason } } });

export const federationRoutes: FastifyPluginAsync<FederationRouteDeps> = async (app, d) => {
  app.addContentTypeParser(FEDERATION_TYPE, { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_req, body, done) => done(null, body));

  app.get(CARD_PATH, async () => d.identity.card);

  /** Verifies the request; the peering it comes from, or null when the refusal is sent. */
  const signedBy = async (req: FastifyRequest, reply: FastifyReply, path: string): Promise<{ peer: Peer; body: Buffer } | null> => {
    const body = Buffer.isBuffer(req.body) ? req.body : null;
    if (!body) {
      await fail(reply, 415, 'INVALID_INPUT', `send the signed body as ${FEDERATION_TYPE}`, 'content-type');
      return null;
    }
    let found: Peer | undefined;
    const v = await verifySigned(req.headers, { method: 'POST', path, body }, {
      me: d.identity.card.signKey,
      now: d.clock.now(),
      peer: async (key) => (found = await peerBySignKey(d.store.db, key)),
      claimNonce: (peerId, nonce, now) => claimNonce(d.store.db, peerId, nonce, now),
    });
    if (!v.ok) {
      await fail(reply, v.status, v.status === 400 ? 'INVALID_INPUT' : v.status === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN', v.message, v.reason);
      return null;
    }
    if (found!.state === 'pending') await activatePeer(d.store.db, found!.id, d.clock.now());
    return { peer: found!, body };
  };

  const answer = (reply: FastifyReply, req: FastifyRequest, peer: Peer, path: string, payload: unknown) => {
    const body = Buffer.from(JSON.stringify(payload));
    const headers = signRequest(d.identity, peer.signKey, { method: 'RESPONSE', path, body }, d.clock.now(), String(req.headers['cadenza-nonce']));
    return reply.code(200).headers({ ...headers }).type('application/json').send(body);
  };

  app.post(EXCHANGE_PATH, async (req, reply) => {
    const got = await signedBy(req, reply, EXCHANGE_PATH);
    if (!got) return reply;
    try {
      const request = readBody(exchangeRequest, got.body);
      const ans = await takeRequest(d.store.db, got.peer, request, d.clock.now(), d.random);
      return answer(reply, req, got.peer, EXCHANGE_PATH, ans);
    } catch (e) {
      if (isCadenzaError(e) && e.code === 'INVALID_INPUT') return fail(reply, 400, e.code, e.message, 'invalid-body');
      throw e;
    }
  });

  app.post(LEAVE_PATH, async (req, reply) => {
    const got = await signedBy(req, reply, LEAVE_PATH);
    if (!got) return reply;
    let reason = '';
    try {
      reason = readBody(leaveNotice, got.body).reason;
    } catch {
      /* a notice without a readable reason still ends the peering */
    }
    await endPeering(d.store.db, got.peer.id, 'peer', d.clock.now());
    d.log?.info({ peerId: got.peer.id, reason }, 'warmup peer left');
    return answer(reply, req, got.peer, LEAVE_PATH, { left: true });
  });
};
