import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('workspace settings routes (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'A', 'owner@example.test');
    ws = w.workspaceId;
    owner = await login(h.app, 'owner@example.test', w.password);
  }, 60_000);
  afterAll(async () => h?.close());

  it('reads and changes time zone, holidays country and tracking domain', async () => {
    const r = await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { timeZone: 'America/New_York', holidaysCountry: 'US', trackingDomain: 'Links.Acme.com' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ id: ws, name: 'A', timeZone: 'America/New_York', holidaysCountry: 'US', trackingDomain: 'links.acme.com', auditRetentionDays: 365, dkimSelector: null, callRecording: false, callRecordingRetentionDays: 90 });
    const cleared = await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { trackingDomain: null });
    expect(cleared.json().trackingDomain).toBeNull();
    const w = await h.store.db.selectFrom('workspace').select(['settings', 'country']).where('id', '=', ws).executeTakeFirstOrThrow();
    expect(w).toEqual({ settings: {}, country: 'US' });
    expect((await owner.call('GET', `/api/workspaces/${ws}/settings`)).json().timeZone).toBe('America/New_York');
  });

  it("sets and clears the DKIM selector of the workspace's SMTP mailboxes, refusing one that is not a DNS label", async () => {
    expect((await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { dkimSelector: 'S2026' })).json().dkimSelector).toBe('s2026');
    const bad = await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { dkimSelector: 'x; p=' });
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json())).toMatch(/dkimSelector/);
    expect((await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { dkimSelector: null })).json().dkimSelector).toBeNull();
  });

  it('refuses an unknown time zone, a bad country code and a bad tracking domain, naming the field', async () => {
    const tz = await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { timeZone: 'Mars/Olympus' });
    expect(tz.statusCode).toBe(400);
    expect(tz.json().error.details.issues[0].path).toBe('body.timeZone');
    const country = await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { holidaysCountry: 'France' });
    expect(country.json().error.details.issues[0].path).toBe('body.holidaysCountry');
    const domain = await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { trackingDomain: 'http://links.acme.com/x' });
    expect(domain.statusCode).toBe(400);
    expect(domain.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'trackingDomain' } });
  });

  it('public routes ignore a stale key or cookie', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/api/setup', headers: { authorization: 'Bearer cdz_revoked', cookie: 'cadenza_session=old' } });
    expect(r.statusCode).toBe(200);
  });
});
