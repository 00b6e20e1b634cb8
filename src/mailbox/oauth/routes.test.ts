import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { login, seedWorkspace, type Browser } from '../../../test/api.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { addMembership } from '../../api/auth/accounts.ts';
import { createApiKey } from '../../api/auth/api-keys.ts';
import { hashPassword } from '../../api/auth/passwords.ts';
import { defaultAuthSettings } from '../../api/context.ts';
import { buildServer } from '../../api/server.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { consent } from '../../sim/emulators/oauth/browser.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { localKeyWrapper, Vault } from '../vault.ts';
import { OAuthClients } from './client.ts';
import { CredentialTaskRunner } from '../../sending/credential-tasks/task-runner.ts';

const publicUrl = 'https://cadenza.acme.test';
const client = { id: 'cadenza-web', secret: 'web-secret', redirectUris: [`${publicUrl}/oauth/callback`] };

describe.each(testBackends())('OAuth routes (/oauth/:provider/start, /oauth/callback) (%s)', (backend) => {
  let store: TestStore;
  let emu: OAuthEmulator;
  let app: FastifyInstance;
  let wsA: string;
  let wsB: string;
  let ownerA: Browser;
  let ownerB: Browser;
  /** A member of workspace A (and of nothing else). */
  let rep: Browser;
  let repUserId: string;
  let apiKey: string;
  let vault: Vault;
  let clients: OAuthClients;

  beforeAll(async () => {
    store = await freshStore(backend);
    const random = seededRandom(`oauth-routes-${backend}`);
    emu = await startOAuthEmulator({ flavour: 'google', clients: [client], users: [{ email: 'rep@acme.test' }, { email: 'boss@acme.test' }] });
    vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    clients = new OAuthClients({ google: { clientId: client.id, clientSecret: client.secret, discoveryBase: emu.issuer } });
    app = buildServer({
      store,
      clock: systemClock,
      version: 'test',
      api: { random, vault, publicUrl, ...defaultAuthSettings, oauth: { clients } },
      oauth: { store, vault, clients, clock: systemClock, random, publicUrl },
    });
    await app.ready();
    const a = await seedWorkspace(store, 'A', 'owner-a@acme.test');
    const b = await seedWorkspace(store, 'B', 'owner-b@acme.test');
    wsA = a.workspaceId;
    wsB = b.workspaceId;
    const accountId = newId(Date.now(), random);
    await store.db.insertInto('account').values({ id: accountId, email: 'rep@acme.test', name: 'rep', password_hash: await hashPassword('member password 1') }).execute();
    repUserId = await addMembership(store.db, { clock: systemClock, random }, { accountId, workspaceId: wsA, email: 'rep@acme.test', name: 'rep', role: 'member' });
    ownerA = await login(app, 'owner-a@acme.test', a.password);
    ownerB = await login(app, 'owner-b@acme.test', b.password);
    rep = await login(app, 'rep@acme.test', 'member password 1');
    apiKey = (await createApiKey(store.db, { clock: systemClock, random }, { workspaceId: wsA, name: 'script', role: 'admin', createdBy: null })).key;
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await emu?.close();
    await store?.destroy();
  });

  const start = (who: Browser | null, workspaceId: string, extra = '') =>
    app.inject({ method: 'GET', url: `/oauth/google/start?workspaceId=${workspaceId}&mode=imap${extra}`, headers: who ? { cookie: who.cookie } : {} });
  const callback = (who: Browser | null, search: string, accept?: string) =>
    app.inject({ method: 'GET', url: `/oauth/callback${search}`, headers: { ...(who ? { cookie: who.cookie } : {}), ...(accept ? { accept } : {}) } });

  it('start needs a signed-in person of that workspace: 401 without a session, 404 for another workspace, 403 for an API key', async () => {
    const anon = await start(null, wsA);
    expect(anon.statusCode).toBe(401);
    expect(anon.json()).toMatchObject({ error: 'UNAUTHENTICATED' });
    // A browser is sent back to the app with the reason rather than shown JSON.
    const page = await app.inject({ method: 'GET', url: `/oauth/google/start?workspaceId=${wsA}`, headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(303);
    expect(new URL(String(page.headers.location)).searchParams.get('oauthError')).toMatch(/sign in/);
    expect((await start(ownerB, wsA)).statusCode).toBe(404);
    expect((await start(rep, wsB)).statusCode).toBe(404);
    const key = await app.inject({ method: 'GET', url: `/oauth/google/start?workspaceId=${wsA}`, headers: { authorization: `Bearer ${apiKey}` } });
    expect(key.statusCode).toBe(403);
    expect((await start(rep, 'not-a-uuid')).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/oauth/google/start', headers: { cookie: rep.cookie } })).statusCode).toBe(400);
    expect(await store.db.selectFrom('oauth_flow').select('state').execute()).toEqual([]);
  });

  // Issue 11: without CADENZA_PUBLIC_URL the redirect URI was http://localhost:<port>, so a person
  // browsing the server by its address was sent to their own machine after consent.
  it('without a configured public URL, sends the provider back to the origin the browser used', async () => {
    const random = seededRandom(`oauth-origin-${backend}`);
    const clients = new OAuthClients({ google: { clientId: client.id, clientSecret: client.secret, discoveryBase: emu.issuer } });
    const byIp = buildServer({ store, clock: systemClock, version: 'test', api: { random, vault, publicUrl: 'http://localhost:8080', ...defaultAuthSettings, oauth: { clients } }, oauth: { store, vault, clients, clock: systemClock, random } });
    await byIp.ready();
    try {
      const s = await byIp.inject({ method: 'GET', url: `/oauth/google/start?workspaceId=${wsA}&mode=imap`, headers: { cookie: rep.cookie, host: '192.168.1.20:8080' } });
      expect(s.statusCode, s.body).toBe(302);
      expect(new URL(String(s.headers.location)).searchParams.get('redirect_uri')).toBe('http://192.168.1.20:8080/oauth/callback');
      const back = await byIp.inject({ method: 'GET', url: '/oauth/callback?error=access_denied&state=nope', headers: { accept: 'text/html', host: '192.168.1.20:8080' } });
      expect(String(back.headers.location)).toMatch(/^http:\/\/192\.168\.1\.20:8080\/mailboxes\?oauthError=/);
    } finally {
      await byIp.close();
      await store.db.deleteFrom('oauth_flow').execute();
    }
  });

  it("the flow is bound to the workspace, the person and the session: only that session completes it, and the mailbox is that person's", async () => {
    const s = await start(rep, wsA, '&email=rep%40acme.test');
    expect(s.statusCode).toBe(302);
    expect(s.headers['cache-control']).toBe('no-store');
    const location = new URL(String(s.headers.location));
    expect(location.origin).toBe(emu.origin);
    expect(location.searchParams.get('redirect_uri')).toBe(`${publicUrl}/oauth/callback`);
    expect(location.searchParams.get('scope')).toBe('openid email https://mail.google.com/');
    expect(location.searchParams.get('login_hint')).toBe('rep@acme.test');
    const flow = await store.db.selectFrom('oauth_flow').select(['workspace_id', 'user_id', 'session_hash']).where('state', '=', location.searchParams.get('state')!).executeTakeFirstOrThrow();
    expect(flow).toMatchObject({ workspace_id: wsA, user_id: repUserId });
    expect(flow.session_hash).toMatch(/^[0-9a-f]{64}$/);

    const back = await consent(location);
    expect(`${back.origin}${back.pathname}`).toBe(`${publicUrl}/oauth/callback`);
    // Someone else's browser (a forwarded link, login CSRF), signed out or signed in as another person: refused, flow kept.
    for (const other of [null, ownerA, ownerB]) {
      const r = await callback(other, back.search);
      expect(r.statusCode).toBe(403);
      expect(r.json()).toMatchObject({ error: 'FORBIDDEN', message: expect.stringContaining('another browser session') });
    }
    const cb = await callback(rep, back.search);
    expect(cb.statusCode).toBe(200);
    expect(cb.json()).toMatchObject({ email: 'rep@acme.test', workspaceId: wsA, provider: 'smtp_imap', mode: 'imap', created: true });
    expect(cb.body).not.toMatch(/emu-rt-|emu\.gmail|access_token|refresh/i);
    const mailbox = await store.db.selectFrom('mailbox').select(['workspace_id', 'user_id']).where('id', '=', cb.json().mailboxId).executeTakeFirstOrThrow();
    expect(mailbox).toEqual({ workspace_id: wsA, user_id: repUserId });

    const replay = await callback(rep, back.search);
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toMatchObject({ error: 'INVALID_INPUT' });
  });

  it('a browser is sent back to the Mailboxes screen with the connected address', async () => {
    const s = await start(ownerA, wsA, '&email=boss%40acme.test');
    const back = await consent(String(s.headers.location));
    const r = await callback(ownerA, back.search, 'text/html,application/xhtml+xml');
    expect(r.statusCode).toBe(303);
    const to = new URL(String(r.headers.location));
    expect(`${to.origin}${to.pathname}`).toBe(`${publicUrl}/mailboxes`);
    expect(to.searchParams.get('connected')).toBe('boss@acme.test');
  });

  it('answers bad requests with clear errors', async () => {
    expect((await app.inject({ method: 'GET', url: `/oauth/yahoo/start?workspaceId=${wsA}`, headers: { cookie: rep.cookie } })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: `/oauth/google/start?workspaceId=${wsA}&mode=pop3`, headers: { cookie: rep.cookie } })).statusCode).toBe(400);
    const ms = await app.inject({ method: 'GET', url: `/oauth/microsoft/start?workspaceId=${wsA}`, headers: { cookie: rep.cookie } });
    expect(ms.statusCode).toBe(503);
    expect(ms.json()).toMatchObject({ error: 'CONFIG_INVALID', message: expect.stringContaining('CADENZA_MICROSOFT_CLIENT_ID') });
    emu.denyNext();
    const s = await start(rep, wsA);
    const back = await consent(String(s.headers.location));
    const denied = await callback(rep, back.search);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ error: 'MAILBOX_AUTH_FAILED', message: expect.stringContaining('access_denied') });
  });

  it("removing an OAuth mailbox leaves its grant to the sender role, which revokes it at the provider, retrying one that does not answer; the removal never waits", async () => {
    const mailboxOf = async (email: string) => (await store.db.selectFrom('mailbox').select('id').where('workspace_id', '=', wsA).where('email', '=', email).executeTakeFirstOrThrow()).id;
    const repsMailbox = await mailboxOf('rep@acme.test');
    const grant = await vault.get(repsMailbox);
    if (grant?.kind !== 'oauth') throw new Error('expected an OAuth grant');
    expect(emu.introspect(grant.accessToken)).toBeDefined();
    const bossMailbox = await mailboxOf('boss@acme.test');
    const bossGrant = await vault.get(bossMailbox);
    if (bossGrant?.kind !== 'oauth') throw new Error('expected an OAuth grant');

    // No sender runs yet: both removals answer at once, the credentials erased, the revocations left as tasks.
    const removed = await rep.call('DELETE', `/api/workspaces/${wsA}/mailboxes/${repsMailbox}`);
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({ credentialErased: true, revocation: 'pending' });
    expect(await vault.get(repsMailbox)).toBeUndefined();
    expect(emu.introspect(grant.accessToken)).toBeDefined();
    // The provider fails the first revocation it is sent (the first task claimed: rep's, the older).
    emu.faults.inject('revoke', { kind: 'respond', status: 503, body: { error: 'backendError' } });
    const r = await ownerA.call('DELETE', `/api/workspaces/${wsA}/mailboxes/${bossMailbox}`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ credentialErased: true, revocation: 'pending' });
    const tasks = () => store.db.selectFrom('credential_task').select(['mailbox_id', 'state', 'attempts', 'sealed']).where('kind', '=', 'revoke').orderBy('created_at').execute();
    expect((await tasks()).map((t) => [t.mailbox_id, t.state, t.sealed !== null])).toEqual([[repsMailbox, 'queued', true], [bossMailbox, 'queued', true]]);

    // The sender role's runner (here in this process, one task at a time) carries them out.
    const done: string[] = [];
    let allDone!: () => void;
    const finished = new Promise<void>((resolve) => (allDone = resolve));
    const runner = new CredentialTaskRunner({
      store, clock: systemClock, random: seededRandom('revoke-runner'), vault, oauthClients: clients, owner: 'tasks:revoke-test', concurrency: 1,
      revocation: { baseMs: 50, capMs: 50, maxAttempts: 3 },
      onDone: (id) => {
        done.push(id);
        if (done.length === 2) allDone();
      },
    });
    await runner.start();
    try {
      await finished;
    } finally {
      await runner.stop();
    }
    expect(emu.faults.pending()).toBe(0);
    // Both grants are dead at the provider, the first after one retry; nothing sealed is kept.
    expect(emu.introspect(grant.accessToken)).toBeUndefined();
    expect(emu.introspect(bossGrant.accessToken)).toBeUndefined();
    const after = await store.db.selectFrom('credential_task').select(['mailbox_id', 'state', 'attempts', 'sealed', 'result']).where('kind', '=', 'revoke').orderBy('created_at').execute();
    expect(after.map((t) => [t.mailbox_id, t.state, t.attempts, t.sealed, t.result])).toEqual([
      [repsMailbox, 'done', 2, null, { ok: true, value: 'revoked' }],
      [bossMailbox, 'done', 1, null, { ok: true, value: 'revoked' }],
    ]);
  }, 30_000);
});
