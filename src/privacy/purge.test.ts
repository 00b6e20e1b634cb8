import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { Leases } from '../ops/leases.ts';
import { purgeExpiredData } from './purge.ts';
import { PURGED_OF_SEEDED, SEEDED_RETENTION, seedPurgeableRows } from '../../test/privacy/purgeable-rows.ts';
import { lastPurgeDay, PRIVACY_PURGE_LEASE, runNightlyPurge } from './purge-role.ts';

const DAY = 86_400_000;
// 2026-03-10 03:00 UTC: past the purge's hour.
const T = Date.UTC(2026, 2, 10, 3);
const WS = '00000000-0000-4000-8000-0000000003a1';
const KEEP = '00000000-0000-4000-8000-0000000003a2';

describe.each(testBackends())('privacy purge (%s)', (backend) => {
  let store: TestStore;

  beforeAll(async () => {
    store = await freshStore(backend);
    const db = store.db;
    await sql`truncate table workspace cascade`.execute(db);
    await db.insertInto('workspace').values([{ id: WS, name: 'purged', settings: JSON.stringify({ retention: SEEDED_RETENTION }) }, { id: KEEP, name: 'kept' }]).execute();
    let n = 1;
    for (const ws of [WS, KEEP]) n = await seedPurgeableRows(db, ws, T, n);
  }, 60_000);
  afterAll(async () => store?.destroy());

  const count = async (table: 'message' | 'event' | 'tracking_event' | 'webhook_delivery' | 'lead_import_reject' | 'phone_call' | 'phone_call_recording' | 'call_transcript' | 'call_capture_quarantine', ws: string) =>
    Number((await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where workspace_id = ${ws}::uuid`.execute(store.db)).rows[0]!.n);

  it('removes what is past each retention, in bounded batches, and nothing of a workspace that keeps everything', async () => {
    const clock = new SimClock(T);
    const r = await purgeExpiredData(store, clock, { batchSize: 1 });
    expect(r.stopped).toBe(false);
    expect(r.counts).toEqual(PURGED_OF_SEEDED);
    // All of it the purged workspace's: the one that keeps everything has no entry.
    expect(r.byWorkspace).toEqual({ [WS]: r.counts });
    // One row per statement, and one more statement per kind to find the end.
    expect(r.batches).toBeGreaterThanOrEqual(8);
    const msgs = await store.db.selectFrom('message').select(['at', 'new_text', 'excerpt']).where('workspace_id', '=', WS).orderBy('at').execute();
    expect(msgs.map((m) => [Math.round((T - m.at.getTime()) / DAY), m.new_text, m.excerpt])).toEqual([
      [40, null, null],
      [1, 'text 1', 'ex 1'],
    ]);
    expect(await count('event', WS)).toBe(1);
    expect(await count('tracking_event', WS)).toBe(1);
    const left = await store.db.selectFrom('webhook_delivery').select('event_id').where('workspace_id', '=', WS).execute();
    expect(left.map((d) => d.event_id)).toEqual(['pending']);
    expect(await count('lead_import_reject', WS)).toBe(0);
    // The old call with no lead went with its recording and transcript; the lead's call, the live
    // call and yesterday's stay.
    const calls = await store.db.selectFrom('phone_call').select(['lead_id', 'state', 'created_at']).where('workspace_id', '=', WS).orderBy('created_at').orderBy('state').execute();
    expect(calls.map((c) => [Math.round((T - c.created_at.getTime()) / DAY), c.lead_id !== null, c.state])).toEqual([
      [40, true, 'ended'],
      [40, false, 'ringing'],
      [1, false, 'ended'],
    ]);
    for (const t of ['phone_call_recording', 'call_transcript'] as const) expect(await count(t, WS)).toBe(0);
    expect(await count('call_capture_quarantine', WS)).toBe(1);
    expect(await count('phone_call', KEEP)).toBe(4);
    for (const t of ['phone_call_recording', 'call_transcript'] as const) expect(await count(t, KEEP)).toBe(1);
    expect(await count('call_capture_quarantine', KEEP)).toBe(2);
    for (const t of ['message', 'event', 'tracking_event'] as const) expect(await count(t, KEEP)).toBe(3);
    expect(await count('webhook_delivery', KEEP)).toBe(2);
    expect(await count('lead_import_reject', KEEP)).toBe(1);
    // Again at once: nothing more to do.
    expect((await purgeExpiredData(store, clock)).counts).toEqual({});
  });

  it('stops between batches when asked', async () => {
    const r = await purgeExpiredData(store, new SimClock(T), { stopping: () => true });
    expect(r).toEqual({ counts: {}, byWorkspace: {}, batches: 0, stopped: true });
  });

  it('runs once a UTC day, after its hour, under the lease', async () => {
    const clock = new SimClock(T - 2 * 3_600_000); // 01:00
    const d = { store, clock, owner: 'p1' };
    expect(await runNightlyPurge(d)).toEqual({ day: '2026-03-10', skipped: 'not yet' });
    clock.advanceTo(T);
    const first = await runNightlyPurge(d);
    expect(first).toMatchObject({ day: '2026-03-10', report: { stopped: false } });
    expect(await runNightlyPurge({ ...d, owner: 'p2' })).toEqual({ day: '2026-03-10', skipped: 'done' });
    const row = await store.db.selectFrom('privacy_purge_day').selectAll().executeTakeFirstOrThrow();
    expect(String(row.day).slice(0, 10) === '2026-03-10' || (row.day as unknown) instanceof Date).toBe(true);
    // Each workspace reads its own counts of the day, never another's (the data was purged by the first test: nothing left).
    expect(await lastPurgeDay(store.db, WS)).toMatchObject({ day: '2026-03-10', counts: {} });
    await store.db.updateTable('privacy_purge_day').set({ workspace_counts: JSON.stringify({ [WS]: { messages: 3 } }) }).execute();
    expect((await lastPurgeDay(store.db, WS))?.counts).toEqual({ messages: 3 });
    expect((await lastPurgeDay(store.db, KEEP))?.counts).toEqual({});
    // A day recorded before counts were kept per workspace says it does not know.
    await store.db.updateTable('privacy_purge_day').set({ workspace_counts: null }).execute();
    expect((await lastPurgeDay(store.db, WS))?.counts).toBeNull();
    // The next day, another process holds the lease: this one leaves the pass to it.
    clock.advanceTo(T + DAY);
    const held = await new Leases(store, clock).acquire(PRIVACY_PURGE_LEASE, 'p2', 60_000);
    expect(held).not.toBeNull();
    expect(await runNightlyPurge(d)).toEqual({ day: '2026-03-11', skipped: 'lease held' });
    await new Leases(store, clock).release(held!);
    expect(await runNightlyPurge(d)).toMatchObject({ day: '2026-03-11', report: {} });
  });
});
