/**
 * The placement duty as the scheduler role runs it (startPlacementDuty, src/app/app.ts), two
 * scheduler processes on one simulated clock, on PGlite and PostgreSQL: receipts with too much junk
 * warn (cap halved) or pause their mailbox at the first pass, once, with one "needs attention"
 * notification however many hourly passes follow; a healthy mailbox is left as it was; junk
 * reported later is judged at the next pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedMember } from '../../../test/api.ts';
import { allDay, seed } from '../../../test/dispatch/seed.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { plantReceipts } from '../../../test/warmup/receipts.ts';
import type { Periodic } from '../../common/periodic.ts';
import { seededRandom } from '../../common/random.ts';
import { fanOut } from '../../api/notify/fanout.ts';
import { listBell } from '../../api/notify/sql/bell.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { setWarmup } from '../membership.ts';
import type { PlacementResult } from './evaluate.ts';
import { PLACEMENT_EVERY_MS, startPlacementDuty } from './placement-role.ts';

const DAY = 86_400_000;
const T = Date.UTC(2026, 5, 1, 14, 0);
type Folders = Array<['inbox' | 'junk', number]>;
const inbox = (n: number, daysAgo = 1): Folders => Array.from({ length: n }, () => ['inbox', daysAgo]);
const junk = (n: number, daysAgo = 1): Folders => Array.from({ length: n }, () => ['junk', daysAgo]);

describe.each(testBackends())('the warmup placement duty on %s', (backend) => {
  let store: TestStore;
  const clock = new SimClock(T);
  const random = seededRandom(`placement-role-${backend}`);
  const passes: Array<PlacementResult[] | null> = [];
  const duties: Periodic[] = [];
  let n = 0;

  beforeAll(async () => {
    store = await freshStore(backend);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(duties.map((d) => d.stop()));
    await store?.destroy();
  });

  /** Waits (real time) until `count` passes of the duties have ended. */
  const passed = async (count: number) => {
    for (let i = 0; i < 2000 && passes.length < count; i++) await new Promise((r) => setTimeout(r, 5));
    expect(passes.length).toBeGreaterThanOrEqual(count);
  };
  /** A workspace with one member and one warmup mailbox whose receipts are `folders`. */
  const mailbox = async (folders: Folders) => {
    const s = await seed(store, { now: T - 40 * DAY, seed: ++n + 300, mailboxes: [{ dailyCap: 40, pacing: allDay }], sequences: [], requests: [] });
    const m = s.mailboxIds[0]!;
    const member = await seedMember(store, s.workspaceId, `owner-${n}-${backend}@placement.test`, 'owner');
    await setWarmup(store.db, s.workspaceId, m, { enabled: true }, T - 40 * DAY);
    await plantReceipts(store.db, random, { mailbox: m, from: 'rep0@acme.test', now: T, tag: `role-${backend}` }, folders);
    return { id: m, workspaceId: s.workspaceId, userId: member.userId };
  };
  const state = async (id: string) =>
    store.db.selectFrom('mailbox').innerJoin('warmup_member', 'warmup_member.mailbox_id', 'mailbox.id').select(['mailbox.health', 'mailbox.health_reason', 'warmup_member.cap_factor']).where('mailbox.id', '=', id).executeTakeFirstOrThrow();
  const told = async (w: { workspaceId: string; userId: string }) => {
    while ((await fanOut({ store, clock })) > 0);
    const events = await store.db.selectFrom('notification_event').select(['title', 'body']).where('workspace_id', '=', w.workspaceId).where('kind', '=', 'mailbox_attention').orderBy('id').execute();
    const bell = (await listBell(store.db, w.workspaceId, w.userId, { limit: 50, unreadOnly: false })).items.filter((i) => i.kind === 'mailbox_attention').map((i) => i.title);
    return { events, bell };
  };

  it('warns or pauses a junk-heavy mailbox once over a day of hourly passes, tells its owner once, and leaves a healthy one alone', async () => {
    const warned = await mailbox([...inbox(7), ...junk(1, 1), ...junk(1, 2), ...junk(1, 3)]);
    const paused = await mailbox([...inbox(4), ...junk(6, 2)]);
    const healthy = await mailbox([...inbox(19), ...junk(1, 4)]);
    // Two scheduler processes: the lease lets one judge at a time; the other's pass may find it taken.
    for (const owner of ['scheduler-a', 'scheduler-b']) duties.push(startPlacementDuty({ store, clock, owner, onPass: (r) => passes.push(r) }));
    await passed(2);
    expect(passes.some((p) => p !== null)).toBe(true);
    expect(await state(warned.id)).toMatchObject({ health: 'warning', health_reason: expect.stringMatching(/^warmup placement: 70% of 10 /), cap_factor: 0.5 });
    expect(await state(paused.id)).toMatchObject({ health: 'paused', health_reason: expect.stringMatching(/^warmup placement: 40% of 10 .*paused$/) });
    expect(await state(healthy.id)).toEqual({ health: 'ok', health_reason: null, cap_factor: 1 });

    for (let h = 1; h <= 24; h++) {
      clock.advance(PLACEMENT_EVERY_MS);
      await passed(2 + 2 * h);
    }
    expect(await state(warned.id)).toMatchObject({ health: 'warning', cap_factor: 0.5 });
    expect(await state(paused.id)).toMatchObject({ health: 'paused' });
    expect(await state(healthy.id)).toEqual({ health: 'ok', health_reason: null, cap_factor: 1 });
    const w = await told(warned);
    expect(w.events.map((e) => e.title)).toEqual(['rep0@acme.test needs attention']);
    expect(w.events[0]!.body).toMatch(/^warmup placement: 70% of 10 /);
    expect(w.bell).toEqual(['rep0@acme.test needs attention']);
    const p = await told(paused);
    expect(p.events.map((e) => e.title)).toEqual(['rep0@acme.test is paused']);
    expect(p.bell).toEqual(['rep0@acme.test is paused']);
    expect(await told(healthy)).toEqual({ events: [], bell: [] });

    // Receivers now report the healthy mailbox's mail in junk: the next hourly pass judges it, once.
    await plantReceipts(store.db, random, { mailbox: healthy.id, from: 'rep0@acme.test', now: clock.now(), tag: `role-${backend}` }, junk(10, 0.5));
    const before = passes.length;
    for (let h = 1; h <= 3; h++) {
      clock.advance(PLACEMENT_EVERY_MS);
      await passed(before + 2 * h);
    }
    expect(await state(healthy.id)).toMatchObject({ health: 'warning', health_reason: expect.stringMatching(/^warmup placement: 63% of 30 /), cap_factor: 0.5 });
    expect((await told(healthy)).events.map((e) => e.title)).toEqual(['rep0@acme.test needs attention']);

    // The warned mailbox leaves warmup: no pass judges it any more, so its placement warning goes
    // now; the paused one stays paused for a person to resume.
    await setWarmup(store.db, warned.workspaceId, warned.id, { enabled: false }, clock.now());
    await setWarmup(store.db, paused.workspaceId, paused.id, { enabled: false }, clock.now());
    const left = passes.length;
    clock.advance(PLACEMENT_EVERY_MS);
    await passed(left + 2);
    expect(passes.slice(left).flatMap((p) => (p ?? []).map((r) => r.mailboxId))).not.toContain(warned.id);
    expect(await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', warned.id).executeTakeFirstOrThrow()).toEqual({ health: 'ok', health_reason: null });
    expect(await store.db.selectFrom('mailbox').select('health').where('id', '=', paused.id).executeTakeFirstOrThrow()).toEqual({ health: 'paused' });
  }, 120_000);

  it('judges without an onPass too, as app.ts starts it (an optional call once skipped the pass with it)', async () => {
    const junky = await mailbox([...inbox(4), ...junk(6, 2)]);
    duties.push(startPlacementDuty({ store, clock, owner: 'scheduler-c' }));
    await expect.poll(async () => (await state(junky.id)).health, { timeout: 10_000, interval: 20 }).toBe('paused');
  }, 60_000);
});
