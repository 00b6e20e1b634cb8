import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { DemoControl } from './control.ts';
import { assertStoreFreeForDemo } from './run-demo.ts';

describe('DemoControl (the first-run page’s demo inside a server)', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore('pglite');
  });
  afterAll(async () => {
    await store?.destroy();
  });

  it('fills the given workspace with the roles suspended, one demo at a time, and ends by itself, retired, roles resumed', async () => {
    const workspaceId = '01a22900-0000-7000-8000-000000000001';
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Acme', time_zone: 'Europe/Paris' }).execute();
    const calls: string[] = [];
    // The control's own timer (when the demo ends) runs on this clock; the demo runs on its own.
    const clock = new SimClock(Date.now());
    const control = new DemoControl({ store, clock, roles: { suspend: async () => void calls.push('suspend'), resume: async () => void calls.push('resume') } });
    const started = await control.start({ workspaceId, leads: 12, rate: 3600, durationMs: 60_000 });
    expect(started.workspaceId).toBe(workspaceId);
    expect(calls).toEqual(['suspend']);
    await expect(control.start({ leads: 5 })).rejects.toMatchObject({ code: 'CONFLICT' });
    const status = await control.status();
    expect(status?.progress.sequences.map((s) => s.enrolled)).toEqual([8, 4]);
    const w = await store.db.selectFrom('workspace').select(['name', 'settings']).where('id', '=', workspaceId).executeTakeFirstOrThrow();
    expect(w.name).toBe('Acme');
    expect(w.settings).toMatchObject({ demo: true, pacing: { workDays: [1, 2, 3, 4, 5, 6, 7] } });

    clock.advance(60_000); // the demo's time is up
    await control.stop(); // joins the stop the timer began
    expect(control.running).toBe(false);
    expect(calls).toEqual(['suspend', 'resume']);
    await expect(assertStoreFreeForDemo(store)).resolves.toBeUndefined();
    expect(await control.status()).toBeNull();
  }, 120_000);

  it('resumes the roles when the demo cannot start', async () => {
    await store.db.insertInto('workspace').values({ id: '01a22900-0000-7000-8000-000000000002', name: 'Live' }).execute();
    await store.db.insertInto('mailbox').values({ id: '01a22900-0000-7000-8000-000000000003', workspace_id: '01a22900-0000-7000-8000-000000000002', email: 'rep@live.test', provider: 'smtp_imap' }).execute();
    const calls: string[] = [];
    const control = new DemoControl({ store, roles: { suspend: async () => void calls.push('suspend'), resume: async () => void calls.push('resume') } });
    await expect(control.start({ leads: 5 })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(calls).toEqual(['suspend', 'resume']);
    expect(control.running).toBe(false);
  });
});
