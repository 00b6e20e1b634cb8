import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../../common/clock.ts';
import type { EmulatorReply } from '../../server.ts';
import { channelEntity, eventMessage, type ChangeEventLog } from '../change-events.ts';
import { jsonBody } from '../context.ts';

/**
 * The Streaming API's CometD endpoint for Change Data Capture (Streaming API Developer Guide,
 * "Clients and Timeouts", "Message Durability"; Change Data Capture Developer Guide, "Subscribe
 * with CometD"): Bayeux 1.0 long polling, `POST /cometd/<version>` (e.g. /cometd/60.0) with a
 * JSON array of messages, authenticated by the session's `Authorization: Bearer` header.
 *
 *   /meta/handshake    → clientId, supportedConnectionTypes ['long-polling'], ext {replay: true}
 *   /meta/subscribe    subscription /data/ChangeEvents or /data/<Entity>ChangeEvent, replay from
 *                      ext.replay[channel]: a replay id (events after it), -1 (new only, the
 *                      default), -2 (all kept); an id the bus cannot resume after answers
 *                      `400::The replayId {x} you provided was invalid. …` (documented text)
 *   /meta/connect      the events waiting on the client's subscriptions, then the connect reply;
 *                      held while none wait, up to the advice timeout (Salesforce: 110 s; a
 *                      client's own `advice.timeout` is honoured as CometD servers do, unverified
 *                      for Salesforce), so a client can ask for an immediate answer (0)
 *   /meta/disconnect   ends the client
 *
 * Not counted against the REST API allocation (the Streaming API has its own event-delivery
 * allocation, not emulated). A client unknown or idle past 40 s answers `403::Unknown client`
 * with advice to handshake again (documented text; the 40 s is Salesforce's "Clients and
 * Timeouts" figure). A subscription to a channel the org does not serve (CDC not enabled, the
 * entity not selected) answers `400::The channel you requested to subscribe to does not exist
 * {channel}` (the text Salesforce gives for PushTopics; for CDC unverified).
 *
 * Route names for faults, by the first message's channel: `cometd.handshake`, `cometd.subscribe`,
 * `cometd.connect`, `cometd.disconnect`.
 */
export interface CometdRouteContext {
  bus: ChangeEventLog;
  clock: Clock;
  /** Events in one connect answer at most. */
  eventsPerConnect: number;
  /** True when this connect's events are to be sent twice (a duplicates fault). */
  takeDuplicate(): boolean;
  /** Outage, session (401), faults, then the handler; no API allocation. */
  run(route: string, req: FastifyRequest, reply: FastifyReply, handler: (userId: string) => EmulatorReply | Promise<EmulatorReply>): Promise<FastifyReply>;
}

const defaultTimeoutMs = 110_000;
const clientIdleMs = 40_000;

interface Client {
  userId: string;
  seenAt: number;
  /** Per channel: the replay id delivered last (events after it are due). */
  subs: Map<string, number>;
}

type Message = Record<string, any> & { channel?: unknown };

export function registerCometdRoutes(app: FastifyInstance, ctx: CometdRouteContext): void {
  const clients = new Map<string, Client>();

  app.post<{ Params: { version: string } }>('/cometd/:version', (req, reply) => {
    const body = jsonBody(req);
    const messages: Message[] = Array.isArray(body) ? body : body ? [body as Message] : [];
    const verb = String(messages[0]?.channel ?? '').replace(/^\/meta\//, '') || 'unknown';
    return ctx.run(`cometd.${verb}`, req, reply, async (userId) => {
      const m = /^(\d+)\.0$/.exec(req.params.version);
      // The versions the REST routes serve (context.ts): an unknown one is 404 there too.
      if (!m || Number(m[1]) < 46 || Number(m[1]) > 62) return { status: 404, body: [{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }] };
      if (messages.length === 0) return { status: 400, body: [{ successful: false, error: '400::Bad request: no Bayeux message' }] };
      const out: unknown[] = [];
      for (const msg of messages) out.push(...(await handle(msg, userId)));
      return { status: 200, body: out };
    });
  });

  async function handle(msg: Message, userId: string): Promise<unknown[]> {
    const channel = String(msg.channel ?? '');
    const id = msg.id === undefined ? {} : { id: msg.id };
    const now = ctx.clock.now();
    if (channel === '/meta/handshake') {
      const clientId = randomBytes(12).toString('base64url');
      clients.set(clientId, { userId, seenAt: now, subs: new Map() });
      return [{ channel, ...id, clientId, version: '1.0', minimumVersion: '1.0', successful: true, supportedConnectionTypes: ['long-polling'], advice: { interval: 0, timeout: defaultTimeoutMs, reconnect: 'retry' }, ext: { replay: true, 'payload.format': true } }];
    }
    const clientId = String(msg.clientId ?? '');
    const client = clients.get(clientId);
    if (!client || client.userId !== userId || now - client.seenAt > clientIdleMs) {
      clients.delete(clientId);
      return [{ channel, ...id, clientId, successful: false, error: '403::Unknown client', advice: { reconnect: 'handshake', interval: 0 } }];
    }
    client.seenAt = now;
    const reply = { channel, ...id, clientId };
    if (channel === '/meta/subscribe') {
      const sub = String(msg.subscription ?? '');
      if (!ctx.bus.enabled || channelEntity(sub) === undefined || (channelEntity(sub) !== null && !ctx.bus.entities.has(channelEntity(sub)!))) {
        return [{ ...reply, subscription: sub, successful: false, error: `400::The channel you requested to subscribe to does not exist {${sub}}` }];
      }
      const asked = msg.ext?.replay?.[sub];
      const replay = asked === undefined ? -1 : Number(asked);
      const start = ctx.bus.startAfter(replay);
      if (start === null) {
        return [{ ...reply, subscription: sub, successful: false, error: `400::The replayId {${String(asked)}} you provided was invalid. Please provide a valid ID, -2 to replay all events, or -1 to replay only new events.` }];
      }
      client.subs.set(sub, start);
      return [{ ...reply, subscription: sub, successful: true }];
    }
    if (channel === '/meta/connect') {
      const timeout = typeof msg.advice?.timeout === 'number' && msg.advice.timeout >= 0 ? Math.min(msg.advice.timeout, defaultTimeoutMs) : defaultTimeoutMs;
      let events = due(client);
      if (events.length === 0 && timeout > 0) {
        await Promise.race([ctx.bus.next(), ctx.clock.sleep(timeout)]);
        events = due(client);
      }
      const twice = events.length > 0 && ctx.takeDuplicate();
      const delivered = events.flatMap((e) => (twice ? [e, e] : [e]));
      return [...delivered, { ...reply, successful: true, advice: { interval: 0, timeout: defaultTimeoutMs, reconnect: 'retry' } }];
    }
    if (channel === '/meta/disconnect') {
      clients.delete(clientId);
      return [{ ...reply, successful: true }];
    }
    return [{ ...reply, successful: false, error: `400::Unknown channel {${channel}}` }];
  }

  /** The messages due on every subscription of `client` (at most eventsPerConnect), each subscription advanced past them. */
  function due(client: Client): unknown[] {
    const out: unknown[] = [];
    for (const [channel, position] of client.subs) {
      const events = ctx.bus.after(position, channel, ctx.eventsPerConnect - out.length);
      if (events.length) client.subs.set(channel, events[events.length - 1]!.replayId);
      out.push(...events.map((e) => eventMessage(e, channel)));
    }
    return out;
  }
}
