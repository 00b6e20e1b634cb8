import { systemClock, type Clock } from '../../../src/common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { parseMessage } from '../mime.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { testTokenSource, TokenRegistry, type TestTokenSource } from '../tokens.ts';
import type { GraphRouteContext } from './context.ts';
import { graphErrors } from './errors.ts';
import type { GraphMailbox, GraphStoredMessage } from './mailbox.ts';
import { registerMessageRoutes } from './routes/messages.ts';
import { registerSendMailRoutes } from './routes/send-mail.ts';
import { GraphStore } from './store.ts';

/**
 * The Microsoft Graph mail emulator (following what Microsoft documents for Graph mail): a
 * real HTTP server serving `/v1.0/me/…` and `/v1.0/users/{id|upn}/…` with the documented answers,
 * in-memory mailboxes, the delayed Sent copy after a 202, and fault injection. One per test file
 * or test; close() it.
 *
 * Route groups, one file each under routes/, registered under both prefixes below; delta queries
 * and subscriptions are the next ones.
 */
export interface GraphEmulatorOptions {
  /** Drives the Sent Items delay and the timestamps; a SimClock makes both deterministic. */
  clock?: Clock;
  users?: string[];
  /** How long after sendMail's 202 the Sent copy appears (default 0: at once). */
  sentItemsDelayMs?: number;
}

export interface GraphEmulator {
  /** The base URL for the connector ('http://127.0.0.1:PORT/v1.0'), in place of https://graph.microsoft.com/v1.0. */
  baseUrl: string;
  store: GraphStore;
  tokens: TokenRegistry;
  faults: FaultInjector;
  requests: RequestRecord[];
  addUser(address: string): GraphMailbox;
  /** The mailbox, with pending submissions settled at the emulator's current time. */
  mailbox(address: string): GraphMailbox;
  setSentItemsDelay(ms: number): void;
  /** The next sendMail answers 202 but its submission never completes (it stays a draft). */
  loseNextSend(): void;
  tokenSource(user: string, opts?: Parameters<typeof testTokenSource>[2]): TestTokenSource;
  deliver(to: string, raw: Buffer): Promise<GraphStoredMessage>;
  close(): Promise<void>;
}

export async function startGraphEmulator(opts: GraphEmulatorOptions = {}): Promise<GraphEmulator> {
  const clock = opts.clock ?? systemClock;
  const store = new GraphStore(clock);
  store.sentItemsDelayMs = opts.sentItemsDelayMs ?? 0;
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
    run(route, req, reply, handler) {
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
        },
        { prefix },
      );
    }
    app.setNotFoundHandler((_req, reply) =>
      reply.code(400).send({ error: { code: 'BadRequest', message: 'Resource not found for the segment.' } }),
    );
  });

  return {
    baseUrl: `${server.origin}/v1.0`,
    store,
    tokens,
    faults,
    requests: log,
    addUser: (a) => store.addUser(a),
    mailbox(a) {
      const mb = store.mailbox(a);
      if (!mb) throw new Error(`graph emulator: no mailbox ${a}`);
      store.settle();
      return mb;
    },
    setSentItemsDelay(ms) {
      store.sentItemsDelayMs = ms;
    },
    loseNextSend() {
      lose++;
    },
    tokenSource: (user, o) => testTokenSource(tokens, user, o),
    async deliver(to, raw) {
      const mb = store.mailbox(to);
      if (!mb) throw new Error(`graph emulator: no mailbox ${to}`);
      return store.deliver(mb, raw, await parseMessage(raw));
    },
    close: () => server.close(),
  };
}
