import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../agency/clients.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { consent } from '../../sim/emulators/oauth/browser.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { setDomain } from '../../tracking/domains/sql/tracking-domain.ts';
import { apiHarness, login, seedMember, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { SSO_BINDING_COOKIE } from '../sso-callback.ts';

/**
 * Single sign-on started on an agency client's own app host (issue 19; auth/sso/callback-host.ts),
 * against the OAuth emulator as the client's OpenID provider. The request arrives as the HTTPS
 * listener of custom hosts hands it over (Host: the client's name and the listener's port; over
 * TLS, here told by a trusted proxy's X-Forwarded-Proto). The sign-in comes back to the client's
 * host, with the binding and session cookies set there (host-only, Secure), and lands on that
 * host; the settings list both redirect URIs. Refused: a sign-in into one workspace on another
 * client's host, on a client host not serving yet, and a callback on another host than the flow's
 * (a forged Host). A Host that is no client host picks nothing: the public redirect URI.
 */
const PUBLIC_CALLBACK = 'http://localhost:8080/oauth/sso/callback';
const PORT = 8443;
const HOST_A = 'app.client-a.test';
const HOST_B = 'app.client-b.test';
const HOST_C = 'app.client-c.test';
const CALLBACK_A = `https://${HOST_A}:${PORT}/oauth/sso/callback`;

describe.each(testBackends())('single sign-on on a client app host (%s)', (backend) => {
  let h: ApiHarness;
  let idp: OAuthEmulator;
  let owner: Browser;
  let a: string;
  let b: string;
  let c: string;

  beforeAll(async () => {
    idp = await startOAuthEmulator({
      flavour: 'oidc',
      clients: [{ id: 'client-a-sso', secret: 'idp-secret', redirectUris: [PUBLIC_CALLBACK, CALLBACK_A] }],
      users: [{ email: 'rep@client-a.test' }, { email: 'boss@client-b.test' }],
    });
    h = await apiHarness(
      backend,
      { webhooks: { allowPrivate: true }, trackingDomains: { publicHost: 'cadenza.test', nudge: () => undefined, httpsPort: () => PORT } },
      { trustProxy: ['127.0.0.1'] },
    );
    const agency = await seedWorkspace(h.store, 'Agency', 'owner@agency.test');
    owner = await login(h.app, 'owner@agency.test', agency.password);
    const deps = { clock: systemClock, random: seededRandom(`clients-${backend}`) };
    const client = async (name: string, host: string, state: 'active' | 'pending_dns') => {
      const r = await createClient(h.store, deps, { agencyId: agency.workspaceId, name, timeZone: 'UTC' });
      if (!r.ok) throw new Error(r.message);
      expect(await setDomain(h.store.db, r.workspaceId, host, Date.now(), 'app')).toBe('set');
      await sql`update tracking_domain set state = ${state} where host = ${host}`.execute(h.store.db);
      return r.workspaceId;
    };
    a = await client('Client A', HOST_A, 'active');
    b = await client('Client B', HOST_B, 'active');
    c = await client('Client C', HOST_C, 'pending_dns');
    await seedMember(h.store, a, 'rep@client-a.test', 'member');
    await seedMember(h.store, b, 'boss@client-b.test', 'member');
    for (const ws of [a, b, c]) {
      const r = await owner.call('PUT', `/api/workspaces/${ws}/sso`, { issuer: idp.issuer, clientId: 'client-a-sso', clientSecret: 'idp-secret', allowedDomains: [] });
      expect(r.statusCode, r.body).toBe(200);
    }
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await idp?.close();
  });

  /** As the client host's HTTPS listener hands a request over: the client's name with the listener's port, over TLS. */
  const onHost = (host: string, more: Record<string, string> = {}) => ({ host: `${host}:${PORT}`, 'x-forwarded-proto': 'https', ...more });
  const start = (headers: Record<string, string>, payload: Record<string, unknown>) => h.app.inject({ method: 'POST', url: '/api/auth/sso/start', headers, payload });
  const flows = async () => (await h.store.db.selectFrom('oauth_flow').select(['redirect_uri', 'workspace_id']).where('mode', '=', 'sso').execute()).length;

  it("lists every redirect URI to register: the public one and the client's own host", async () => {
    const r = await owner.call('GET', `/api/workspaces/${a}/sso`);
    expect(r.json()).toMatchObject({ redirectUri: PUBLIC_CALLBACK, redirectUris: [PUBLIC_CALLBACK, CALLBACK_A] });
    // A client host not verified yet is not one to register.
    expect((await owner.call('GET', `/api/workspaces/${c}/sso`)).json().redirectUris).toEqual([PUBLIC_CALLBACK]);
  });

  it("a member signs in on the client's host and comes back there: binding and session cookies on that host, Secure", async () => {
    // No workspace named: the sign-in page's host says whose it is.
    const s = await start(onHost(HOST_A), { email: 'rep@client-a.test' });
    expect(s.statusCode, s.body).toBe(200);
    const binding = s.cookies.find((x) => x.name === SSO_BINDING_COOKIE)!;
    expect(binding).toMatchObject({ httpOnly: true, secure: true, path: '/oauth/sso', sameSite: 'Lax' });
    expect(binding.domain).toBeUndefined();
    const url = new URL(s.json<{ url: string }>().url);
    expect(url.searchParams.get('redirect_uri')).toBe(CALLBACK_A);
    const back = await consent(url);
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK_A);
    expect(back.searchParams.get('state')).toBe(url.searchParams.get('state'));
    const r = await h.app.inject({ method: 'GET', url: `/oauth/sso/callback${back.search}`, headers: onHost(HOST_A, { accept: 'text/html', cookie: `${SSO_BINDING_COOKIE}=${binding.value}` }) });
    expect(r.statusCode, r.body).toBe(303);
    expect(r.headers.location).toBe(`https://${HOST_A}:${PORT}/?workspace=${a}`);
    const session = r.cookies.find((x) => x.name === SESSION_COOKIE)!;
    expect(session).toMatchObject({ httpOnly: true, secure: true, path: '/', sameSite: 'Lax' });
    expect(session.domain).toBeUndefined();
    const me = await h.app.inject({ method: 'GET', url: '/api/auth/me', headers: onHost(HOST_A, { cookie: `${SESSION_COOKIE}=${session.value}` }) });
    expect(me.json().account.email).toBe('rep@client-a.test');
    const ok = await h.store.db.selectFrom('audit_event').select('target').where('workspace_id', '=', a).where('action', '=', 'signin.succeeded').execute();
    expect(ok.map((e) => e.target)).toContain('rep@client-a.test');
  });

  it("refuses a sign-in into one workspace on another client's host, and on a client host not verified yet", async () => {
    const before = await flows();
    const other = await start(onHost(HOST_B), { workspaceId: a, email: 'rep@client-a.test' });
    expect(other.statusCode).toBe(403);
    expect(other.json().error).toMatchObject({ message: `${HOST_B} signs in to its own workspace only; sign in to this one on its own address`, details: { reason: 'other_workspace' } });
    expect(other.cookies.find((x) => x.name === SSO_BINDING_COOKIE)).toBeUndefined();
    const pending = await start(onHost(HOST_C), { email: 'someone@client-c.test' });
    expect(pending.statusCode).toBe(403);
    expect(pending.json().error).toMatchObject({ details: { reason: 'unverified_host' } });
    expect(pending.json().error.message).toBe('single sign-on cannot come back to app.client-c.test: it waits until the domain is verified and its certificate issued; sign in on localhost:8080 meanwhile');
    expect(await flows()).toBe(before);
  });

  it('a Host that is no client host picks nothing: the public redirect URI', async () => {
    const s = await start({ host: 'evil.example:443', 'x-forwarded-proto': 'https' }, { workspaceId: a, email: 'rep@client-a.test' });
    expect(s.statusCode, s.body).toBe(200);
    expect(new URL(s.json<{ url: string }>().url).searchParams.get('redirect_uri')).toBe(PUBLIC_CALLBACK);
  });

  it("refuses a callback on another host than the flow's (a forged Host), and lands each refusal on the host it came to", async () => {
    // Started on the public host; the provider's answer replayed on client A's host with the binding.
    const s = await start({}, { workspaceId: a, email: 'rep@client-a.test' });
    expect(s.statusCode, s.body).toBe(200);
    const binding = s.cookies.find((x) => x.name === SSO_BINDING_COOKIE)!.value;
    const back = await consent(s.json<{ url: string }>().url);
    expect(`${back.origin}${back.pathname}`).toBe(PUBLIC_CALLBACK);
    const forged = await h.app.inject({ method: 'GET', url: `/oauth/sso/callback${back.search}`, headers: onHost(HOST_A, { accept: 'application/json', cookie: `${SSO_BINDING_COOKIE}=${binding}` }) });
    expect(forged.statusCode).toBe(401);
    expect(forged.json().error).toMatchObject({ message: 'this sign-in was started on another address; start again from the sign-in page you use', details: { reason: 'other_host' } });
    expect(forged.cookies.find((x) => x.name === SESSION_COOKIE)).toBeUndefined();
    // A browser lands on the SSO form of the host it is on: the client's, or the public URL for any other Host.
    const page = (headers: Record<string, string>) => h.app.inject({ method: 'GET', url: '/oauth/sso/callback?state=nope&code=x', headers: { accept: 'text/html', ...headers } });
    const onA = new URL(String((await page(onHost(HOST_A))).headers.location));
    expect(onA.origin).toBe(`https://${HOST_A}:${PORT}`);
    expect(onA.pathname).toBe('/signin/sso');
    expect(new URL(String((await page({ host: 'evil.example' })).headers.location)).origin).toBe('http://localhost:8080');
    expect(new URL(String((await page(onHost(HOST_C))).headers.location)).origin).toBe('http://localhost:8080');
  });
});
