import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { ensureDefaultWorkspace } from '../../workspace/workspaces.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { startGmailEmulator, type GmailEmulator } from '../../sim/emulators/gmail/emulator.ts';
import { startGraphEmulator, type GraphEmulator } from '../../sim/emulators/graph/emulator.ts';
import { rawMessage } from '../../sim/emulators/messages.ts';
import { connectThroughEmulator } from '../../sim/emulators/oauth/connect.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { parseMailboxSettings } from '../settings.ts';
import { localKeyWrapper, Vault } from '../vault.ts';
import { OAuthClients } from '../oauth/client.ts';
import type { OAuthFlowDeps } from '../oauth/flow.ts';
import { MailboxTokens } from '../oauth/mailbox-tokens.ts';
import type { ConnectorSetup, MailboxConnector, MailboxRow } from './connector.ts';
import { buildConnector } from './registry.ts';

/**
 * The connectors get their tokens from MailboxTokens, end to end: OAuth emulator → vault → the
 * process's token source (as app.ts sets it up) → Gmail API / Graph / SMTP XOAUTH2, for sending
 * and syncing alike.
 */
const client = { id: 'cadenza-test', secret: 'client-secret-1', redirectUris: ['http://127.0.0.1/oauth/callback'] };
const REP = 'rep@acme.test';
const PROSPECT = 'dana@prospect.test';
const master = randomBytes(32);
let seq = 0;

function message(from = REP) {
  const messageId = `<oauth-${++seq}@acme.test>`;
  return { raw: rawMessage({ from: `Rep <${from}>`, to: [PROSPECT], subject: 'Quick question', messageId }), messageId };
}

