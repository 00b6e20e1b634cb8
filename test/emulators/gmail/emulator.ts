import { systemClock, type Clock } from '../../../src/common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { parseMessage } from '../mime.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { testTokenSource, TokenRegistry, type TestTokenSource } from '../tokens.ts';
import type { GmailRouteContext } from './context.ts';
import { gmailErrors } from './errors.ts';
import type { GmailMailbox, GmailStoredMessage } from './mailbox.ts';
import { registerMessageRoutes } from './routes/messages.ts';
import { GmailStore } from './store.ts';

/**
 * The Gmail API emulator (following what Google documents for the Gmail API): a real HTTP server serving
 * `/gmail/v1/users/{userId}/…` with the documented answers, in-memory mailboxes, and fault
 * injection. One per test file or test; close() it.
 *
 * Route groups, one file each under routes/, registered below; history.list and watch are the
 * next ones (the mailbox already keeps its history log).
 */
export interface GmailEmulatorOptions {
  /** Stamps internalDate; a SimClock makes them deterministic. */
  clock?: Clock;
  /** Mailboxes to create up front. */
  users?: string[];
}

export interface GmailEmulator {
  /** The base URL for the connector ('http://127.0.0.1:PORT'), in place of https://gmail.googleapis.com. */
  baseUrl: string;
  store: GmailStore;
  tokens: TokenRegistry;
  faults: FaultInjector;
  /** Every request, in order, with what it got. */
  requests: RequestRecord[];
  addUser(address: string): GmailMailbox;
  mailbox(address: string): GmailMailbox;
  /** A token source for `user` that issues a fresh token on refresh (see tokens.ts). */
  tokenSource(user: string, opts?: Parameters<typeof testTokenSource>[2]): TestTokenSource;
  /** Mail from outside (a prospect's reply) arriving in `to`'s INBOX. */
  deliver(to: string, raw: Buffer): Promise<GmailStoredMessage>;
  close(): Promise<void>;
}

export async function startGmailEmulator(opts: GmailEmulatorOptions = {}): Promise<GmailEmulator> {
  const store = new GmailStore(opts.clock ?? systemClock);
  for (const u of opts.users ?? []) store.addUser(u);
  const tokens = new TokenRegistry('ya29.emu');
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];

  const ctx: GmailRouteContext = {
    store,
    tokens,
    faults,
    log,
    run(route, req, reply, handler) {
      let mb: GmailMailbox | undefined;
      const guard = (): EmulatorReply | null => {
        const t = tokens.check(req.headers.authorization);
        if (!t.ok) return gmailErrors.authError();
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
    app.setNotFoundHandler((_req, reply) => reply.code(404).send(gmailErrors.notFound().body));
  });

  return {
    baseUrl: server.origin,
    store,
    tokens,
    faults,
    requests: log,
    addUser: (a) => store.addUser(a),
    mailbox(a) {
      const mb = store.mailbox(a);
      if (!mb) throw new Error(`gmail emulator: no mailbox ${a}`);
      return mb;
    },
    tokenSource: (user, o) => testTokenSource(tokens, user, o),
    async deliver(to, raw) {
      const mb = store.mailbox(to);
      if (!mb) throw new Error(`gmail emulator: no mailbox ${to}`);
      return store.deliver(mb, raw, await parseMessage(raw));
    },
    close: () => server.close(),
  };
}
