import { systemClock, type Clock } from '../../../common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { mailboxOf, mailEmulatorBase, type MailEmulatorBase } from '../mail-emulator.ts';
import { parseMessage } from '../mime.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { TokenRegistry } from '../tokens.ts';
import type { GraphRouteContext } from './context.ts';
import { graphErrors } from './errors.ts';
import type { GraphMailbox, GraphStoredMessage } from './mailbox.ts';
import { PushDispatcher, type PushOptions } from '../push.ts';
import { registerDeltaRoutes } from './routes/delta.ts';
import { registerMessageRoutes } from './routes/messages.ts';
import { registerSendMailRoutes } from './routes/send-mail.ts';
import { registerSubscriptionRoutes } from './routes/subscriptions.ts';
import { GraphStore } from './store.ts';
import { GraphSubscriptions } from './subscriptions.ts';

/**
 * The Microsoft Graph mail emulator (following what Microsoft documents for Graph mail): a
 * real HTTP server serving `/v1.0/me/…` and `/v1.0/users/{id|upn}/…` with the documented answers,
 * in-memory mailboxes, the delayed Sent copy after a 202, and fault injection. One per test file
 * or test; close() it.
 *
 * Route groups, one file each under routes/, registered under both prefixes below: sendMail,
 * messages (list, get, $value), delta; subscriptions at the service root. Change notifications go
 * out through `push` (push.ts) with its faults.
 */
export interface GraphEmulatorOptions {
  /** Drives the Sent Items delay and the timestamps; a SimClock makes both deterministic. */
  clock?: Clock;
  users?: string[];
  /** How long after sendMail's 202 the Sent copy appears (default 0: at once). */
  sentItemsDelayMs?: number;
  /** Delta tokens older than this are evicted (default: never; expireDeltaTokens() evicts at once). */
  deltaTokenTtlMs?: number;
  /** Longest subscription lifetime (default 4,230 minutes, the documented table's value for messages). */
  subscriptionMaxLifetimeMs?: number;
  /** How long the notification URL has to answer the validation request (documented: 10 s). */
  validationTimeoutMs?: number;
  push?: PushOptions;
}

export interface GraphEmulator extends MailEmulatorBase<GraphStore, GraphMailbox> {
  /** The base URL for the connector ('http://127.0.0.1:PORT/v1.0'), in place of https://graph.microsoft.com/v1.0. */
  baseUrl: string;
  /** The mailbox, with pending submissions settled at the emulator's current time. */
  mailbox(address: string): GraphMailbox;
  setSentItemsDelay(ms: number): void;
  /** The next sendMail answers 202 but its submission never completes (it stays a draft). */
  loseNextSend(): void;
  /** Mail from outside arriving in `to`'s Inbox, or Junk Email; `receivedAt` back-dates it. */
  deliver(to: string, raw: Buffer, opts?: { folder?: 'inbox' | 'junkemail'; receivedAt?: number }): Promise<GraphStoredMessage>;
  /**
   * Evicts every delta token of `user` issued so far: replaying one is answered 410 Gone with
   * `code` (default syncStateNotFound).
   */
  expireDeltaTokens(user: string, code?: 'syncStateNotFound' | 'resyncRequired'): void;
  /** Subscriptions, and `lifecycle(id, event)` to send a lifecycle notification. */
  subscriptions: GraphSubscriptions;
  /** Outgoing notifications: faults (drop, duplicate, delay), the log, idle(). */
  push: PushDispatcher;
  close(): Promise<void>;
}

