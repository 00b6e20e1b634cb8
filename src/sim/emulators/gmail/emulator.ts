import { systemClock, type Clock } from '../../../common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { mailboxOf, mailEmulatorBase, type MailEmulatorBase } from '../mail-emulator.ts';
import { parseMessage } from '../mime.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { TokenRegistry } from '../tokens.ts';
import type { GmailRouteContext } from './context.ts';
import { gmailErrors } from './errors.ts';
import type { GmailMailbox, GmailStoredMessage } from './mailbox.ts';
import { PushDispatcher, type PushOptions } from '../push.ts';
import { PubSubEmulator } from './pubsub.ts';
import { registerHistoryRoutes } from './routes/history.ts';
import { registerMessageRoutes } from './routes/messages.ts';
import { registerWatchRoutes } from './routes/watch.ts';
import { GmailStore } from './store.ts';
import { GmailWatches } from './watch.ts';

/**
 * The Gmail API emulator (following what Google documents for the Gmail API): a real HTTP server serving
 * `/gmail/v1/users/{userId}/…` with the documented answers, in-memory mailboxes, and fault
 * injection. One per test file or test; close() it.
 *
 * Route groups, one file each under routes/, registered below: messages (send, list, get, modify),
 * history (history.list, getProfile), watch (watch, stop). Push goes out through the Pub/Sub
 * emulator (pubsub.ts) to endpoints a test registers, with faults from `push` (push.ts).
 */
export interface GmailEmulatorOptions {
  /** Stamps internalDate; a SimClock makes them deterministic. */
  clock?: Clock;
  /** Mailboxes to create up front. */
  users?: string[];
  /** History older than this is pruned, so an old startHistoryId gets a 404 (default: kept forever). */
  historyRetentionMs?: number;
  /** At most one push per user per this many ms; the excess is dropped (documented: 1/s; default 1000). */
  pushMinIntervalMs?: number;
  push?: PushOptions;
}

export interface GmailEmulator extends MailEmulatorBase<GmailStore, GmailMailbox> {
  /** The base URL for the connector ('http://127.0.0.1:PORT'), in place of https://gmail.googleapis.com. */
  baseUrl: string;
  /** Pub/Sub: a test creates the topic and the push subscription pointing at its endpoint. */
  pubsub: PubSubEmulator;
  /** Outgoing push: faults (drop, duplicate, delay), the log, and idle() to wait for deliveries. */
  push: PushDispatcher;
  /**
   * Mail from outside (a prospect's reply) arriving in `to`'s INBOX, or SPAM with `spam`, threaded
   * by its References/In-Reply-To as Gmail does; `internalDate` back-dates it.
   */
  deliver(to: string, raw: Buffer, opts?: { spam?: boolean; internalDate?: number }): Promise<GmailStoredMessage>;
  /** Forgets `user`'s history: a stored historyId older than the current one now gets a 404. */
  expireHistory(user: string): void;
  close(): Promise<void>;
}

export async function startGmailEmulator(opts: GmailEmulatorOptions = {}): Promise<GmailEmulator> {
  const clock = opts.clock ?? systemClock;
  const store = new GmailStore(clock);
  const push = new PushDispatcher(opts.push);
  const pubsub = new PubSubEmulator(push, clock);
  const watches = new GmailWatches(pubsub, clock, opts.pushMinIntervalMs ?? 1000);
  store.onNewMailbox.push((mb) => watches.attach(mb));
  for (const u of opts.users ?? []) store.addUser(u);
  const tokens = new TokenRegistry('ya29.emu');
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];

  const ctx: GmailRouteContext = {
    store,
    tokens,
    faults,
    log,
    run(route, req, reply, handler, scopes) {
      let mb: GmailMailbox | undefined;
      const guard = (): EmulatorReply | null => {
        const t = tokens.check(req.headers.authorization);
        if (!t.ok) return gmailErrors.authError();
        if (scopes && !tokens.allows(req.headers.authorization, scopes)) return gmailErrors.insufficientPermissions();
        const who = req.params.userId.toLowerCase();
        if (who !== 'me' && who !== t.user) return gmailErrors.delegationDenied(req.params.userId);
        mb = store.mailbox(t.user);
        // A token for an account without Gmail: Google answers 400 failedPrecondition.
        if (!mb) return gmailErrors.mailServiceNotEnabled();
        return null;
      };
      return runRoute({ faults, log }, route, req, reply, guard, () => handler(mb!));
    },
  };

  const server = await startEmulatorServer((app) => {
    registerMessageRoutes(app, ctx);
    registerHistoryRoutes(app, { ...ctx, historyRetentionMs: opts.historyRetentionMs ?? null });
    registerWatchRoutes(app, { ...ctx, watches, pubsub });
    app.setNotFoundHandler((_req, reply) => reply.code(404).send(gmailErrors.notFound().body));
  });

  return {
    ...mailEmulatorBase('gmail', { baseUrl: server.origin, store, tokens, faults, log }),
    pubsub,
    push,
    async deliver(to, raw, o) {
      return store.deliver(mailboxOf('gmail', store, to), raw, await parseMessage(raw), o);
    },
    expireHistory(user) {
      mailboxOf('gmail', store, user).expireHistory();
    },
    async close() {
      await push.close();
      await server.close();
    },
  };
}
