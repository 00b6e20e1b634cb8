import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { ensureDefaultWorkspace } from '../../workspace/workspaces.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { consent } from '../../sim/emulators/oauth/browser.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { parseMailboxSettings } from '../settings.ts';
import { localKeyWrapper, Vault } from '../vault.ts';
import { OAuthClients } from './client.ts';
import { completeAuthorization, startAuthorization, type OAuthFlowDeps } from './flow.ts';

const redirectUri = 'http://127.0.0.1:8080/oauth/callback';
const client = { id: 'cadenza-test', secret: 'client-secret-1', redirectUris: [redirectUri] };

function rejectsWith(code: string, pattern: RegExp) {
  return (e: unknown) => isCadenzaError(e) && e.code === code && pattern.test(e.message);
}

describe.each(testBackends())('OAuth connection flow on %s', (backend) => {
  let store: TestStore;
  let googleEmu: OAuthEmulator;
  let msEmu: OAuthEmulator;
  let workspaceId: string;
  let deps: OAuthFlowDeps;

  beforeAll(async () => {
    store = await freshStore(backend);
    const random = seededRandom(7);
    workspaceId = await ensureDefaultWorkspace(store, { clock: systemClock, random });
    googleEmu = await startOAuthEmulator({ flavour: 'google', clients: [client], users: [{ email: 'rep@acme.test' }, { email: 'other@acme.test' }] });
    msEmu = await startOAuthEmulator({ flavour: 'microsoft', clients: [client], users: [{ email: 'Rep@Contoso.test' }], tenantId: '4a1b2c3d-0000-4000-8000-00000000c0de' });
    deps = {
      store,
      vault: new Vault(store, localKeyWrapper(randomBytes(32))),
      clients: new OAuthClients({
        google: { clientId: client.id, clientSecret: client.secret, discoveryBase: googleEmu.issuer },
        microsoft: { clientId: client.id, clientSecret: client.secret, tenant: 'common', discoveryBase: msEmu.origin },
      }),
      clock: systemClock,
      random,
    };
  });
  afterAll(async () => {
    await googleEmu?.close();
    await msEmu?.close();
    await store?.destroy();
  });

  it('connects a Gmail API mailbox: PKCE S256, narrow scopes, tokens sealed in the vault', async () => {
    const started = await startAuthorization(deps, { workspaceId, provider: 'google', mode: 'api', redirectUri, loginHint: 'rep@acme.test' });
    const p = started.url.searchParams;
    expect(p.get('code_challenge_method')).toBe('S256');
    expect(p.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.get('access_type')).toBe('offline');
    expect(p.get('scope')!.split(' ').sort()).toEqual(['email', 'https://www.googleapis.com/auth/gmail.modify', 'https://www.googleapis.com/auth/gmail.send', 'openid']);
    // The verifier never leaves the server.
    const flow = await store.db.selectFrom('oauth_flow').selectAll().where('state', '=', started.state).executeTakeFirstOrThrow();
    expect(started.url.href).not.toContain(flow.code_verifier);

    const callback = await consent(started.url);
    const done = await completeAuthorization(deps, callback.searchParams);
    expect(done).toMatchObject({ email: 'rep@acme.test', provider: 'gmail', oauthProvider: 'google', mode: 'api', created: true });

    const mb = await store.db.selectFrom('mailbox').selectAll().where('id', '=', done.mailboxId).executeTakeFirstOrThrow();
    expect(mb).toMatchObject({ provider: 'gmail', workspace_id: workspaceId, health: 'ok' });
    expect(parseMailboxSettings(mb.settings).oauth).toEqual({ provider: 'google', mode: 'api' });
    const cred = await deps.vault.get(done.mailboxId);
    expect(cred).toMatchObject({ kind: 'oauth', accessToken: expect.stringMatching(/^emu\.gmail\./), refreshToken: expect.stringMatching(/^emu-rt-/) });
    if (cred?.kind !== 'oauth') throw new Error('unreachable');
    // The emulator accepts what was stored for the Gmail API.
    expect(googleEmu.registry('gmail').check(`Bearer ${cred.accessToken}`)).toEqual({ ok: true, user: 'rep@acme.test' });

    // Nothing in the database reads as a token.
    const dump = await sql<{ t: string | null }>`select string_agg(encode(ciphertext, 'escape'), '') as t from mailbox_credential`.execute(store.db);
    expect(dump.rows[0]!.t).not.toContain(cred.accessToken);
    expect(dump.rows[0]!.t).not.toContain(cred.refreshToken!);
    expect(JSON.stringify(mb)).not.toContain(cred.refreshToken!);

    // The same callback again (a replay, a double click): refused, and nothing is issued.
    const before = googleEmu.tokenRequests();
    await expect(completeAuthorization(deps, callback.searchParams)).rejects.toSatisfy(rejectsWith('INVALID_INPUT', /already completed/));
    expect(googleEmu.tokenRequests()).toBe(before);
  });

  it('refuses a code redeemed with another PKCE verifier', async () => {
    const started = await startAuthorization(deps, { workspaceId, provider: 'google', mode: 'api', redirectUri, loginHint: 'other@acme.test' });
    const callback = await consent(started.url);
    // An attacker who intercepted the code cannot know the verifier; model it by changing ours.
    await store.db.updateTable('oauth_flow').set({ code_verifier: 'x'.repeat(64) }).where('state', '=', started.state).execute();
    await expect(completeAuthorization(deps, callback.searchParams)).rejects.toSatisfy(rejectsWith('MAILBOX_AUTH_FAILED', /refused the authorization code \(invalid_grant\)/));
    const n = await store.db.selectFrom('mailbox').select('id').where('email', '=', 'other@acme.test').execute();
    expect(n).toHaveLength(0);
  });

  it('refuses unknown, expired and declined sign-ins', async () => {
    await expect(completeAuthorization(deps, new URLSearchParams({ code: 'x', state: 'never-issued' }))).rejects.toSatisfy(rejectsWith('INVALID_INPUT', /unknown/));
    await expect(completeAuthorization(deps, new URLSearchParams({ code: 'x' }))).rejects.toSatisfy(rejectsWith('INVALID_INPUT', /no state/));

    const old = await startAuthorization({ ...deps, flowTtlMs: 1 }, { workspaceId, provider: 'google', mode: 'api', redirectUri });
    const late = await consent(old.url);
    await new Promise((r) => setTimeout(r, 5));
    await expect(completeAuthorization(deps, late.searchParams)).rejects.toSatisfy(rejectsWith('INVALID_INPUT', /expired/));

    googleEmu.denyNext();
    const denied = await startAuthorization(deps, { workspaceId, provider: 'google', mode: 'api', redirectUri });
    const cb = await consent(denied.url);
    expect(cb.searchParams.get('error')).toBe('access_denied');
    await expect(completeAuthorization(deps, cb.searchParams)).rejects.toSatisfy(rejectsWith('MAILBOX_AUTH_FAILED', /did not grant access \(access_denied/));

    // The user unticks "send email on your behalf" on Google's consent screen.
    googleEmu.grantOnlyNext(['openid', 'email', 'https://www.googleapis.com/auth/gmail.modify']);
    const partial = await startAuthorization(deps, { workspaceId, provider: 'google', mode: 'api', redirectUri, loginHint: 'other@acme.test' });
    await expect(completeAuthorization(deps, (await consent(partial.url)).searchParams)).rejects.toSatisfy(
      rejectsWith('MAILBOX_AUTH_FAILED', /granted less than Cadenza needs \(missing https:\/\/www\.googleapis\.com\/auth\/gmail\.send\)/),
    );
    expect(await store.db.selectFrom('mailbox').select('id').where('email', '=', 'other@acme.test').execute()).toHaveLength(0);
  });

  it('connects a Microsoft account over IMAP/SMTP (multi-tenant issuer), and a reconnect resumes the paused mailbox', async () => {
    const started = await startAuthorization(deps, { workspaceId, provider: 'microsoft', mode: 'imap', redirectUri });
    expect(started.url.pathname).toBe('/common/oauth2/v2.0/authorize');
    expect(started.url.searchParams.get('scope')).toContain('https://outlook.office.com/IMAP.AccessAsUser.All');
    expect(started.url.searchParams.get('scope')).not.toContain('graph.microsoft.com');
    const first = await completeAuthorization(deps, (await consent(started.url)).searchParams);
    expect(first).toMatchObject({ email: 'rep@contoso.test', provider: 'smtp_imap', mode: 'imap', created: true });
    const mb = await store.db.selectFrom('mailbox').selectAll().where('id', '=', first.mailboxId).executeTakeFirstOrThrow();
    const settings = parseMailboxSettings(mb.settings);
    expect(settings).toMatchObject({ oauth: { provider: 'microsoft', mode: 'imap' }, imap: { host: 'outlook.office365.com', port: 993, security: 'tls' }, smtp: { host: 'smtp.office365.com', port: 587, security: 'starttls' } });
    const cred = await deps.vault.get(first.mailboxId);
    if (cred?.kind !== 'oauth') throw new Error('no oauth credential');
    expect(msEmu.introspect(cred.accessToken, 'outlook-imap')?.user.email).toBe('rep@contoso.test');
    expect(msEmu.introspect(cred.accessToken, 'graph')).toBeUndefined();

    await store.db.updateTable('mailbox').set({ health: 'paused', health_reason: 'Microsoft access was revoked or expired; reconnect the mailbox' }).where('id', '=', first.mailboxId).execute();
    const again = await startAuthorization(deps, { workspaceId, provider: 'microsoft', mode: 'api', redirectUri });
    const second = await completeAuthorization(deps, (await consent(again.url)).searchParams);
    expect(second).toMatchObject({ mailboxId: first.mailboxId, provider: 'graph', created: false });
    const after = await store.db.selectFrom('mailbox').selectAll().where('id', '=', first.mailboxId).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ provider: 'graph', health: 'ok', health_reason: null });
    expect(parseMailboxSettings(after.settings)).toEqual({ serverSavesSent: true, oauth: { provider: 'microsoft', mode: 'api' } });

    // A pause for another reason (bounces) is not lifted by a new grant.
    await store.db.updateTable('mailbox').set({ health: 'paused', health_reason: 'bounce rate 9.1% over the last 200 sends' }).where('id', '=', first.mailboxId).execute();
    const third = await startAuthorization(deps, { workspaceId, provider: 'microsoft', mode: 'api', redirectUri });
    await completeAuthorization(deps, (await consent(third.url)).searchParams);
    expect(await store.db.selectFrom('mailbox').select(['health']).where('id', '=', first.mailboxId).executeTakeFirstOrThrow()).toEqual({ health: 'paused' });
  });

  it('validates the ID token: a nonce other than the one stored is refused; a pinned tenant expects its own issuer', async () => {
    const started = await startAuthorization(deps, { workspaceId, provider: 'google', mode: 'api', redirectUri, loginHint: 'other@acme.test' });
    const callback = await consent(started.url);
    await store.db.updateTable('oauth_flow').set({ nonce: 'a-different-nonce' }).where('state', '=', started.state).execute();
    await expect(completeAuthorization(deps, callback.searchParams)).rejects.toSatisfy(rejectsWith('MAILBOX_AUTH_FAILED', /failed validation: .*nonce/));

    const pinned: OAuthFlowDeps = {
      ...deps,
      clients: new OAuthClients({ microsoft: { clientId: client.id, clientSecret: client.secret, tenant: '4a1b2c3d-0000-4000-8000-00000000c0de', discoveryBase: msEmu.origin } }),
    };
    const ok = await startAuthorization(pinned, { workspaceId, provider: 'microsoft', mode: 'api', redirectUri });
    expect(ok.url.pathname).toBe('/4a1b2c3d-0000-4000-8000-00000000c0de/oauth2/v2.0/authorize');
    await expect(completeAuthorization(pinned, (await consent(ok.url)).searchParams)).resolves.toMatchObject({ created: false, email: 'rep@contoso.test' });
  });
});
