/**
 * Issue 10: a minute-scale sequence could not be expressed. The per-mailbox gap (8–15 min, and
 * stretched further on a quiet day) turned a 2-minute follow-up into 8–30 minutes, and nothing
 * but the built-in defaults applied. Here the workspace sets a 30 s gap and no day spreading,
 * the mailbox sets nothing, and the real engine and dispatcher run on a simulated clock: step 2
 * is planned ~2 minutes after step 1 went out.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { validateDefinition } from '../../sequence/definition.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { makeWorld } from '../../../test/fixtures/world.ts';
import { Dispatcher } from './dispatcher.ts';
import { claimAndSend } from '../../../test/dispatch/seed.ts';

const MIN = 60_000;
const MON_1000_NY = Date.UTC(2026, 5, 1, 14, 0);

async function plannedAt(store: TestStore, sequenceId: string, stepKey: string): Promise<number | null> {
  const r = (
    await sql<{ send_at: Date | null }>`
      select r.send_at from send_request r join step s on s.id = r.step_id where s.sequence_id = ${sequenceId} and s.key = ${stepKey} and r.state = 'queued'`.execute(store.db)
  ).rows[0];
  return r?.send_at?.getTime() ?? null;
}

describe.each(testBackends())('a minute-scale sequence on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  async function secondStepGap(workspacePacing: Record<string, unknown> | null): Promise<number> {
    const clock = new SimClock(MON_1000_NY);
    const random = seededRandom(`minute-${JSON.stringify(workspacePacing)}`);
    const world = await makeWorld(store, { leads: 1, mailboxes: 1, nowMs: clock.now(), random, workspaceZone: 'America/New_York' });
    if (workspacePacing) await store.db.updateTable('workspace').set({ settings: JSON.stringify({ pacing: workspacePacing }) }).where('id', '=', world.workspaceId).execute();
    const def = validateDefinition({
      key: 'quick',
      name: 'Quick',
      window: 'any',
      holidays: false,
      jitter_minutes: 0,
      mailboxes: ['rep0@acme.test'],
      steps: [
        { key: 'one', type: 'email', subject: 'Hi', body: 'Hello' },
        { key: 'two', type: 'email', delay: '2 minutes', body: 'Following up' },
      ],
    });
    const seq = await applyDefinition(store, { clock, random }, world.workspaceId, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seq.sequenceId, leadIds: world.leadIds });
    const service = new EnrollmentService({ store, clock, random });
    await service.fireDue(10);
    const dispatcher = new Dispatcher({ store, clock });
    await dispatcher.runOnce();
    const first = await plannedAt(store, seq.sequenceId, 'one');
    expect(first).not.toBeNull();
    clock.advanceTo(first!);
    const sent = await claimAndSend(store, world.mailboxIds[0]!, first!);
    expect(sent.kind).toBe('sent');
    const enrollment = await store.db.selectFrom('enrollment').select(['id']).where('sequence_id', '=', seq.sequenceId).executeTakeFirstOrThrow();
    const stepOne = await store.db.selectFrom('step').select('id').where('sequence_id', '=', seq.sequenceId).where('key', '=', 'one').executeTakeFirstOrThrow();
    await service.apply(enrollment.id, { type: 'step_sent', stepId: stepOne.id, at: first! });
    clock.advanceTo(first! + 2 * MIN);
    await service.fireDue(10);
    await dispatcher.runOnce();
    const second = await plannedAt(store, seq.sequenceId, 'two');
    expect(second).not.toBeNull();
    return second! - first!;
  }

  it('a 2-minute follow-up with a 30 s workspace gap is planned ~2 minutes after step 1', async () => {
    const gap = await secondStepGap({ gapMinutes: [0.5, 0.5], spreadDay: false, pickupMinutes: 0, dayStart: '08:00', dayEnd: '18:00', dayJitterMinutes: 0, lunch: null });
    expect(gap).toBeGreaterThanOrEqual(2 * MIN);
    expect(gap).toBeLessThan(2.5 * MIN);
  });

  it('with the built-in pacing the same follow-up waits out the 8-15 minute gap (what the warning is about)', async () => {
    const gap = await secondStepGap(null);
    expect(gap).toBeGreaterThanOrEqual(8 * MIN);
  });
});