describe('OAuth mailboxes: connectors use MailboxTokens', () => {
  let store: TestStore;
  let workspaceId: string;
  const random = seededRandom(21);
  let clock: SimClock;
  let oauthEmu: OAuthEmulator;
  let deps: OAuthFlowDeps;
  let tokens: MailboxTokens;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    store = await freshStore('pglite');
    workspaceId = await ensureDefaultWorkspace(store, { clock: new SimClock(Date.now()), random });
  });
  afterAll(async () => {
    await store?.destroy();
  });
  beforeEach(async () => {
    await store.db.deleteFrom('mailbox').execute();
  });
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });

  async function setup(flavour: 'google' | 'microsoft', registries: Parameters<typeof startOAuthEmulator>[0]['registries'], mode: 'api' | 'imap') {
    clock = new SimClock(Date.now());
    oauthEmu = await startOAuthEmulator({ flavour, clock, clients: [client], users: [{ email: REP }], registries });
    closers.push(() => oauthEmu.close());
    const vault = new Vault(store, localKeyWrapper(master));
    const settings = { clientId: client.id, clientSecret: client.secret, discoveryBase: oauthEmu.origin, ...(flavour === 'microsoft' ? { tenant: 'common' } : {}) };
    deps = { store, vault, clock, random, clients: new OAuthClients({ [flavour]: settings }, { clock }) };
    tokens = new MailboxTokens({ store, vault, clients: deps.clients, clock, random });
    const c = await connectThroughEmulator(deps, { workspaceId, provider: flavour, mode });
    return c.mailboxId;
  }

  async function mailboxRow(id: string): Promise<MailboxRow> {
    const r = await store.db.selectFrom('mailbox').select(['id', 'email', 'provider', 'settings']).where('id', '=', id).executeTakeFirstOrThrow();
    return r;
  }

  async function transportOf(id: string, baseUrls: { gmail?: string; graph?: string }): Promise<MailboxConnector> {
    const setup: ConnectorSetup = { tokens: (m) => tokens.forMailbox(m.id), baseUrls };
    const t = await buildConnector(await mailboxRow(id), { vault: deps.vault, clock, random, setup });
    closers.push(() => t.close());
    return t;
  }

  it('Gmail API: sends with the granted token, refreshes ahead of expiry without a 401, recovers from a refused token once, and a revoked grant pauses the mailbox', async () => {
    const gmail: GmailEmulator = await startGmailEmulator({ users: [REP, PROSPECT], clock });
    closers.push(() => gmail.close());
    const id = await setup('google', { gmail: gmail.tokens }, 'api');
    const t = await transportOf(id, { gmail: gmail.baseUrl });
    const send = () => {
      const m = message();
      return t.send(m.raw, { from: REP, to: [PROSPECT] }, { messageId: m.messageId });
    };
    const sendOutcomes = () => gmail.requests.filter((r) => r.route === 'messages.send').map((r) => r.outcome);

    expect((await send()).kind).toBe('accepted');
    expect(oauthEmu.tokenRequests('refresh_token')).toBe(0);

    // An hour later the granted token has expired at Google; Cadenza refreshed before using it.
    clock.advance(3600_000);
    expect((await send()).kind).toBe('accepted');
    expect(oauthEmu.tokenRequests('refresh_token')).toBe(1);
    expect(sendOutcomes()).toEqual([200, 200]);

    // Google drops the access token early (a password change): one 401, one refresh, sent.
    const current = await tokens.accessToken(id);
    clock.advance(60_000);
    gmail.tokens.expire(current);
    expect((await send()).kind).toBe('accepted');
    expect(sendOutcomes()).toEqual([200, 200, 401, 200]);
    expect(oauthEmu.tokenRequests('refresh_token')).toBe(2);

    // The user removes Cadenza from their Google account.
    oauthEmu.revokeUser(REP);
    clock.advance(60_000);
    const refused = await send();
    expect(refused).toMatchObject({ kind: 'auth_failed' });
    expect(await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', id).executeTakeFirstOrThrow()).toEqual({
      health: 'paused',
      health_reason: 'Google access was revoked or expired; reconnect the mailbox',
    });
    const asked = oauthEmu.tokenRequests('refresh_token');
    for (let i = 0; i < 5; i++) expect((await send()).kind).toBe('auth_failed');
    expect(oauthEmu.tokenRequests('refresh_token')).toBe(asked);
  });

  it('Graph: the sync part and the sending part share the token provider (Microsoft rotation kept)', async () => {
    const graph: GraphEmulator = await startGraphEmulator({ users: [REP, PROSPECT], clock });
    closers.push(() => graph.close());
    const id = await setup('microsoft', { graph: graph.tokens }, 'api');
    expect((await mailboxRow(id)).provider).toBe('graph');
    const t = await transportOf(id, { graph: graph.baseUrl });
    const m = message();
    expect((await t.send(m.raw, { from: REP, to: [PROSPECT] }, { messageId: m.messageId })).kind).toBe('accepted');

    const rtBefore = ((await deps.vault.get(id)) as { refreshToken: string }).refreshToken;
    clock.advance(3600_000);
    // The same connector syncs: one object per mailbox, one token provider behind its parts.
    const it = t.pull(null)[Symbol.asyncIterator]();
    const first = await it.next();
    await it.return?.();
    expect(first.done).toBe(false);
    expect(oauthEmu.tokenRequests('refresh_token')).toBe(1);
    expect(((await deps.vault.get(id)) as { refreshToken: string }).refreshToken).not.toBe(rtBefore);
    expect(graph.requests.every((r) => r.outcome !== 401)).toBe(true);
  });

  it('SMTP with XOAUTH2: the server checks the token with the provider; a refused token is refreshed once', async () => {
    const id = await setup('google', {}, 'imap');
    const seen: Array<{ user: string; ok: boolean }> = [];
    const received: string[] = [];
    const srv = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['XOAUTH2'],
      closeTimeout: 50,
      onAuth(auth, _s, cb) {
        // What Gmail's SMTP does: the token must be live and carry https://mail.google.com/ for this user.
        const at = oauthEmu.introspect(auth.accessToken ?? '', 'google-imap');
        const ok = !!at && at.user.email === auth.username;
        seen.push({ user: auth.username ?? '', ok });
        if (ok) return cb(null, { user: auth.username });
        cb(null, { data: { status: '401', schemes: 'bearer', scope: 'https://mail.google.com/' } });
      },
      onData(stream, session, cb) {
        stream.on('data', () => undefined);
        stream.on('end', () => {
          received.push(String(session.user));
          cb(null, 'Ok: queued');
        });
      },
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
    closers.push(() => new Promise<void>((resolve) => srv.close(() => resolve())));
    const port = (srv.server.address() as AddressInfo).port;

    const row = await store.db.selectFrom('mailbox').select(['settings', 'provider']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.provider).toBe('smtp_imap');
    const settings = parseMailboxSettings(row.settings);
    expect(settings.smtp).toMatchObject({ host: 'smtp.gmail.com', port: 465, security: 'tls' });
    // Point it at the local server instead of smtp.gmail.com.
    await store.db
      .updateTable('mailbox')
      .set({ settings: JSON.stringify({ ...settings, smtp: { host: '127.0.0.1', port, security: 'none', allowSelfSigned: false } }) })
      .where('id', '=', id)
      .execute();
    const t = await transportOf(id, {});

    const m1 = message();
    expect(await t.send(m1.raw, { from: REP, to: [PROSPECT] }, { messageId: m1.messageId })).toMatchObject({ kind: 'accepted' });
    expect(seen).toEqual([{ user: REP, ok: true }]);

    // The provider drops the access token early: refused once, refreshed, accepted.
    const current = await tokens.accessToken(id);
    oauthEmu.grants.accessTokens.get(current)!.revoked = true;
    clock.advance(60_000);
    const m2 = message();
    expect(await t.send(m2.raw, { from: REP, to: [PROSPECT] }, { messageId: m2.messageId })).toMatchObject({ kind: 'accepted' });
    expect(seen.slice(1)).toEqual([
      { user: REP, ok: false },
      { user: REP, ok: true },
    ]);
    expect(oauthEmu.tokenRequests('refresh_token')).toBe(1);
    expect(received).toEqual([REP, REP]);
  });
});
