import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedGraph, seedMember, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { createApiKey } from '../auth/api-keys.ts';
import { roleAtLeast } from '../auth/access.ts';
import { setDomain } from '../../tracking/domains/sql/tracking-domain.ts';
import { apiRoutes } from './index.ts';

/**
 * Agencies (docs/security.md "Agencies"): who reaches which workspace, the portal's read-only
 * role, branding by Host, and per-client usage against known rows.
 */
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(24, 1)]);

describe.each(testBackends())('agencies (%s)', (backend) => {
  let h: ApiHarness;
  let agency: string;
  let agencyAdmin: Browser;
  let agencyMember: Browser;
  let client1: string;
  let client2: string;
  let clientMember: Browser;
  let viewer: Browser;
  let graph: Awaited<ReturnType<typeof seedGraph>>;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const a = await seedWorkspace(h.store, 'Agency', 'boss@agency.test');
    agency = a.workspaceId;
    await seedMember(h.store, agency, 'rep@agency.test', 'member');
    agencyAdmin = await login(h.app, 'boss@agency.test', a.password);
    agencyMember = await login(h.app, 'rep@agency.test', 'a long password 123');
    const c1 = await agencyAdmin.call('POST', `/api/workspaces/${agency}/agency/clients`, { name: 'Northwind' });
    expect(c1.statusCode, c1.body).toBe(201);
    client1 = c1.json().id;
    client2 = (await agencyAdmin.call('POST', `/api/workspaces/${agency}/agency/clients`, { name: 'Contoso' })).json().id;
    const m = await seedMember(h.store, client1, 'sales@northwind.test', 'member');
    await seedMember(h.store, client1, 'cfo@northwind.test', 'viewer');
    clientMember = await login(h.app, 'sales@northwind.test', 'a long password 123');
    viewer = await login(h.app, 'cfo@northwind.test', 'a long password 123');
    graph = await seedGraph(h.store, client1, 'n1', m.userId);
  }, 60_000);
  afterAll(async () => h?.close());

  it("an agency admin reaches a client as an admin, and sees it in /api/auth/me; the agency's members do not", async () => {
    const s = await agencyAdmin.call('GET', `/api/workspaces/${client1}/settings`);
    expect(s.statusCode).toBe(200);
    const put = await agencyAdmin.call('PUT', `/api/workspaces/${client1}/branding`, { displayName: 'Northwind Sales', primaryColor: '#1A237E', accentColor: '#f60' });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ displayName: 'Northwind Sales', primaryColor: '#1a237e', accentColor: '#ff6600' });
    const me = (await agencyAdmin.call('GET', '/api/auth/me')).json<{ workspaces: Array<{ id: string; role: string; viaAgency: boolean; agencyId: string | null }> }>();
    expect(me.workspaces.find((w) => w.id === client1)).toMatchObject({ role: 'admin', viaAgency: true, agencyId: agency });
    // The audit log of the client names the agency's admin as such.
    const log = await agencyAdmin.call('GET', `/api/workspaces/${client1}/audit-log`);
    expect(log.body).toContain('boss@agency.test (agency admin)');
    for (const ws of [client1, client2]) expect((await agencyMember.call('GET', `/api/workspaces/${ws}/settings`)).statusCode).toBe(404);
    const meM = (await agencyMember.call('GET', '/api/auth/me')).json<{ workspaces: Array<{ id: string }> }>();
    expect(meM.workspaces.map((w) => w.id)).toEqual([agency]);
  });

  it("an agency's API key stays in the agency", async () => {
    const key = (await createApiKey(h.store.db, { clock: systemClock, random: seededRandom('ak') }, { workspaceId: agency, name: 'agency script', role: 'admin', createdBy: null })).key;
    const r = await h.app.inject({ method: 'GET', url: `/api/workspaces/${client1}/settings`, headers: { authorization: `Bearer ${key}` } });
    expect(r.statusCode).toBe(404);
  });

  it('a client member never reaches the agency or a sibling client, and cannot create clients', async () => {
    for (const ws of [agency, client2]) {
      for (const url of [`/api/workspaces/${ws}/settings`, `/api/workspaces/${ws}/agency/clients`, `/api/workspaces/${ws}/branding`, `/api/workspaces/${ws}/analytics`]) {
        expect((await clientMember.call('GET', url)).statusCode, url).toBe(404);
        expect((await viewer.call('GET', url)).statusCode, url).toBe(404);
      }
    }
    expect((await clientMember.call('GET', `/api/workspaces/${client1}/agency/clients`)).statusCode).toBe(403);
    // Even the agency's admin cannot nest: a client has no clients.
    const nested = await agencyAdmin.call('POST', `/api/workspaces/${client1}/agency/clients`, { name: 'Sub' });
    expect([nested.statusCode, nested.json().error.code]).toEqual([409, 'CONFLICT']);
  });

  it('the portal role reads the reports and branding, and every other route refuses it', async () => {
    expect((await viewer.call('GET', `/api/workspaces/${client1}/analytics`)).statusCode).toBe(200);
    expect((await viewer.call('GET', `/api/workspaces/${client1}/analytics/breakdown?by=sequence`)).statusCode).toBe(200);
    expect((await viewer.call('GET', `/api/workspaces/${client1}/branding`)).json().branding.displayName).toBeTruthy();
    const ids: Record<string, string> = { workspaceId: client1, ...graph, kind: 'hubspot', stepKey: 'intro' };
    const workspaceRoutes = apiRoutes.filter((r) => typeof r.access === 'object');
    let writes = 0;
    for (const r of workspaceRoutes) {
      if (typeof r.access !== 'object') continue;
      const url = r.url.replace(/:([A-Za-z]+)/g, (_m, n: string) => ids[n] ?? newId(Date.now(), seededRandom(n)));
      const ex = r.example?.(ids) ?? {};
      const res = await viewer.call(r.method, url, ex.body);
      if (r.access.workspace === 'viewer') {
        expect(r.method, `${r.url} is open to viewers and must only read`).toBe('GET');
        continue;
      }
      if (r.method !== 'GET') writes++;
      expect(res.statusCode, `viewer: ${r.method} ${r.url} → ${res.statusCode}`).toBe(403);
    }
    expect(writes).toBeGreaterThan(50);
    expect(roleAtLeast('viewer', 'member')).toBe(false);
  });

  it('branding by Host: the client app host answers its branding and logo before sign-in; other hosts none', async () => {
    const bad = await h.app.inject({ method: 'POST', url: `/api/workspaces/${client1}/branding/logo`, headers: { cookie: agencyAdmin.cookie, 'x-csrf-token': agencyAdmin.csrf, 'content-type': 'application/octet-stream' }, payload: Buffer.from('<svg onload="alert(1)"/>') });
    expect([bad.statusCode, bad.json().error.message]).toEqual([400, 'the logo must be a PNG, JPEG or WebP image']);
    const big = await h.app.inject({ method: 'POST', url: `/api/workspaces/${client1}/branding/logo`, headers: { cookie: agencyAdmin.cookie, 'x-csrf-token': agencyAdmin.csrf, 'content-type': 'application/octet-stream' }, payload: Buffer.concat([PNG, Buffer.alloc(300 * 1024)]) });
    expect([400, 413]).toContain(big.statusCode);
    const up = await h.app.inject({ method: 'POST', url: `/api/workspaces/${client1}/branding/logo`, headers: { cookie: agencyAdmin.cookie, 'x-csrf-token': agencyAdmin.csrf, 'content-type': 'application/octet-stream' }, payload: PNG });
    expect(up.statusCode, up.body).toBe(200);
    expect(up.json().logoUrl).toMatch(/\/branding\/logo\?v=1$/);
    // The app host is a custom host of purpose 'app' (the tracking domains' table and job).
    expect(await setDomain(h.store.db, client1, 'app.northwind.test', Date.now(), 'app')).toBe('set');
    expect(await setDomain(h.store.db, client2, 'app.northwind.test', Date.now(), 'app')).toBe('taken');
    const b = await h.app.inject({ method: 'GET', url: '/api/branding', headers: { host: 'app.northwind.test:8080' } });
    expect(b.json().branding).toEqual({ displayName: 'Northwind Sales', primaryColor: '#1a237e', accentColor: '#ff6600', logoUrl: '/api/branding/logo?v=1' });
    const logo = await h.app.inject({ method: 'GET', url: '/api/branding/logo', headers: { host: 'app.northwind.test' } });
    expect([logo.statusCode, logo.headers['content-type'], logo.headers['x-content-type-options']]).toEqual([200, 'image/png', 'nosniff']);
    expect(logo.rawPayload.equals(PNG)).toBe(true);
    expect((await h.app.inject({ method: 'GET', url: '/api/branding', headers: { host: 'localhost' } })).json().branding).toBeNull();
    expect((await h.app.inject({ method: 'GET', url: '/api/branding/logo', headers: { host: 'other.test' } })).statusCode).toBe(404);
    // A colour that is not one is refused in plain words.
    const wrong = await agencyAdmin.call('PUT', `/api/workspaces/${client1}/branding`, { displayName: 'X', primaryColor: 'blue', accentColor: '#fff' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('a colour such as #3d5afe');
  });

  it('the logo is removed by an admin only: gone from the app host and the portal, name and colours kept, the URL versioned', async () => {
    expect((await viewer.call('DELETE', `/api/workspaces/${client1}/branding/logo`)).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/api/branding/logo', headers: { host: 'app.northwind.test' } })).statusCode).toBe(200);
    const del = await agencyAdmin.call('DELETE', `/api/workspaces/${client1}/branding/logo`);
    expect(del.statusCode, del.body).toBe(200);
    expect(del.json()).toEqual({ displayName: 'Northwind Sales', primaryColor: '#1a237e', accentColor: '#ff6600', logoUrl: null });
    const row = await h.store.db.selectFrom('workspace_branding').select(['logo', 'logo_type', 'logo_version']).where('workspace_id', '=', client1).executeTakeFirstOrThrow();
    expect(row).toEqual({ logo: null, logo_type: null, logo_version: 2 });
    expect((await h.app.inject({ method: 'GET', url: '/api/branding', headers: { host: 'app.northwind.test' } })).json().branding.logoUrl).toBeNull();
    expect((await h.app.inject({ method: 'GET', url: '/api/branding/logo', headers: { host: 'app.northwind.test' } })).statusCode).toBe(404);
    expect((await agencyAdmin.call('GET', `/api/workspaces/${client1}/branding/logo`)).statusCode).toBe(404);
    // Twice is harmless: nothing left to remove, nothing audited.
    expect((await agencyAdmin.call('DELETE', `/api/workspaces/${client1}/branding/logo`)).json().logoUrl).toBeNull();
    const audits = await h.store.db.selectFrom('audit_event').select('detail').where('workspace_id', '=', client1).where('action', '=', 'settings.changed').execute();
    expect(audits.filter((a) => JSON.stringify(a.detail).includes('"brandingLogo":"removed"'))).toHaveLength(1);
    // An upload after it gets a fresh URL.
    const up = await h.app.inject({ method: 'POST', url: `/api/workspaces/${client1}/branding/logo`, headers: { cookie: agencyAdmin.cookie, 'x-csrf-token': agencyAdmin.csrf, 'content-type': 'application/octet-stream' }, payload: PNG });
    expect(up.json().logoUrl).toMatch(/\/branding\/logo\?v=3$/);
  });

  it('per-client usage over a period counts known rows, and the CSV says the same', async () => {
    const db = h.store.db;
    const r = seededRandom('usage');
    const id = () => newId(Date.now(), r);
    const old = new Date('2020-01-15T12:00:00Z');
    const enrollmentId = graph.enrollmentId!;
    // Three emails sent today, one in 2020 (outside), one outbound without an enrollment (warmup-like: not a send).
    for (const [i, at, enr] of [[1, new Date(), enrollmentId], [2, new Date(), enrollmentId], [3, new Date(), enrollmentId], [4, old, enrollmentId], [5, new Date(), null]] as const) {
      await db.insertInto('message').values({ id: id(), workspace_id: client1, mailbox_id: graph.mailboxId!, enrollment_id: enr, direction: 'outbound', message_id: `<out-${i}@northwind.test>`, at }).execute();
    }
    await db.insertInto('mailbox').values({ id: id(), workspace_id: client1, user_id: null, email: 'second@northwind.test', provider: 'smtp_imap' }).execute();
    await db.insertInto('lead').values({ id: id(), workspace_id: client1, email: 'old@prospects.test', email_norm: 'old@prospects.test', created_at: old }).execute();
    const today = new Date().toISOString().slice(0, 10);
    const since = new Date(Date.now() - 200 * 86_400_000).toISOString().slice(0, 10);
    const res = await agencyAdmin.call('GET', `/api/workspaces/${agency}/agency/clients?from=${since}&to=${today}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ isClient: boolean; clients: Array<{ id: string; name: string; usage: Record<string, number> }> }>();
    expect(body.isClient).toBe(false);
    expect(body.clients.map((c) => c.name)).toEqual(['Contoso', 'Northwind']);
    // seedGraph: one mailbox, one lead, one reply today; seats: the member and the viewer (the agency's admin is no seat).
    expect(body.clients.find((c) => c.id === client1)!.usage).toEqual({ sends: 3, replies: 1, mailboxes: 2, leads: 1, seats: 2 });
    expect(body.clients.find((c) => c.id === client2)!.usage).toEqual({ sends: 0, replies: 0, mailboxes: 0, leads: 0, seats: 0 });
    const in2020 = (await agencyAdmin.call('GET', `/api/workspaces/${agency}/agency/clients?from=2020-01-01&to=2020-12-31`)).json<typeof body>();
    expect(in2020.clients.find((c) => c.id === client1)!.usage).toEqual({ sends: 1, replies: 0, mailboxes: 2, leads: 1, seats: 2 });
    const csv = await agencyAdmin.call('GET', `/api/workspaces/${agency}/agency/usage.csv?from=${since}&to=${today}`);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.body.split('\r\n')[0] ?? csv.body.split('\n')[0]).toContain('client_id,client,from,to,sends,replies,mailboxes,leads,seats');
    expect(csv.body).toContain(`${client1},Northwind,${since},${today},3,1,2,1,2`);
    const reversed = await agencyAdmin.call('GET', `/api/workspaces/${agency}/agency/clients?from=2025-01-02&to=2025-01-01`);
    expect(reversed.statusCode).toBe(400);
  });
});
