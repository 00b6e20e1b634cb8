import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import type { PushBus } from './push-bus.ts';
import { Dispatcher } from '../sending/dispatch/dispatcher.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { Scheduler } from '../sequence/scheduler.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { postgresPushBus } from './push-bus.ts';
import { WorkNudges } from './work-nudge.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0); // Monday
const def = validateDefinition({
  key: 'launch',
  name: 'Launch',
  window: 'any',
  holidays: false,
  jitter_minutes: 0,
  mailboxes: ['rep0@acme.test'],
  steps: [{ key: 'hi', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hello' }],
});

describe.each(testBackends())('a nudged scheduler and dispatcher on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(() => store.destroy());

  it('enrollments written behind the scheduler’s back fire at a nudge, and 1,000 nudges cost at most two passes each', async () => {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    const clock = new SimClock(T0);
    const random = seededRandom('nudge');
    const w = await makeWorld(store, { leads: 20, nowMs: T0, random, zones: ['UTC'] });
    const seq = await applyDefinition(store, { clock, random }, w.workspaceId, def);
    const service = new EnrollmentService({ store, clock, random });
    // Refills an hour apart: without a nudge nothing here would read the store again.
    const fired: number[] = [];
    const scheduler = new Scheduler({ store, service, clock, refillEveryMs: 3_600_000, onFired: (n) => fired.push(n) });
    const planned: string[][] = [];
    const dispatcher = new Dispatcher({ store, clock, everyMs: 3_600_000, onPlanned: (ids) => planned.push(ids) });
    await scheduler.start();
    await dispatcher.start();
    try {
      // bulkEnroll writes the enrollments in one statement; the service's listeners hear nothing.
      await bulkEnroll(store, { clock, random }, { workspaceId: w.workspaceId, sequenceId: seq.sequenceId, leadIds: w.leadIds });
      await scheduler.idle();
      expect(await store.db.selectFrom('send_request').select('id').execute()).toHaveLength(0);

      const wakeups = scheduler.stats.wakeups;
      await Promise.all(Array.from({ length: 1000 }, () => scheduler.nudge()));
      expect(scheduler.stats.wakeups - wakeups).toBeLessThanOrEqual(2);
      expect(fired).toEqual([20]);
      const queued = await store.db.selectFrom('send_request').select(['send_at', 'plan_note']).execute();
      expect(queued).toHaveLength(20);
      expect(queued.every((r) => r.send_at === null && r.plan_note === null)).toBe(true);

      const passes = dispatcher.stats.passes;
      await Promise.all(Array.from({ length: 1000 }, () => dispatcher.nudge()));
      expect(dispatcher.stats.passes - passes).toBeLessThanOrEqual(2);
      expect(planned).toEqual([w.mailboxIds]);
      // Pacing decided the slots: 08:00 in New York is before the mailbox's working day.
      const slots = await store.db.selectFrom('send_request').select('send_at').execute();
      expect(slots.every((r) => r.send_at !== null && r.send_at.getTime() >= Date.UTC(2026, 5, 1, 12, 20))).toBe(true);
    } finally {
      await dispatcher.stop();
      await scheduler.stop();
    }
    // A stopped scheduler ignores nudges.
    const wakeups = scheduler.stats.wakeups;
    await scheduler.nudge();
    expect(scheduler.stats.wakeups).toBe(wakeups);
  });
});

describe.skipIf(!testBackends().includes('postgres'))('work nudges between processes (PostgreSQL LISTEN/NOTIFY)', () => {
  let store: TestStore;
  let a: PushBus;
  let b: PushBus;
  beforeAll(async () => {
    store = await freshStore('postgres');
    a = await postgresPushBus({ databaseUrl: store.url!, store, clock: systemClock, random: seededRandom('a') });
    b = await postgresPushBus({ databaseUrl: store.url!, store, clock: systemClock, random: seededRandom('b') });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store?.destroy();
  });

  it('reach the other process coalesced, and this one at once and only once', async () => {
    const api = new WorkNudges({ origin: 'api', bus: a });
    const worker = new WorkNudges({ origin: 'worker', bus: b });
    const heard = { apiEnrollments: 0, workerEnrollments: 0, workerRequests: 0 };
    api.on('enrollments', () => heard.apiEnrollments++);
    worker.on('enrollments', () => heard.workerEnrollments++);
    worker.on('requests', () => heard.workerRequests++);

    for (let i = 0; i < 10_000; i++) api.nudge('enrollments');
    expect(heard.apiEnrollments).toBe(10_000);
    const until = Date.now() + 5_000;
    while (heard.workerEnrollments === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300));
    // One NOTIFY in flight plus one queued, not 10,000.
    expect(heard.workerEnrollments).toBeGreaterThanOrEqual(1);
    expect(heard.workerEnrollments).toBeLessThanOrEqual(2);
    // Its own messages come back on the bus; they are not heard twice.
    expect(heard.apiEnrollments).toBe(10_000);
    expect(heard.workerRequests).toBe(0);
  });

  it("carry a dispatcher's planned mailboxes to the other process, in messages NOTIFY accepts", async () => {
    const sender = new WorkNudges({ origin: 'sender-a', bus: a });
    const other = new WorkNudges({ origin: 'sender-b', bus: b });
    const own: string[][] = [];
    const heard: string[] = [];
    sender.onPlanned((ids) => own.push(ids));
    other.onPlanned((ids) => heard.push(...ids));
    // 1,000 mailbox ids: one payload would pass NOTIFY's 8,000 bytes.
    const ids = Array.from({ length: 1_000 }, (_, i) => `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`);
    sender.planned(ids);
    const until = Date.now() + 5_000;
    while (heard.length < ids.length && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(heard.sort()).toEqual(ids);
    // The publisher's own loops were woken by its pool: its own messages are not heard back.
    expect(own).toEqual([]);
  });
});
