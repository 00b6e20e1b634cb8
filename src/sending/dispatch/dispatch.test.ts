/**
 * The dispatcher and the claim-time reservation against a real store, both backends: caps in the
 * mailbox's local day, restarts, what counts against the budget, out-of-quota requests moved (not
 * piled up), and shared caps.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim/sim-clock.ts';
import { migrate } from '../../store/migrate.ts';
import { openStore, type Store } from '../../store/store.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { isAllowed, parseWindow } from '../../calendar/index.ts';
import { Dispatcher, mailboxesToPlan, nextSendAt } from './dispatcher.ts';
import { planMailboxes } from './plan.ts';
import { releaseSlot, reserveSlot } from './reserve.ts';
import { allDay, claimAndSend, markSent, seed } from '../../../test/dispatch/seed.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
// Monday 1 June 2026, 06:00 in New York.
const MON_0600_NY = Date.UTC(2026, 5, 1, 10, 0);
const localDate = (t: number, zone: string) => DateTime.fromMillis(t, { zone }).toISODate()!;

async function requests(store: Store, mailboxId?: string) {
  let q = store.db.selectFrom('send_request').selectAll();
  if (mailboxId) q = q.where('mailbox_id', '=', mailboxId);
  return q.orderBy('send_at').orderBy('id').execute();
}

describe.each(testBackends())('dispatch on %s', (backend) => {
  let store: TestStore;

  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });
  beforeEach(async () => {
    await sql`truncate table workspace cascade`.execute(store.db);
  });

  it('plans every queued request inside the caps, the gap, the working day and the prospect window; re-planning changes nothing', async () => {
    const clock = new SimClock(MON_0600_NY);
    const s = await seed(store, {
      now: clock.now(),
      mailboxes: [{ dailyCap: 10 }, { dailyCap: 10, hourlyCap: 3 }],
      sequences: [{ window: 'Mon-Fri 08:00-18:00', pool: [0, 1] }],
      requests: Array.from({ length: 50 }, (_, i) => ({ mailbox: i % 2, dueAt: MON_0600_NY + i * MIN, leadZone: i % 3 ? 'America/Chicago' : 'America/New_York' })),
    });
    const report = await planMailboxes({ store, clock }, s.mailboxIds);
    expect(report).toMatchObject({ mailboxes: 2, requests: 50, planned: 50, unplaced: 0, written: 50, errors: [] });
    const window = parseWindow('Mon-Fri 08:00-18:00');
    for (const mb of s.mailboxIds) {
      const rows = await requests(store, mb);
      const perDay = new Map<string, number>();
      let prev = -Infinity;
      for (const r of rows) {
        const at = r.send_at!.getTime();
        expect(at).toBeGreaterThanOrEqual(r.due_at.getTime());
        expect(at - prev).toBeGreaterThanOrEqual(8 * MIN);
        prev = at;
        const d = localDate(at, 'America/New_York');
        perDay.set(d, (perDay.get(d) ?? 0) + 1);
        const local = DateTime.fromMillis(at, { zone: 'America/New_York' });
        expect(local.weekday).toBeLessThanOrEqual(5);
        const minutes = local.hour * 60 + local.minute;
        expect(minutes).toBeGreaterThanOrEqual(8 * 60 + 20);
        expect(minutes).toBeLessThan(17 * 60 + 40);
        const lead = await store.db.selectFrom('enrollment').select('time_zone').where('id', '=', r.enrollment_id).executeTakeFirstOrThrow();
        expect(isAllowed(at, { zone: lead.time_zone, window, skipHolidays: false, jitterMinutes: 0 })).toBe(true);
      }
      for (const n of perDay.values()) expect(n).toBeLessThanOrEqual(10);
      expect(perDay.get('2026-06-01')).toBeGreaterThanOrEqual(9);
    }
    // Rolling hour: the second mailbox never sends more than 3 in 60 minutes.
    const second = (await requests(store, s.mailboxIds[1])).map((r) => r.send_at!.getTime());
    for (const t of second) expect(second.filter((u) => u > t - HOUR && u <= t).length).toBeLessThanOrEqual(3);
    // Nothing is left to plan, and a second pass over the same state writes nothing.
    expect(await mailboxesToPlan(store.db, clock.now())).toEqual([]);
    const again = await planMailboxes({ store, clock }, s.mailboxIds);
    expect(again).toMatchObject({ planned: 50, written: 0 });
  });

  it("counts the daily cap in the mailbox's local day across the server's midnight, falling back to the workspace's zone", async () => {
    // 23:00 UTC on Monday 1 June is 08:00 on Tuesday in Tokyo; the server's midnight is 09:00 there.
    const t = Date.UTC(2026, 5, 1, 23, 0);
    const clock = new SimClock(t);
    const s = await seed(store, {
      now: t,
      workspaceZone: 'Asia/Tokyo',
      mailboxes: [{ zone: null, dailyCap: 3, pacing: { ...allDay, gapMinutes: [1, 2] } }],
      sequences: [{ window: 'any', pool: [0] }],
      requests: Array.from({ length: 6 }, () => ({ mailbox: 0, dueAt: t, leadZone: 'UTC' })),
    });
    const [mb] = s.mailboxIds as [string];
    const sendAt = async (at: number) => {
      await store.db.updateTable('send_request').set({ send_at: new Date(at), planned_at: new Date(at) }).where('state', '=', 'queued').execute();
      return claimAndSend(store, mb, at);
    };
    expect((await sendAt(t)).kind).toBe('sent');
    expect((await sendAt(t + 5 * MIN)).kind).toBe('sent');
    expect((await sendAt(t + 10 * MIN)).kind).toBe('sent');
    // 00:30 UTC: a new day for the server, still Tuesday in Tokyo: refused, the cap is spent.
    const refused = await sendAt(Date.UTC(2026, 5, 2, 0, 30));
    expect(refused.kind).toBe('refused');
    if (refused.kind === 'refused' && !refused.reservation.granted) {
      expect(refused.reservation.reason).toMatch(/daily cap reached \(3 of 3 on 2026-06-02\)/);
      // The next allowed instant is Wednesday 00:30 in Tokyo (the working day starts then): 15:30 UTC.
      expect(refused.reservation.retryAt).toBe(Date.UTC(2026, 5, 2, 15, 30));
    }
    // The refused request went back to the planner, which puts the rest on Wednesday in Tokyo.
    clock.advanceTo(Date.UTC(2026, 5, 2, 0, 31));
    await planMailboxes({ store, clock }, [mb]);
    const queued = (await requests(store, mb)).filter((r) => r.state === 'queued');
    expect(queued).toHaveLength(3);
    for (const r of queued) expect(localDate(r.send_at!.getTime(), 'Asia/Tokyo')).toBe('2026-06-03');
    // The first of them goes when Wednesday's working day opens in Tokyo (00:30, 15:30 UTC), not before.
    const first = queued[0]!.send_at!.getTime();
    expect(first).toBe(Date.UTC(2026, 5, 2, 15, 30));
    expect((await claimAndSend(store, mb, first - 1)).kind).toBe('empty');
    expect((await claimAndSend(store, mb, first)).kind).toBe('sent');
  });

  it('deferred and cancelled sends do not consume the budget; only sends handed to a server do', async () => {
    const t = MON_0600_NY;
    const s = await seed(store, {
      now: t,
      mailboxes: [{ dailyCap: 2, pacing: { ...allDay, gapMinutes: [1, 2] } }],
      sequences: [{ window: 'any', pool: [0] }],
      requests: Array.from({ length: 5 }, () => ({ mailbox: 0, dueAt: t })),
    });
    const [r1, r2, r3, r4, r5] = s.requestIds as [string, string, string, string, string];
    const reserve = (id: string, at: number) => store.db.transaction().execute((tx) => reserveSlot(tx, id, at));
    // r1 is claimed, then a transient failure sends it back to the queue (outbox: retry-later) and
    // the slot is released in that transaction.
    expect(await reserve(r1, t)).toMatchObject({ granted: true });
    await store.db.transaction().execute(async (tx) => {
      await tx.updateTable('send_request').set({ state: 'in_flight' }).where('id', '=', r1).execute();
      expect(await releaseSlot(tx, r1)).toBe(false); // in flight: not released
      await tx.updateTable('send_request').set({ state: 'queued', due_at: new Date(t + HOUR) }).where('id', '=', r1).execute();
      expect(await releaseSlot(tx, r1)).toBe(true);
    });
    // r2 is claimed, then lastLook cancels it before the transport, and nobody releases it: its
    // state alone stops it counting.
    expect(await reserve(r2, t + 2 * MIN)).toMatchObject({ granted: true });
    await store.db.updateTable('send_request').set({ state: 'cancelled' }).where('id', '=', r2).execute();
    // Two real sends still fit; the third does not.
    expect(await reserve(r3, t + 4 * MIN)).toMatchObject({ granted: true });
    await store.db.updateTable('send_request').set({ state: 'sent' }).where('id', '=', r3).execute();
    expect(await reserve(r4, t + 6 * MIN)).toMatchObject({ granted: true });
    await store.db.updateTable('send_request').set({ state: 'unknown' }).where('id', '=', r4).execute();
    const refused = await reserve(r5, t + 8 * MIN);
    expect(refused).toMatchObject({ granted: false });
    expect(refused.granted ? '' : refused.reason).toMatch(/daily cap reached \(2 of 2/);
    // A refusal leaves the request queued and hands it back to the planner.
    const row = await store.db.selectFrom('send_request').selectAll().where('id', '=', r5).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: 'queued', send_at: null, planned_at: null });
    expect(await mailboxesToPlan(store.db, t)).toEqual(s.mailboxIds);
    // The released r1 (due again in an hour, slot cleared) is waiting for the planner too.
    const r1row = await store.db.selectFrom('send_request').selectAll().where('id', '=', r1).executeTakeFirstOrThrow();
    expect(r1row).toMatchObject({ state: 'queued', claimed_at: null, send_at: null });
  });

  it('keeps the buckets across a restart: the usage is in the store, not in memory', async () => {
    const dir = backend === 'pglite' ? mkdtempSync(join(tmpdir(), 'cadenza-pacing-')) : undefined;
    const open = async (): Promise<Store> => {
      if (dir) {
        const st = await openStore({ dataDir: dir });
        await migrate(st);
        return st;
      }
      return openStore({ databaseUrl: store.url!, poolSize: 2 });
    };
    let first: Store | undefined = await open();
    try {
      const t = MON_0600_NY;
      const clock = new SimClock(t);
      const s = await seed(first, {
        now: t,
        seed: 99,
        mailboxes: [{ dailyCap: 3, pacing: { ...allDay, gapMinutes: [5, 6] } }],
        sequences: [{ window: 'any', pool: [0] }],
        requests: Array.from({ length: 5 }, () => ({ mailbox: 0, dueAt: t })),
      });
      const [mb] = s.mailboxIds as [string];
      await planMailboxes({ store: first, clock }, [mb]);
      const sent: number[] = [];
      for (;;) {
        const next = await nextSendAt(first.db, mb);
        if (next === null || localDate(next, 'America/New_York') !== '2026-06-01') break;
        clock.advanceTo(next);
        expect((await claimAndSend(first, mb, next)).kind).toBe('sent');
        sent.push(next);
      }
      expect(sent).toHaveLength(3);
      await first.close();
      first = undefined;
      // A new process: nothing in memory, the same store.
      const second = await open();
      try {
        const later = sent[2]! + 10 * MIN;
        clock.advanceTo(later);
        const [r4] = (await requests(second, mb)).filter((r) => r.state === 'queued');
        const res = await second.db.transaction().execute((tx) => reserveSlot(tx, r4!.id, later));
        expect(res).toMatchObject({ granted: false });
        await planMailboxes({ store: second, clock }, [mb]);
        for (const r of (await requests(second, mb)).filter((x) => x.state === 'queued')) {
          expect(localDate(r.send_at!.getTime(), 'America/New_York')).toBe('2026-06-02');
        }
      } finally {
        await second.close();
      }
    } finally {
      await first?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('moves out-of-quota requests to their next allowed slot; after an outage the backlog is not sent in a burst', async () => {
    const clock = new SimClock(MON_0600_NY);
    const s = await seed(store, {
      now: clock.now(),
      mailboxes: [{ dailyCap: 5 }],
      sequences: [{ window: 'Mon-Fri 09:00-17:00', pool: [0] }],
      requests: Array.from({ length: 12 }, (_, i) => ({ mailbox: 0, dueAt: MON_0600_NY + i * MIN })),
    });
    const [mb] = s.mailboxIds as [string];
    await planMailboxes({ store, clock }, [mb]);
    const days = (await requests(store, mb)).map((r) => localDate(r.send_at!.getTime(), 'America/New_York'));
    expect(days).toEqual([...Array(5).fill('2026-06-01'), ...Array(5).fill('2026-06-02'), ...Array(2).fill('2026-06-03')]);
    // The sender is down all Monday. On Tuesday at 10:00 it finds Monday's five slots past.
    const tue10 = Date.UTC(2026, 5, 2, 14, 0);
    clock.advanceTo(tue10);
    const outcomes = [];
    for (let i = 0; i < 6; i++) outcomes.push((await claimAndSend(store, mb, tue10)).kind);
    // One goes; the others are refused by the gap (each goes back to the planner), none in a burst.
    expect(outcomes.filter((k) => k === 'sent')).toHaveLength(1);
    const dispatcher = new Dispatcher({ store, clock });
    await dispatcher.runOnce();
    // Simulate the rest of the week: claims at each planned instant.
    const sentAt: number[] = [tue10];
    for (let guard = 0; guard < 100; guard++) {
      const next = await nextSendAt(store.db, mb);
      if (next === null) break;
      clock.advanceTo(next);
      const r = await claimAndSend(store, mb, next);
      if (r.kind === 'sent') sentAt.push(next);
      else await dispatcher.runOnce();
    }
    expect(sentAt).toHaveLength(12);
    const perDay = new Map<string, number>();
    for (let i = 0; i < sentAt.length; i++) {
      if (i > 0) expect(sentAt[i]! - sentAt[i - 1]!).toBeGreaterThanOrEqual(8 * MIN);
      const d = localDate(sentAt[i]!, 'America/New_York');
      perDay.set(d, (perDay.get(d) ?? 0) + 1);
    }
    expect([...perDay.values()].every((n) => n <= 5)).toBe(true);
    expect(perDay.get('2026-06-01')).toBeUndefined();
  });

  it('divides sequence and workspace caps across mailboxes, in the workspace\'s local day', async () => {
    const clock = new SimClock(MON_0600_NY);
    const s = await seed(store, {
      now: clock.now(),
      workspaceCap: 12,
      mailboxes: [{}, {}, {}],
      sequences: [
        { window: 'any', pool: [0, 1, 2], cap: 5 },
        { window: 'any', pool: [0, 1, 2] },
      ],
      requests: Array.from({ length: 60 }, (_, i) => ({ mailbox: i % 3, sequence: i % 2, dueAt: MON_0600_NY })),
    });
    // Planning one mailbox plans the whole capped workspace.
    const report = await planMailboxes({ store, clock }, [s.mailboxIds[0]!]);
    expect(report.mailboxes).toBe(3);
    const rows = await store.db
      .selectFrom('send_request as r')
      .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
      .select(['r.send_at', 'e.sequence_id'])
      .execute();
    const ws = new Map<string, number>();
    const capped = new Map<string, number>();
    for (const r of rows) {
      const d = localDate(r.send_at!.getTime(), 'America/New_York');
      ws.set(d, (ws.get(d) ?? 0) + 1);
      if (r.sequence_id === s.sequenceIds[0]) capped.set(d, (capped.get(d) ?? 0) + 1);
    }
    expect(ws.get('2026-06-01')).toBe(12);
    expect(capped.get('2026-06-01')).toBe(5);
    for (const n of ws.values()) expect(n).toBeLessThanOrEqual(12);
    for (const n of capped.values()) expect(n).toBeLessThanOrEqual(5);
  });

  it('leaves a request whose prospect window never meets the working day unplaced, with the reason', async () => {
    const clock = new SimClock(MON_0600_NY);
    const s = await seed(store, {
      now: clock.now(),
      mailboxes: [{}],
      sequences: [{ window: 'Mon-Fri 09:00-17:00', pool: [0] }],
      requests: [{ mailbox: 0, dueAt: MON_0600_NY, leadZone: 'Asia/Tokyo' }, { mailbox: 0, dueAt: MON_0600_NY }],
    });
    const report = await planMailboxes({ store, clock }, s.mailboxIds, { horizonDays: 5 });
    expect(report).toMatchObject({ planned: 1, unplaced: 1 });
    const tokyo = await store.db.selectFrom('send_request').selectAll().where('id', '=', s.requestIds[0]!).executeTakeFirstOrThrow();
    expect(tokyo.send_at).toBeNull();
    expect(tokyo.planned_at).not.toBeNull();
    expect(tokyo.plan_note).toMatch(/prospect's send window meets the mailbox's working day/);
    // Planned (with no slot) is not "to plan": the dispatcher does not spin on it before its daily re-plan.
    expect(await mailboxesToPlan(store.db, clock.now())).toEqual([]);
    const plan = await store.db.selectFrom('mailbox_plan').selectAll().executeTakeFirstOrThrow();
    expect(plan).toMatchObject({ planned: 1, unplaced: 1 });
    expect(localDate(plan.replan_at!.getTime(), 'America/New_York')).toBe('2026-06-02');
    clock.advanceTo(plan.replan_at!.getTime());
    expect(await mailboxesToPlan(store.db, clock.now())).toEqual(s.mailboxIds);
  });

  it('reports a mailbox with unreadable settings and plans the others', async () => {
    const clock = new SimClock(MON_0600_NY);
    const s = await seed(store, {
      now: clock.now(),
      mailboxes: [{ pacing: { gapMinutes: [15, 8] } }, { ramp: { start: -1, step: 2 } }, {}],
      sequences: [{ window: 'any', pool: [0, 1, 2] }],
      requests: [0, 1, 2].map((m) => ({ mailbox: m, dueAt: MON_0600_NY })),
    });
    const report = await planMailboxes({ store, clock }, s.mailboxIds);
    expect(report.errors.map((e) => e.mailboxId).sort()).toEqual(s.mailboxIds.slice(0, 2).sort());
    expect(report.errors[0]!.message).toMatch(/invalid/);
    expect(report).toMatchObject({ planned: 1, unplaced: 2 });
    const notes = (await requests(store)).map((r) => r.plan_note);
    expect(notes.filter((n) => n?.includes('settings are invalid'))).toHaveLength(2);
  });
});
