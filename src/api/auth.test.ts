import { afterEach, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness } from '../../test/api.ts';
import { testBackends } from '../../test/stores.ts';
import { DEVICE_COOKIE } from './auth/devices.ts';
import { SESSION_COOKIE } from './auth/sessions.ts';

describe.each(testBackends())('sign-in, sessions, CSRF and API keys (%s)', (backend) => {
  let h: ApiHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('first-run setup makes the owner of the existing workspace once, then refuses', async () => {
    h = await apiHarness(backend);
    // A fresh install already has the Default workspace (workspace/workspaces.ts): setup adopts it.
    await h.store.db.insertInto('workspace').values({ id: '01a228f2-0000-7000-8000-000000000001', name: 'Default' }).execute();
    expect((await h.app.inject({ method: 'GET', url: '/api/setup' })).json()).toEqual({ needed: true });
    const setupToken = h.setupToken;
    const bad = await h.app.inject({ method: 'POST', url: '/api/setup', payload: { setupToken, email: 'not-an-address', password: 'long enough password', workspaceName: 'Acme' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { issues: [{ path: 'body.email' }] } });
    const ok = await h.app.inject({ method: 'POST', url: '/api/setup', payload: { setupToken, email: 'Owner@Example.test', password: 'long enough password', workspaceName: 'Acme', timeZone: 'Europe/Paris' } });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().workspaces).toEqual([{ id: '01a228f2-0000-7000-8000-000000000001', name: 'Acme', role: 'owner', agencyId: null, viaAgency: false }]);
    const cookie = ok.cookies.find((c) => c.name === SESSION_COOKIE)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie.secure).toBeFalsy();
    const again = await h.app.inject({ method: 'POST', url: '/api/setup', payload: { setupToken, email: 'x@example.test', password: 'long enough password', workspaceName: 'Other' } });
    expect(again.statusCode).toBe(409);
    expect((await h.app.inject({ method: 'GET', url: '/api/setup' })).json()).toEqual({ needed: false });
  });

  it('first-run setup needs the setup token: whoever reaches a fresh install first cannot claim it', async () => {
    h = await apiHarness(backend);
    const body = { email: 'first@example.test', password: 'long enough password', workspaceName: 'Mine' };
    const none = await h.app.inject({ method: 'POST', url: '/api/setup', payload: body });
    expect(none.statusCode).toBe(400);
    expect(none.json().error.details.issues[0].path).toBe('body.setupToken');
    const wrong = await h.app.inject({ method: 'POST', url: '/api/setup', payload: { ...body, setupToken: 'a guess at the token' } });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().error.message).toMatch(/setup token/);
    expect((await h.app.inject({ method: 'GET', url: '/api/setup' })).json()).toEqual({ needed: true });
    const ok = await h.app.inject({ method: 'POST', url: '/api/setup', payload: { ...body, setupToken: h.setupToken } });
    expect(ok.statusCode).toBe(201);
    // Spent: no token is left in the store.
    expect(await h.store.db.selectFrom('setup_token').selectAll().execute()).toEqual([]);
  });

  it('the session cookie is Secure when the public URL is https', async () => {
    h = await apiHarness(backend, { publicUrl: 'https://cadenza.example.test' });
    const ok = await h.app.inject({ method: 'POST', url: '/api/setup', payload: { setupToken: h.setupToken, email: 'o@example.test', password: 'long enough password', workspaceName: 'Acme' } });
    expect(ok.cookies.find((c) => c.name === SESSION_COOKIE)?.secure).toBe(true);
  });

  it('the session cookie is Secure on a request that came over TLS, though the public URL is http (an agency client\'s app host)', async () => {
    // The request's scheme as Fastify sees it: here through a trusted proxy's X-Forwarded-Proto
    // (the client's app host over the HTTPS listener is covered in test/web/agency-https.acme.test.ts).
    h = await apiHarness(backend, {}, { trustProxy: ['127.0.0.1'] });
    const w = await seedWorkspace(h.store, 'A', 'a@example.test');
    const body = { email: 'a@example.test', password: w.password };
    const overTls = await h.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'x-forwarded-proto': 'https' }, remoteAddress: '127.0.0.1', payload: body });
    expect(overTls.statusCode).toBe(200);
    expect(overTls.cookies.find((c) => c.name === SESSION_COOKIE)?.secure).toBe(true);
    const plain = await h.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '127.0.0.1', payload: body });
    expect(plain.cookies.find((c) => c.name === SESSION_COOKIE)?.secure).toBeFalsy();
    // An untrusted client claiming https does not change it.
    const claimed = await h.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'x-forwarded-proto': 'https' }, remoteAddress: '203.0.113.9', payload: body });
    expect(claimed.cookies.find((c) => c.name === SESSION_COOKIE)?.secure).toBeFalsy();
  });

  it('login: one answer for a wrong password and an unknown address, a new session each time, logout ends it', async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'A', 'a@example.test');
    const wrong = await h.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'a@example.test', password: 'nope nope nope' } });
    const unknown = await h.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'z@example.test', password: 'nope nope nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual(unknown.json());

    const first = await login(h.app, 'A@example.test', w.password);
    // Signing in again from the same browser replaces its session (no fixation).
    const second = await h.app.inject({ method: 'POST', url: '/api/auth/login', headers: { cookie: first.cookie }, payload: { email: 'a@example.test', password: w.password } });
    expect(second.statusCode).toBe(200);
    expect((await first.call('GET', '/api/auth/me')).statusCode).toBe(401);
    const token = second.cookies.find((c) => c.name === SESSION_COOKIE)!.value;
    expect(token).not.toBe(first.cookie.split('=')[1]);
    const stored = await h.store.db.selectFrom('auth_session').select('id_hash').execute();
    expect(stored.map((s) => s.id_hash)).not.toContain(token);

    const cookie = `${SESSION_COOKIE}=${token}`;
    const csrf = second.json().csrfToken as string;
    expect((await h.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { cookie } })).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { cookie, 'x-csrf-token': csrf } })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } })).statusCode).toBe(401);
  });

  it('login is limited per address (store) and per IP (in memory)', async () => {
    h = await apiHarness(backend, { loginLimit: { perEmail: 3, perIp: 6, windowMs: 60_000 } });
    const w = await seedWorkspace(h.store, 'A', 'a@example.test');
    const attempt = (email: string, password: string, ip = '10.0.0.1') =>
      h!.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: ip, payload: { email, password } });
    for (let i = 0; i < 3; i++) expect((await attempt('a@example.test', 'wrong password')).statusCode).toBe(401);
    // Even the right password is refused once the address has had its failures.
    const limited = await attempt('a@example.test', w.password, '10.0.0.2');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    for (let i = 0; i < 3; i++) expect((await attempt(`other${i}@example.test`, 'wrong password')).statusCode).toBe(401);
    const ipLimited = await attempt('b@example.test', 'wrong password');
    expect(ipLimited.statusCode).toBe(429);
    expect(ipLimited.json().error.code).toBe('RATE_LIMITED');
  });

  it("sign-in limits lock out the guesser, never the owner's usual browser with the right password", async () => {
    h = await apiHarness(backend, { loginLimit: { perEmail: 4, perIp: 6, windowMs: 60_000, free: 2, baseDelayMs: 30_000 } });
    const w = await seedWorkspace(h.store, 'A', 'a@example.test');
    const attempt = (password: string, ip: string, cookie?: string) =>
      h!.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: ip, ...(cookie ? { headers: { cookie } } : {}), payload: { email: 'a@example.test', password } });
    // The owner's browser signed in once: it now holds a device cookie, for the sign-in routes only.
    const first = await attempt(w.password, '10.0.0.1');
    const device = first.cookies.find((c) => c.name === DEVICE_COOKIE)!;
    expect(device).toMatchObject({ httpOnly: true, path: '/api/auth', sameSite: 'Strict' });
    const deviceCookie = `${DEVICE_COOKIE}=${device.value}`;

    // A guesser behind the same address (an office NAT): two free tries, then back-off.
    expect((await attempt('guess one', '10.0.0.1')).statusCode).toBe(401);
    expect((await attempt('guess two', '10.0.0.1')).statusCode).toBe(401);
    const waiting = await attempt('guess three', '10.0.0.1');
    expect(waiting.statusCode).toBe(429);
    expect(Number(waiting.headers['retry-after'])).toBeGreaterThan(0);
    // More guessers, other addresses: the address-wide cap for strangers is reached.
    expect((await attempt('guess four', '10.0.0.2')).statusCode).toBe(401);
    expect((await attempt('guess five', '10.0.0.3')).statusCode).toBe(401);
    expect((await attempt(w.password, '10.0.0.4')).statusCode).toBe(429);
    // The per-IP count of 10.0.0.1 is used up as well.
    for (let i = 0; i < 3; i++) await attempt('more', '10.0.0.1');
    expect((await attempt('more', '10.0.0.1')).json().error.code).toBe('RATE_LIMITED');

    // The owner's usual browser, from that very address, with the right password: signed in.
    const owner = await attempt(w.password, '10.0.0.1', deviceCookie);
    expect(owner.statusCode, owner.body).toBe(200);
    // Its own typos are counted for it alone, and its wait stays short.
    expect((await attempt('owner typo', '10.0.0.1', deviceCookie)).statusCode).toBe(401);
    // A device cookie of this account does not help with another address.
    await seedWorkspace(h.store, 'B', 'b@example.test');
    const other = await h.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.0.0.1', headers: { cookie: deviceCookie }, payload: { email: 'b@example.test', password: 'x' } });
    expect(other.statusCode).toBe(429);
  });

  it('behind a trusted proxy, each client is told apart by X-Forwarded-For', async () => {
    h = await apiHarness(backend, { loginLimit: { perEmail: 50, perIp: 50, windowMs: 60_000, free: 1, baseDelayMs: 30_000 } }, { trustProxy: ['127.0.0.1'] });
    const w = await seedWorkspace(h.store, 'A', 'a@example.test');
    const via = (client: string, password: string) =>
      h!.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': client }, payload: { email: 'a@example.test', password } });
    expect((await via('203.0.113.7', 'wrong')).statusCode).toBe(401);
    expect((await via('203.0.113.7', 'wrong')).statusCode).toBe(429);
    // Another client behind the same proxy is not the guesser.
    expect((await via('198.51.100.2', w.password)).statusCode).toBe(200);
    const failed = await h.store.db.selectFrom('login_failure').select('client').execute();
    expect(failed.map((f) => f.client)).toEqual(['ip:203.0.113.7']);
  });

  it('API keys: shown once, work as Bearer without CSRF, refused after revocation; account routes refuse them', async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'A', 'a@example.test');
    const owner = await login(h.app, 'a@example.test', w.password);
    const created = await owner.call('POST', `/api/workspaces/${w.workspaceId}/api-keys`, { name: 'crm' });
    expect(created.statusCode).toBe(201);
    const { key, id } = created.json<{ key: string; id: string }>();
    expect(key).toMatch(/^cdz_/);
    const list = await owner.call('GET', `/api/workspaces/${w.workspaceId}/api-keys`);
    expect(list.body).not.toContain(key);
    const auth = { authorization: `Bearer ${key}` };
    const patched = await h.app.inject({ method: 'PATCH', url: `/api/workspaces/${w.workspaceId}/settings`, headers: auth, payload: { holidaysCountry: 'FR' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().holidaysCountry).toBe('FR');
    expect((await h.app.inject({ method: 'GET', url: '/api/auth/me', headers: auth })).statusCode).toBe(403);
    expect((await owner.call('DELETE', `/api/workspaces/${w.workspaceId}/api-keys/${id}`)).statusCode).toBe(200);
    const revoked = await h.app.inject({ method: 'GET', url: `/api/workspaces/${w.workspaceId}/settings`, headers: auth });
    expect(revoked.statusCode).toBe(401);
    expect((await h.app.inject({ method: 'GET', url: `/api/workspaces/${w.workspaceId}/settings`, headers: { authorization: 'Bearer cdz_made_up' } })).statusCode).toBe(401);
  });

  it('a read-only API key reads with its role and is refused every change, its own scope included', async () => {
    const harness = (h = await apiHarness(backend));
    const w = await seedWorkspace(harness.store, 'A', 'a@example.test');
    const owner = await login(harness.app, 'a@example.test', w.password);
    const created = await owner.call('POST', `/api/workspaces/${w.workspaceId}/api-keys`, { name: 'dashboard', scope: 'read_only' });
    expect(created.statusCode).toBe(201);
    const { key, id, scope } = created.json<{ key: string; id: string; scope: string }>();
    expect(scope).toBe('read_only');
    const listed = (await owner.call('GET', `/api/workspaces/${w.workspaceId}/api-keys`)).json<{ apiKeys: Array<{ id: string; scope: string }> }>().apiKeys;
    expect(listed.find((k) => k.id === id)?.scope).toBe('read_only');
    const as = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => harness.app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload ? { payload } : {}) });
    // Reads work as the key's role (admin: the key list is an admin's read).
    expect((await as('GET', `/api/workspaces/${w.workspaceId}/settings`)).statusCode).toBe(200);
    expect((await as('GET', `/api/workspaces/${w.workspaceId}/api-keys`)).statusCode).toBe(200);
    // Every change is refused, with the reason, and nothing changed.
    const patched = await as('PATCH', `/api/workspaces/${w.workspaceId}/settings`, { holidaysCountry: 'FR' });
    expect(patched.statusCode).toBe(403);
    expect(patched.json().error.message).toMatch(/read-only/);
    expect((await as('GET', `/api/workspaces/${w.workspaceId}/settings`)).json().holidaysCountry).not.toBe('FR');
    expect((await as('POST', `/api/workspaces/${w.workspaceId}/api-keys`, { name: 'escalate' })).statusCode).toBe(403);
    expect((await as('DELETE', `/api/workspaces/${w.workspaceId}/api-keys/${id}`)).statusCode).toBe(403);
    expect((await owner.call('POST', `/api/workspaces/${w.workspaceId}/api-keys`, { name: 'x', scope: 'everything' })).statusCode).toBe(400);
  });

  it('members: an admin adds a member, who joins through the link and can sign in; the last owner cannot be demoted', async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'A', 'a@example.test');
    const owner = await login(h.app, 'a@example.test', w.password);
    const add = await owner.call('POST', `/api/workspaces/${w.workspaceId}/members`, { email: 'm@example.test', role: 'member' });
    expect(add.statusCode).toBe(201);
    const link = add.json().link as string;
    expect((await h.app.inject({ method: 'POST', url: '/api/invitations/signup', payload: { token: link.slice(link.lastIndexOf('/') + 1), name: 'M', password: 'initial password 1' } })).statusCode).toBe(201);
    const m = await login(h.app, 'm@example.test', 'initial password 1');
    expect((await m.call('GET', '/api/auth/me')).json().workspaces).toEqual([{ id: w.workspaceId, name: 'A', role: 'member', agencyId: null, viaAgency: false }]);
    const ownerRow = await owner.call('GET', `/api/workspaces/${w.workspaceId}/members`);
    const ownerId = ownerRow.json().members.find((x: { role: string }) => x.role === 'owner').id as string;
    const demote = await owner.call('PATCH', `/api/workspaces/${w.workspaceId}/members/${ownerId}`, { role: 'admin' });
    expect(demote.statusCode).toBe(409);
    const dup = await owner.call('POST', `/api/workspaces/${w.workspaceId}/members`, { email: 'M@example.test', role: 'member' });
    expect(dup.statusCode).toBe(409);
  });

  it('changing the password needs the current one, ends the other sessions and keeps this one', async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'A', 'a@example.test');
    const here = await login(h.app, 'a@example.test', w.password);
    const there = await login(h.app, 'a@example.test', w.password);
    const wrong = await here.call('POST', '/api/auth/password', { currentPassword: 'not it at all', newPassword: 'a new long password' });
    expect(wrong.statusCode).toBe(403);
    const short = await here.call('POST', '/api/auth/password', { currentPassword: w.password, newPassword: 'short' });
    expect(short.json().error.details.issues[0].path).toBe('body.newPassword');
    const ok = await here.call('POST', '/api/auth/password', { currentPassword: w.password, newPassword: 'a new long password' });
    expect(ok.json()).toEqual({ ok: true, otherSessionsEnded: 1 });
    expect((await here.call('GET', '/api/auth/me')).statusCode).toBe(200);
    expect((await there.call('GET', '/api/auth/me')).statusCode).toBe(401);
    await expect(login(h.app, 'a@example.test', w.password)).rejects.toThrow(/401/);
    await login(h.app, 'a@example.test', 'a new long password');
  });
});
