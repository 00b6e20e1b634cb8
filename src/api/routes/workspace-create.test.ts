import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { createApiKey } from '../auth/api-keys.ts';

describe.each(testBackends())('creating and switching workspaces (%s)', (backend) => {
  let h: ApiHarness;
  let first: string;
  let owner: Browser;
  let other: Browser;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const a = await seedWorkspace(h.store, 'Acme', 'owner@example.test');
    first = a.workspaceId;
    owner = await login(h.app, 'owner@example.test', a.password);
    const b = await seedWorkspace(h.store, 'Other', 'other@example.test');
    other = await login(h.app, 'other@example.test', b.password);
  }, 60_000);
  afterAll(async () => h?.close());

  it('a signed-in person creates a workspace, owns it, and /api/auth/me lists both with roles', async () => {
    const r = await owner.call('POST', '/api/workspaces', { name: '  Acme EMEA ', timeZone: 'Europe/Paris' });
    expect(r.statusCode, r.body).toBe(201);
    const created = r.json();
    expect(created).toMatchObject({ name: 'Acme EMEA', timeZone: 'Europe/Paris', role: 'owner' });
    const me = (await owner.call('GET', '/api/auth/me')).json();
    expect(me.workspaces).toEqual([
      { id: first, name: 'Acme', role: 'owner', agencyId: null, viaAgency: false },
      { id: created.id, name: 'Acme EMEA', role: 'owner', agencyId: null, viaAgency: false },
    ]);
    // Switching is naming the other workspace in the URL: each answers with its own settings.
    expect((await owner.call('GET', `/api/workspaces/${created.id}/settings`)).json()).toMatchObject({ id: created.id, name: 'Acme EMEA', timeZone: 'Europe/Paris' });
    expect((await owner.call('GET', `/api/workspaces/${first}/settings`)).json()).toMatchObject({ id: first, name: 'Acme' });
    const members = (await owner.call('GET', `/api/workspaces/${created.id}/members`)).json().members;
    expect(members).toEqual([expect.objectContaining({ email: 'owner@example.test', role: 'owner', canSignIn: true })]);
    // The owner renames it.
    const renamed = await owner.call('PATCH', `/api/workspaces/${created.id}/settings`, { name: 'Acme Europe' });
    expect(renamed.json().name).toBe('Acme Europe');
    expect((await owner.call('GET', '/api/auth/me')).json().workspaces[1]).toEqual({ id: created.id, name: 'Acme Europe', role: 'owner', agencyId: null, viaAgency: false });
  });

  it('the new workspace is closed to everyone else, and its data stays apart from the first', async () => {
    const created = (await owner.call('POST', '/api/workspaces', { name: 'Private' })).json();
    expect(created.timeZone).toBe('UTC');
    expect((await other.call('GET', `/api/workspaces/${created.id}/settings`)).statusCode).toBe(404);
    expect((await other.call('PATCH', `/api/workspaces/${created.id}/settings`, { name: 'Taken' })).statusCode).toBe(404);
    expect((await other.call('GET', '/api/auth/me')).json().workspaces.map((w: { name: string }) => w.name)).toEqual(['Other']);
    // A lead made in the new workspace is not in the first one.
    const lead = await owner.call('POST', `/api/workspaces/${created.id}/leads`, { email: 'only-here@prospects.test' });
    expect(lead.statusCode, lead.body).toBe(201);
    expect((await owner.call('GET', `/api/workspaces/${first}/leads?search=only-here`)).body).not.toContain('only-here@prospects.test');
    expect((await owner.call('GET', `/api/workspaces/${created.id}/leads?search=only-here`)).body).toContain('only-here@prospects.test');
  });

  it('refuses a blank name, an unknown zone, a call without the CSRF token and an API key', async () => {
    const blank = await owner.call('POST', '/api/workspaces', { name: '   ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().error.details.issues[0].path).toBe('body.name');
    const zone = await owner.call('POST', '/api/workspaces', { name: 'X', timeZone: 'Mars/Olympus' });
    expect(zone.json().error.details.issues[0].path).toBe('body.timeZone');
    expect((await owner.call('POST', '/api/workspaces', { name: 'X' }, { csrf: null })).statusCode).toBe(403);
    const key = await createApiKey(h.store.db, { clock: systemClock, random: seededRandom('ws-key') }, { workspaceId: first, name: 'script', role: 'admin', createdBy: null });
    const byKey = await h.app.inject({ method: 'POST', url: '/api/workspaces', headers: { authorization: `Bearer ${key.key}` }, payload: { name: 'X' } });
    expect(byKey.statusCode).toBe(403);
    expect(await h.store.db.selectFrom('workspace').select('id').where('name', '=', 'X').execute()).toEqual([]);
  });
});
