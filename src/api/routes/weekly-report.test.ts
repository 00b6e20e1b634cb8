import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerAndRep, type OwnerAndRep } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

/**
 * The weekly report's settings (issue 18): off until an admin turns it on, the weekday and hour in
 * the workspace's zone, the owner receiving it until a member asks for it, a member choosing only
 * for themselves, and bad input answered in words.
 */
describe.each(testBackends())('weekly report settings (%s)', (backend) => {
  let f: OwnerAndRep;
  let url: string;

  beforeAll(async () => {
    f = await ownerAndRep(backend);
    url = `/api/workspaces/${f.ws}/weekly-report`;
    await f.h.store.db.updateTable('workspace').set({ time_zone: 'Europe/Berlin' }).where('id', '=', f.ws).execute();
  }, 60_000);
  afterAll(() => f?.h.close());

  it('is off by default and goes to the owner', async () => {
    const r = await f.rep.call('GET', url);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ enabled: false, weekday: 1, hour: 8, zone: 'Europe/Berlin', mailConfigured: false, next: null, last: null });
    expect(r.json().members.map((m: { email: string; receives: boolean }) => [m.email, m.receives])).toEqual([
      ['owner@example.test', true],
      ['rep@example.test', false],
    ]);
  });

  it('an admin turns it on at a weekday and hour; a member may not; nonsense is refused in words', async () => {
    expect((await f.rep.call('PUT', url, { enabled: true, weekday: 5, hour: 17 })).statusCode).toBe(403);
    const bad = await f.owner.call('PUT', url, { enabled: true, weekday: 8, hour: 24 });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/weekday is 1 \(Monday\) to 7 \(Sunday\)/);
    expect(bad.body).toMatch(/hour is 0 to 23/);
    const r = await f.owner.call('PUT', url, { enabled: true, weekday: 5, hour: 17 });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ enabled: true, weekday: 5, hour: 17 });
    // The next one is a Friday at 17:00 in Berlin, within a week.
    const next = new Date(r.json().next);
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false }).format(next)).toBe('Fri 17:00');
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    expect((await f.rep.call('GET', url)).json()).toMatchObject({ enabled: true, weekday: 5, hour: 17 });
  });

  it('a member who asks for it receives it instead of the owner, and may stop', async () => {
    const on = await f.rep.call('PUT', `${url}/subscription`, { receive: true });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json().members.map((m: { email: string; optedIn: boolean; receives: boolean }) => [m.email, m.optedIn, m.receives])).toEqual([
      ['owner@example.test', false, false],
      ['rep@example.test', true, true],
    ]);
    const off = await f.rep.call('PUT', `${url}/subscription`, { receive: false });
    expect(off.json().members.map((m: { receives: boolean }) => m.receives)).toEqual([true, false]);
    expect((await f.rep.call('PUT', `${url}/subscription`, { receive: 'yes' })).statusCode).toBe(400);
  });
});