export async function startGraphEmulator(opts: GraphEmulatorOptions = {}): Promise<GraphEmulator> {
  const clock = opts.clock ?? systemClock;
  const store = new GraphStore(clock);
  store.sentItemsDelayMs = opts.sentItemsDelayMs ?? 0;
  const push = new PushDispatcher(opts.push);
  const subscriptions = new GraphSubscriptions(push, clock, {
    maxLifetimeMs: opts.subscriptionMaxLifetimeMs ?? 4230 * 60_000,
    validationTimeoutMs: opts.validationTimeoutMs ?? 10_000,
  });
  store.onNewMailbox.push((mb) => subscriptions.attach(mb));
  for (const u of opts.users ?? []) store.addUser(u);
  const tokens = new TokenRegistry('eyJ0eXAi.emu');
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];
  let lose = 0;
  let requestSeq = 0;

  // Every answer carries a request id, in the header and in an error's innerError (concepts/errors.md).
  const decorate = (r: EmulatorReply): EmulatorReply => {
    // UUID-shaped and counted, so a run is the same every time.
    const requestId = `00000000-0000-4000-8000-${(++requestSeq).toString(16).padStart(12, '0')}`;
    const headers = { ...r.headers, 'request-id': requestId, 'client-request-id': requestId };
    const body = r.body as { error?: Record<string, unknown> } | undefined;
    if (body && typeof body === 'object' && !Buffer.isBuffer(body) && body.error && typeof body.error === 'object') {
      const inner = (body.error.innerError as Record<string, unknown> | undefined) ?? {};
      const date = new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, '');
      const innerError = { ...inner, date, 'request-id': requestId, 'client-request-id': requestId };
      return { ...r, headers, body: { error: { ...body.error, innerError } } };
    }
    return { ...r, headers };
  };

  const ctx: GraphRouteContext = {
    store,
    tokens,
    faults,
    log,
    takeLost: () => (lose > 0 ? (lose--, true) : false),
    run(route, req, reply, handler, scopes) {
      let mb: GraphMailbox | undefined;
      const guard = (): EmulatorReply | null => {
        const t = tokens.check(req.headers.authorization);
        if (!t.ok) {
          const why = {
            missing: 'Access token is empty.',
            expired: 'Lifetime validation failed, the token is expired.',
            unknown: 'IDX14100: JWT is not well formed.',
          }[t.why];
          return graphErrors.invalidAuthenticationToken(why);
        }
        if (scopes && !tokens.allows(req.headers.authorization, scopes)) return graphErrors.accessDenied();
        const who = req.params.user?.toLowerCase();
        if (who !== undefined && who !== t.user) return graphErrors.accessDenied();
        mb = store.mailbox(t.user);
        if (!mb) return graphErrors.mailboxNotEnabled();
        store.settle();
        return null;
      };
      return runRoute({ faults, log }, route, req, reply, guard, () => handler(mb!), decorate);
    },
  };

  const server = await startEmulatorServer(async (app) => {
    for (const prefix of ['/v1.0/me', '/v1.0/users/:user']) {
      await app.register(
        async (scoped) => {
          registerSendMailRoutes(scoped, ctx);
          registerMessageRoutes(scoped, ctx);
          registerDeltaRoutes(scoped, { ...ctx, deltaTokenTtlMs: opts.deltaTokenTtlMs ?? null });
        },
        { prefix },
      );
    }
    registerSubscriptionRoutes(app, { ...ctx, subscriptions });
    app.setNotFoundHandler((_req, reply) =>
      reply.code(400).send({ error: { code: 'BadRequest', message: 'Resource not found for the segment.' } }),
    );
  });

  return {
    ...mailEmulatorBase('graph', { baseUrl: `${server.origin}/v1.0`, store, tokens, faults, log }),
    mailbox(a) {
      const mb = mailboxOf('graph', store, a);
      store.settle();
      return mb;
    },
    setSentItemsDelay(ms) {
      store.sentItemsDelayMs = ms;
    },
    loseNextSend() {
      lose++;
    },
    async deliver(to, raw, o) {
      return store.deliver(mailboxOf('graph', store, to), raw, await parseMessage(raw), o);
    },
    expireDeltaTokens(user, code = 'syncStateNotFound') {
      const mb = mailboxOf('graph', store, user);
      mb.deltaGeneration++;
      mb.deltaExpiryCode = code;
    },
    subscriptions,
    push,
    async close() {
      await push.close();
      await server.close();
    },
  };
}
