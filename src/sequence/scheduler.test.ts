import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { openStore } from '../store/store.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { applyDefinition } from './apply-definition.ts';
import { bulkEnroll } from './bulk-enroll.ts';
import { validateDefinition } from './definition.ts';
import { EnrollmentService } from './enrollment-service.ts';
import { Scheduler } from './scheduler.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0); // Monday

const def = validateDefinition({
  key: 'seq',
  name: 'Seq',
  window: 'any',
  holidays: false,
  jitter_minutes: 0,
  steps: [
    { key: 'wait', type: 'wait', delay: '10 minutes' },
    { key: 'mail', type: 'email', delay: '20 minutes', subject: 'Hi', body: 'Hello' },
  ],
});

/** Advances the simulated clock in small steps, letting the scheduler's async work settle each time. */
async function run(clock: SimClock, schedulers: Scheduler[], untilMs: number, stepMs = 1000) {
  while (clock.now() < untilMs) {
    clock.advance(stepMs);
    for (const s of schedulers) await s.idle();
  }
}

describe.each(testBackends())('scheduler on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  async function world(leads: number) {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    const clock = new SimClock(T0);
    const random = seededRandom(11);
    const w = await makeWorld(store, { leads, nowMs: T0, random, zones: ['UTC'] });
    const seq = await applyDefinition(store, { clock, random }, w.workspaceId, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: w.workspaceId, sequenceId: seq.sequenceId, leadIds: w.leadIds });
    return { clock, random, seqId: seq.sequenceId };
  }

  const requests = (s: TestStore) => s.db.selectFrom('send_request').select(['enrollment_id', 'created_at']).execute();

  it('fires each timer at its due time, not before, through the wheel', async () => {
    const { clock, random } = await world(50);
    const service = new EnrollmentService({ store, clock, random });
    const scheduler = new Scheduler({ store, service, clock, tickMs: 100 });
    await scheduler.start();
    await run(clock, [scheduler], T0 + 29 * 60_000);
    expect((await requests(store)).length).toBe(0);
    await run(clock, [scheduler], T0 + 31 * 60_000);
    const reqs = await requests(store);
    expect(reqs.length).toBe(50);
    for (const r of reqs) {
      expect(r.created_at.getTime()).toBeGreaterThanOrEqual(T0);
    }
    expect(scheduler.stats.fired).toBe(100); // the wait step and the email step of each
    await scheduler.stop();
  });

  it('forgets nothing across a restart: a new scheduler fires what was due while it was down', async () => {
    const { clock, random } = await world(30);
    const a = new Scheduler({ store, service: new EnrollmentService({ store, clock, random }), clock });
    await a.start();
    await run(clock, [a], T0 + 11 * 60_000, 5000);
    await a.stop();
    clock.advance(60 * 60_000); // down for an hour
    expect((await requests(store)).length).toBe(0);
    const b = new Scheduler({ store, service: new EnrollmentService({ store, clock, random }), clock });
    await b.start();
    await b.idle();
    expect((await requests(store)).length).toBe(30);
    await b.stop();
  });

  it('cancels timers cheaply when enrollments stop before their step', async () => {
    const { clock, random } = await world(40);
    const service = new EnrollmentService({ store, clock, random });
    const scheduler = new Scheduler({ store, service, clock, horizonMs: 60 * 60_000 });
    await scheduler.start();
    await run(clock, [scheduler], T0 + 11 * 60_000, 5000);
    expect(scheduler.pending).toBe(40);
    const ids = (await store.db.selectFrom('enrollment').select('id').execute()).map((r) => r.id);
    for (const id of ids.slice(0, 30)) await service.apply(id, { type: 'reply' });
    expect(scheduler.pending).toBe(10);
    await run(clock, [scheduler], T0 + 40 * 60_000, 5000);
    expect((await requests(store)).length).toBe(10);
    await scheduler.stop();
  });

  it.runIf(backend === 'postgres')('two schedulers in two processes fire every step exactly once', async () => {
    const { clock, random } = await world(200);
    const other = await openStore({ databaseUrl: store.url!, poolSize: 4 });
    try {
      const a = new Scheduler({ store, service: new EnrollmentService({ store, clock, random }), clock, batchSize: 17 });
      const b = new Scheduler({ store: other, service: new EnrollmentService({ store: other, clock, random: seededRandom(99) }), clock, batchSize: 17 });
      await Promise.all([a.start(), b.start()]);
      await run(clock, [a, b], T0 + 35 * 60_000, 30_000);
      const reqs = await requests(store);
      expect(reqs.length).toBe(200);
      expect(a.stats.fired + b.stats.fired).toBe(400);
      await Promise.all([a.stop(), b.stop()]);
    } finally {
      await other.close();
    }
  });
});
