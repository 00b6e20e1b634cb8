import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { PushRegistry } from './push-registry.ts';

/**
 * The HTTP ends of provider push, as Fastify plugins for the API server to mount:
 *
 *   gmailPushRoutes   Cloud Pub/Sub push (cloud.google.com/pubsub/docs/push): `{message:{data,
 *                     messageId, publishTime}, subscription}`, `data` the base64 of
 *                     `{emailAddress, historyId}` (Gmail guides/push). Any 2xx acks; anything else
 *                     is redelivered, so a notification for a mailbox no longer watched is acked
 *                     (204) and only an unreadable body is refused (400). With `verificationToken`
 *                     set, the push subscription's URL must carry `?token=<it>`.
 *   graphPushRoutes   Microsoft Graph change notifications: a POST with `?validationToken=…` is
 *                     the subscription handshake, answered 200 text/plain with the token within
 *                     10 s; otherwise `{value:[…]}` (change or lifecycle notifications), each item
 *                     checked against the clientState its watcher chose, answered 202 at once.
 *
 * Neither reads the historyId or the resource: push only triggers a pull from the stored cursor
 * (source.ts), so a forged, duplicated or stale notification costs one pull and nothing more.
 */
export interface GmailPushRouteOptions {
  registry: PushRegistry;
  /** Default '/push/gmail'. */
  path?: string;
  /** The shared secret in the push endpoint's URL (`?token=`), checked when set. */
  verificationToken?: string;
}

export interface GraphPushRouteOptions {
  registry: PushRegistry;
  /** Default '/push/graph'. */
  path?: string;
}

export const gmailPushRoutes: FastifyPluginAsync<GmailPushRouteOptions> = async (app, opts) => {
  app.post<{ Querystring: { token?: string } }>(opts.path ?? '/push/gmail', async (req, reply) => {
    if (opts.verificationToken !== undefined && !sameSecret(req.query.token, opts.verificationToken)) {
      return reply.code(403).send({ error: 'bad verification token' });
    }
    const note = readGmailPush(req.body);
    if (!note) return reply.code(400).send({ error: 'not a Pub/Sub push message with Gmail data' });
    opts.registry.gmailNotified(note.emailAddress);
    return reply.code(204).send();
  });
};

export const graphPushRoutes: FastifyPluginAsync<GraphPushRouteOptions> = async (app, opts) => {
  app.post<{ Querystring: { validationToken?: string } }>(opts.path ?? '/push/graph', async (req, reply) => {
    // Fastify has already URL-decoded the query, as the handshake wants the decoded token back.
    if (typeof req.query.validationToken === 'string') {
      return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send(req.query.validationToken);
    }
    const body = req.body as { value?: unknown } | undefined;
    if (!body || typeof body !== 'object' || !Array.isArray(body.value)) return reply.code(400).send({ error: 'not a Graph notification' });
    let refused = 0;
    for (const item of body.value as Array<Record<string, unknown>>) {
      if (!item || typeof item !== 'object') {
        refused++;
        continue;
      }
      const found = opts.registry.graphWatcher(item.clientState, item.subscriptionId);
      if (!found.ok) {
        refused++;
        continue;
      }
      if (typeof item.lifecycleEvent === 'string') found.watcher.lifecycle(item.lifecycleEvent, String(item.subscriptionId ?? ''));
      else found.watcher.changed();
    }
    // 202 even for refused items: a retry would not make a wrong clientState right.
    if (refused) req.log.warn({ refused }, 'Graph notification items with an unknown clientState or subscription ignored');
    return reply.code(202).send();
  });
};

function readGmailPush(body: unknown): { emailAddress: string; historyId: string | null } | null {
  const msg = (body as { message?: { data?: unknown } } | undefined)?.message;
  if (!msg || typeof msg !== 'object' || typeof msg.data !== 'string') return null;
  try {
    // Pub/Sub sends base64; Gmail's guide says base64url. Node's base64 decoder reads both.
    const j = JSON.parse(Buffer.from(msg.data, 'base64').toString('utf8')) as { emailAddress?: unknown; historyId?: unknown };
    if (typeof j.emailAddress !== 'string' || j.emailAddress === '') return null;
    const h = j.historyId;
    return { emailAddress: j.emailAddress, historyId: typeof h === 'string' || typeof h === 'number' ? String(h) : null };
  } catch {
    return null;
  }
}

function sameSecret(given: string | undefined, want: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}
