import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../../common/clock.ts';
import type { Db } from '../../store/store.ts';
import type { TokenSealer } from '../connections.ts';
import { receiveHook, type HookOutcome } from './receiver.ts';

/**
 * POST /hooks/crm/:connectionId, the public end of the CRMs' webhooks (docs/security.md "CRM
 * webhooks"), mounted beside the mailbox push routes: no session, each delivery verified with its
 * connection's secret (receiver.ts, signature.ts). The body is read raw (HubSpot signs the exact
 * bytes) and bounded: a delivery over `bodyLimit` is refused (413) before it is read whole.
 *
 *   verified                   204: the connection's reader is woken; nothing in the body is used
 *                              (but Pipedrive's author: Cadenza's own writes wake nothing, receiver.ts)
 *   signature or auth wrong    401, counted (onOutcome), never a wake; the CRM retries, which a
 *                              wrong secret does not make right
 *   no such connection, or one that takes no webhooks
 *                              the server's own 404 for a route that does not exist, so the
 *                              answer says nothing more than a wrong path would
 */
export interface CrmHookRouteOptions {
  db: Db;
  sealer: TokenSealer;
  /** The real clock: HubSpot's timestamps are checked against it. */
  clock: Clock;
  /** CADENZA_PUBLIC_URL: HubSpot signs the full URL it posted to, which is this plus the path. */
  publicUrl: string;
  /** Default 256 KiB: HubSpot batches at most 100 events (about 30 KB); a Pipedrive v2 delivery is one record and what changed. */
  bodyLimit?: number;
  onOutcome?: (kind: HookOutcome['outcome']) => void;
}

export const CRM_HOOK_BODY_LIMIT = 256 * 1024;

export const crmHookRoutes: FastifyPluginAsync<CrmHookRouteOptions> = async (app, o) => {
  const bodyLimit = o.bodyLimit ?? CRM_HOOK_BODY_LIMIT;
  // In this plugin's scope only: every content type read as the raw string, for the signature.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_req, body, done) => done(null, body));
  app.post<{ Params: { connectionId: string } }>('/hooks/crm/:connectionId', { bodyLimit }, async (req, reply) => {
    const body = typeof req.body === 'string' ? req.body : '';
    const r = await receiveHook({ db: o.db, sealer: o.sealer, now: o.clock.now() }, req.params.connectionId, {
      method: req.method,
      uri: `${o.publicUrl.replace(/\/+$/, '')}${req.url}`,
      body,
      headers: req.headers,
    });
    o.onOutcome?.(r.outcome);
    if (r.outcome === 'unknown') return reply.callNotFound();
    if (r.outcome === 'refused') {
      // The reason goes to the log only (never the answer): it would tell a forger which part failed.
      req.log.warn({ connectionId: req.params.connectionId, reason: r.reason }, 'CRM webhook refused');
      return reply.code(401).send({ error: 'unauthenticated' });
    }
    return reply.code(204).send();
  });
};
