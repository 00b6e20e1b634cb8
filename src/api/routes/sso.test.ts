import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { apiHarness, login, seedMember, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { consent } from '../../sim/emulators/oauth/browser.ts';
import { startOAuthEmulator, type IdTokenSpoil, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { dnsResolver } from '../../sending/dns/check.ts';
import { addMembership } from '../auth/accounts.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { SSO_BINDING_COOKIE } from '../sso-callback.ts';

/**
 * Single sign-on through the API (api/auth/sso/, api/sso-callback.ts) against the OAuth emulator
 * as a generic OpenID Connect provider, over loopback HTTP: the admins' settings (the secret
 * sealed, never returned; members refused), the sign-in by email domain with PKCE, state and
 * nonce, the ID token's checks (a wrong nonce, audience or issuer, an expired token, a signature
 * by another key: nobody signed in), just-in-time membership with the mapped role, the refusals in
 * plain words (unverified address, domain not admitted, another browser), an existing member, an
 * existing account that belongs to another workspace refused (no takeover through a claimed
 * domain), and password sign-in refused where the workspace says so. The DNS proof of a listed
 * domain (domain-proof.ts) through the loopback DNS server as the configured resolver: missing,
 * wrong token, another workspace's 404, proven; an unproven domain signs in nobody new; a member
 * here who also belongs elsewhere signs in for a proven domain only.
 */
const CALLBACK = 'http://localhost:8080/oauth/sso/callback';

describe.each(testBackends())('single sign-on (%s)', (backend) => {
  let h: ApiHarness;
  let idp: OAuthEmulator;
  let ws: string;
  let owner: Browser;
  let rep: Browser;
  let dns: TestDnsServer;

  beforeAll(async () => {
    idp = await startOAuthEmulator({
      flavour: 'oidc',
      clients: [{ id: 'cadenza-sso', secret: 'idp-secret', redirectUris: [CALLBACK] }],
      users: [
        { email: 'ada@acme.test', groups: ['everyone', 'sales-leads'], name: 'Ada' },
        { email: 'bob@acme.test', groups: ['everyone'] },
        { email: 'eve@acme.test', emailVerified: false },
        { email: 'mal@elsewhere.test' },
        { email: 'rep@acme.test' },
        { email: 'spoiled@acme.test' },
        { email: 'carol@acme.test' },
        { email: 'dan@acme.test' },
        { email: 'zed@partner.test' },
      ],
    });
    dns = await startTestDnsServer();
    h = await apiHarness(backend, { webhooks: { allowPrivate: true }, domains: { resolver: dnsResolver({ server: dns.address, timeoutMs: 500 }), blocklists: { ip: [], domain: [] }, publicHost: 'app.cadenza.test' } });
    const w = await seedWorkspace(h.store, 'Acme', 'owner@acme.test');
    ws = w.workspaceId;
    owner = await login(h.app, 'owner@acme.test', w.password);
    const r = await seedMember(h.store, ws, 'rep@acme.test', 'member');
    rep = await login(h.app, 'rep@acme.test', r.password);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await idp?.close();
    await dns?.close();
  });

  const setup = (who: Browser, body: Record<string, unknown> = {}) =>
    who.call('PUT', `/api/workspaces/${ws}/sso`, {
      issuer: idp.issuer,
      clientId: 'cadenza-sso',
      clientSecret: 'idp-secret',
      allowedDomains: ['ACME.test'],
      roleMapping: [{ group: 'sales-leads', role: 'admin' }],
      defaultRole: 'member',
      ...body,
    });

  /** A browser signing in: start, the provider's consent, the callback; the answer and the session cookie if any. */
  async function signIn(email: string, o: { spoil?: IdTokenSpoil; otherBrowser?: boolean } = {}) {
    const start = await h.app.inject({ method: 'POST', url: '/api/auth/sso/start', payload: { email } });
    expect(start.statusCode, start.body).toBe(200);
    const binding = start.cookies.find((c) => c.name === SSO_BINDING_COOKIE)!;
    expect(binding.httpOnly).toBe(true);
    const url = new URL(start.json<{ url: string }>().url);
    expect(url.origin).toBe(idp.origin);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('nonce')).toBeTruthy();
    if (o.spoil) idp.spoilNextIdToken(o.spoil);
    const back = await consent(url);
    const cookie = o.otherBrowser ? '' : `${SSO_BINDING_COOKIE}=${binding.value}`;
    const r = await h.app.inject({ method: 'GET', url: `/oauth/sso/callback${back.search}`, headers: { accept: 'application/json', cookie } });
    return { r, session: r.cookies.find((c) => c.name === SESSION_COOKIE)?.value };
  }
  const membership = (email: string) =>
    h.store.db.selectFrom('app_user').select(['role', 'account_id']).where('workspace_id', '=', ws).where('email', '=', email).executeTakeFirst();

  it('is set up by an admin only; the client secret is sealed and never returned', async () => {
    expect((await setup(rep)).statusCode).toBe(403);
    expect((await setup(owner, { clientSecret: undefined })).json().error.message).toMatch(/client secret is needed/);
    expect((await setup(owner, { issuer: 'ftp://id.example.test' })).json().error.message).toMatch(/must be https/);
    const r = await setup(owner);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.body).not.toContain('idp-secret');
    expect(r.json().sso).toMatchObject({ issuer: idp.issuer, allowedDomains: ['acme.test'], hasClientSecret: true, passwordAllowed: true });
    expect(r.json().redirectUri).toBe(CALLBACK);
    const row = await h.store.db.selectFrom('workspace_sso').select('client_secret_sealed').where('workspace_id', '=', ws).executeTakeFirstOrThrow();
    expect(Buffer.from(row.client_secret_sealed).toString('latin1')).not.toContain('idp-secret');
    const read = await owner.call('GET', `/api/workspaces/${ws}/sso`);
    expect(read.body).not.toContain('idp-secret');
    expect((await rep.call('GET', `/api/workspaces/${ws}/sso`)).statusCode).toBe(403);
    expect(r.json().domains).toEqual([
      { domain: 'acme.test', recordName: '_cadenza-sso.acme.test', recordValue: expect.stringMatching(/^cadenza-sso=[0-9a-f]{32}$/), verifiedAt: null, checkedAt: null, checkError: null },
    ]);
  });

  /** A sign-in started for the workspace by name (an unproven domain finds no workspace by address). */
  async function signInNamed(email: string) {
    const start = await h.app.inject({ method: 'POST', url: '/api/auth/sso/start', payload: { workspaceId: ws, email } });
    expect(start.statusCode, start.body).toBe(200);
    const back = await consent(start.json<{ url: string }>().url);
    const binding = start.cookies.find((c) => c.name === SSO_BINDING_COOKIE)!.value;
    return h.app.inject({ method: 'GET', url: `/oauth/sso/callback${back.search}`, headers: { accept: 'application/json', cookie: `${SSO_BINDING_COOKIE}=${binding}` } });
  }
  const verify = (who: Browser, workspaceId: string, d: string) => who.call('POST', `/api/workspaces/${workspaceId}/sso/domains/${d}/verify`);

  it('a listed domain not yet proven by DNS signs in nobody new, and finds no workspace by address', async () => {
    const none = await h.app.inject({ method: 'POST', url: '/api/auth/sso/start', payload: { email: 'ada@acme.test' } });
    expect(none.statusCode).toBe(404);
    const r = await signInNamed('ada@acme.test');
    expect(r.statusCode, r.body).toBe(403);
    expect(r.json().error.message).toBe('acme.test is not verified for single sign-on in this workspace yet, so nobody new joins by it; ask an admin to verify the domain, or to invite you');
    expect(await h.store.db.selectFrom('account').select('id').where('email', '=', 'ada@acme.test').executeTakeFirst()).toBeUndefined();
  });

  it('verifies a domain by its TXT record through the configured resolver: missing, wrong token, another workspace, then proven', async () => {
    const token = (await owner.call('GET', `/api/workspaces/${ws}/sso`)).json().domains[0].recordValue as string;
    expect((await verify(rep, ws, 'acme.test')).statusCode).toBe(403);
    // No record yet.
    const missing = await verify(owner, ws, 'acme.test');
    expect(missing.statusCode, missing.body).toBe(200);
    expect(missing.json()).toMatchObject({ verified: false, reason: 'missing', domain: { verifiedAt: null, checkError: expect.stringMatching(/^no TXT record "cadenza-sso=…" at _cadenza-sso\.acme\.test yet/) } });
    expect(dns.queries.some((q) => q.name.toLowerCase() === '_cadenza-sso.acme.test' && q.type === 'TXT')).toBe(true);
    // A record with another token (another workspace's, or a typo) proves nothing.
    dns.setTxt('_cadenza-sso.acme.test', ['cadenza-sso=0123456789abcdef0123456789abcdef', 'v=other']);
    const wrong = await verify(owner, ws, 'acme.test');
    expect(wrong.json()).toMatchObject({ verified: false, reason: 'wrong_token', domain: { verifiedAt: null } });
    expect(wrong.json().domain.checkError).toBe(`the TXT record at _cadenza-sso.acme.test holds another token; it must read ${token}`);
    // Another workspace cannot check a domain it has not listed, nor Acme's.
    const other = await seedWorkspace(h.store, 'Other', 'boss@other.test');
    const boss = await login(h.app, 'boss@other.test', other.password);
    expect((await verify(boss, other.workspaceId, 'acme.test')).statusCode).toBe(404);
    expect((await verify(boss, ws, 'acme.test')).statusCode).toBe(404);
    // An unproven claim elsewhere does not lock the owner out: Other may list acme.test, it stays unproven there.
    const claim = await boss.call('PUT', `/api/workspaces/${other.workspaceId}/sso`, { issuer: idp.issuer, clientId: 'x', clientSecret: 'y', allowedDomains: ['acme.test'] });
    expect(claim.statusCode, claim.body).toBe(200);
    // The right record, beside others at the same name.
    dns.setTxt('_cadenza-sso.acme.test', ['v=other', token]);
    const ok = await verify(owner, ws, 'acme.test');
    expect(ok.json()).toMatchObject({ verified: true, reason: 'verified', domain: { domain: 'acme.test', checkError: null, verifiedAt: expect.any(String) } });
    expect((await owner.call('GET', `/api/workspaces/${ws}/sso`)).json().domains[0].verifiedAt).toBe(ok.json().domain.verifiedAt);
    // Once proven here, the same record cannot prove it for Other, and Other cannot list it anew.
    const otherToken = (await boss.call('GET', `/api/workspaces/${other.workspaceId}/sso`)).json().domains[0].recordValue as string;
    dns.setTxt('_cadenza-sso.acme.test', [token, otherToken]);
    const taken = await verify(boss, other.workspaceId, 'acme.test');
    expect(taken.json()).toMatchObject({ verified: false, reason: 'taken' });
    await boss.call('PUT', `/api/workspaces/${other.workspaceId}/sso`, { issuer: idp.issuer, clientId: 'x', allowedDomains: [] });
    const clash = await boss.call('PUT', `/api/workspaces/${other.workspaceId}/sso`, { issuer: idp.issuer, clientId: 'x', allowedDomains: ['acme.test'] });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().error.message).toMatch(/acme\.test already signs in to another workspace/);
    await boss.call('DELETE', `/api/workspaces/${other.workspaceId}/sso`);
  });

  it('a verified address of an admitted domain joins on first sign-in, with the role its groups map to', async () => {
    const { r, session } = await signIn('ada@acme.test');
    expect(r.statusCode, r.body).toBe(200);
    expect(session).toBeTruthy();
    expect(r.json()).toMatchObject({ account: { email: 'ada@acme.test', name: 'Ada' }, joined: true, workspaceId: ws });
    expect((await membership('ada@acme.test'))?.role).toBe('admin');
    const bob = await signIn('bob@acme.test');
    expect(bob.r.statusCode, bob.r.body).toBe(200);
    expect((await membership('bob@acme.test'))?.role).toBe('member');
    // The session works, and a second sign-in is the same account, no new membership.
    const me = await h.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: `${SESSION_COOKIE}=${bob.session}` } });
    expect(me.json().workspaces).toEqual([{ id: ws, name: 'Acme', role: 'member', agencyId: null, viaAgency: false }]);
    const again = await signIn('bob@acme.test');
    expect(again.r.json()).toMatchObject({ joined: false, account: { id: me.json().account.id } });
  });

  it('an existing member signs in to their own account', async () => {
    const { r } = await signIn('rep@acme.test');
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ joined: false, account: { id: rep.accountId } });
    expect((await membership('rep@acme.test'))?.role).toBe('member');
  });

  const refusedAsExisting = async (email: string) => {
    const { r, session } = await signIn(email);
    expect(r.statusCode, r.body).toBe(403);
    expect(session).toBeUndefined();
    expect(r.json().error.message).toBe(
      'An account with this email already exists and belongs to other workspaces; sign in with your password (an admin of Acme can invite it)',
    );
    const failed = await h.store.db.selectFrom('audit_event').select(['detail', 'target']).where('workspace_id', '=', ws).where('action', '=', 'signin.failed').execute();
    expect(failed.some((e) => e.target === email && JSON.stringify(e.detail).includes('existing_account'))).toBe(true);
  };

  it('refuses an existing account that belongs only to another workspace: no session, no membership (no takeover by a claimed domain)', async () => {
    // Acme's admin claimed acme.test; carol@acme.test already has an account, in Beta only.
    const beta = await seedWorkspace(h.store, 'Beta', 'boss@beta.test');
    const carol = await seedMember(h.store, beta.workspaceId, 'carol@acme.test', 'member');
    await refusedAsExisting('carol@acme.test');
    expect(await membership('carol@acme.test')).toBeUndefined();
    const memberships = await h.store.db.selectFrom('app_user').select('workspace_id').where('account_id', '=', carol.accountId).execute();
    expect(memberships).toEqual([{ workspace_id: beta.workspaceId }]);
    // Her password still opens her account.
    await login(h.app, 'carol@acme.test', carol.password);
  });

  it('a member of this workspace who also belongs to others signs in by SSO when the domain is proven; not for an unproven domain', async () => {
    const gamma = await seedWorkspace(h.store, 'Gamma', 'boss@gamma.test');
    const alsoGamma = (accountId: string, email: string) =>
      addMembership(h.store.db, { clock: systemClock, random: seededRandom(`gamma-${email}`) }, { accountId, workspaceId: gamma.workspaceId, email, name: null, role: 'member' });
    const dan = await seedMember(h.store, ws, 'dan@acme.test', 'admin');
    await alsoGamma(dan.accountId, 'dan@acme.test');
    const { r, session } = await signIn('dan@acme.test');
    expect(r.statusCode, r.body).toBe(200);
    expect(session).toBeTruthy();
    expect(r.json()).toMatchObject({ joined: false, workspaceId: ws, account: { id: dan.accountId } });
    // The role is the one granted before, not the groups' mapping (dan is in no mapped group).
    expect((await membership('dan@acme.test'))?.role).toBe('admin');
    // zed@partner.test: a member here and in Gamma, but partner.test is not proven by Acme; the
    // provider Acme's admin configured must not open zed's Gamma.
    const zed = await seedMember(h.store, ws, 'zed@partner.test', 'member');
    await alsoGamma(zed.accountId, 'zed@partner.test');
    const refused = await signInNamed('zed@partner.test');
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.cookies.find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
    expect(refused.json().error.message).toMatch(/^Your account also belongs to other workspaces; single sign-on opens it only for an email domain this workspace has verified, and partner\.test is not one/);
    // A member of Acme alone is Acme's to vouch for, whatever the domain.
    await h.store.db.deleteFrom('app_user').where('account_id', '=', zed.accountId).where('workspace_id', '=', gamma.workspaceId).execute();
    expect((await signInNamed('zed@partner.test')).statusCode).toBe(200);
  });

  it.each([
    ['nonce', /nonce/],
    ['audience', /aud/],
    ['expired', /exp|timestamp/],
    ['signature', /signature/],
    ['issuer', /iss/],
  ] as const)('refuses an ID token with a wrong %s: nobody is signed in', async (spoil, words) => {
    const { r, session } = await signIn('spoiled@acme.test', { spoil });
    expect(r.statusCode).toBe(401);
    expect(session).toBeUndefined();
    expect(r.json().error.message).toMatch(/ID token failed its checks/);
    expect(r.json().error.message).toMatch(words);
    expect(await membership('spoiled@acme.test')).toBeUndefined();
  });

  it('refuses an unverified address, a domain not admitted, and a callback in another browser, in words', async () => {
    const eve = await signIn('eve@acme.test');
    expect(eve.r.statusCode).toBe(403);
    expect(eve.r.json().error.message).toBe('the identity provider has not verified eve@acme.test; verify it there first, then sign in again');
    expect(await membership('eve@acme.test')).toBeUndefined();
    // mal@elsewhere.test: the workspace is named, the provider vouches for the address, the domain is not admitted.
    const start = await h.app.inject({ method: 'POST', url: '/api/auth/sso/start', payload: { workspaceId: ws, email: 'mal@elsewhere.test' } });
    expect(start.statusCode, start.body).toBe(200);
    const back = await consent(start.json().url);
    const binding = start.cookies.find((c) => c.name === SSO_BINDING_COOKIE)!.value;
    const mal = await h.app.inject({ method: 'GET', url: `/oauth/sso/callback${back.search}`, headers: { accept: 'application/json', cookie: `${SSO_BINDING_COOKIE}=${binding}` } });
    expect(mal.statusCode).toBe(403);
    expect(mal.json().error.message).toMatch(/^elsewhere\.test addresses may not join this workspace by single sign-on/);
    expect(await h.store.db.selectFrom('account').select('id').where('email', '=', 'mal@elsewhere.test').executeTakeFirst()).toBeUndefined();
    // A domain nobody claimed is told so at start.
    const none = await h.app.inject({ method: 'POST', url: '/api/auth/sso/start', payload: { email: 'x@nowhere.test' } });
    expect(none.statusCode).toBe(404);
    expect(none.json().error.message).toMatch(/no workspace here signs in with single sign-on for nowhere\.test/);
    // The callback in a browser that did not start it (login CSRF) is refused.
    const stolen = await signIn('bob@acme.test', { otherBrowser: true });
    expect(stolen.r.statusCode).toBe(401);
    expect(stolen.session).toBeUndefined();
    expect(stolen.r.json().error.message).toMatch(/started in another browser/);
    // A browser lands on the sign-in page with the reason.
    const page = await h.app.inject({ method: 'GET', url: `/oauth/sso/callback${back.search}`, headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(303);
    const landed = new URL(String(page.headers.location));
    expect(landed.pathname).toBe('/signin/sso');
    expect(landed.searchParams.get('ssoError')).toMatch(/already used|another browser/);
    // Every refusal is in the audit log.
    const failed = await h.store.db.selectFrom('audit_event').select('detail').where('workspace_id', '=', ws).where('action', '=', 'signin.failed').execute();
    expect(failed.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses password sign-in to members once the workspace is SSO-only; owners keep theirs', async () => {
    const r = await setup(owner, { clientSecret: undefined, passwordAllowed: false });
    expect(r.statusCode, r.body).toBe(200);
    const refused = await h.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'rep@acme.test', password: 'a long password 123' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.message).toBe('Acme signs in with single sign-on only: use "Sign in with SSO"');
    await login(h.app, 'owner@acme.test', 'a long password 123');
    // The secret kept from before still works.
    expect((await signIn('rep@acme.test')).r.statusCode).toBe(200);
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/sso`)).json()).toEqual({ removed: true });
    await login(h.app, 'rep@acme.test', 'a long password 123');
  });
});
