import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { pickVariant } from '../sequence/effects.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SequenceCache } from '../sequence/sequence-repo.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { assignArm } from './assignment.ts';
import { settleWinners } from './auto-winner.ts';
import { sequenceExperiments } from './experiments.ts';

const DAY = 86_400_000;

/**
 * The automatic winner: once the verdict has one, it is recorded once, new enrollments all get it,
 * and enrollments already in the experiment keep the arm they had.
 */
describe.each(testBackends())('automatic winner (%s)', (backend) => {
  let store: TestStore;
  const clock = new SimClock(Date.UTC(2026, 2, 2, 9, 0));
  const random = seededRandom('auto-winner');
  let workspaceId: string;
  let sequenceId: string;
  let stepId: string;
  let variantIds: Record<string, string>;
  let enrollments: Array<{ id: string; created_at: Date }>;

  beforeAll(async () => {
    store = await freshStore(backend);
    const now = clock.now();
    workspaceId = newId(now, random);
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'AW', time_zone: 'Europe/London' }).execute();
    await store.db.insertInto('mailbox').values({ id: newId(now, random), workspace_id: workspaceId, email: 'rep@aw.test', provider: 'smtp_imap' }).execute();
    const leadIds = Array.from({ length: 200 }, () => newId(now, random));
    await sql`insert into lead (id, workspace_id, email, email_norm) select u.id, ${workspaceId}, u.e, u.e from unnest(${leadIds}::uuid[], ${leadIds.map((_, i) => `p${i}@aw${i}.test`)}::text[]) as u(id, e)`.execute(store.db);
    const def = validateDefinition({
      key: 'ab',
      name: 'AB',
      window: 'any',
      jitter_minutes: 0,
      steps: [{ key: 'intro', type: 'email', variants: [{ key: 'a', subject: 'A', body: 'A' }, { key: 'b', subject: 'B', body: 'B' }], experiment: { auto_winner: true, min_sample_per_arm: 50, reply_window_days: 7 } }],
    });
    sequenceId = (await applyDefinition(store, { clock, random }, workspaceId, def)).sequenceId;
    await bulkEnroll(store, { clock, random }, { workspaceId, sequenceId, leadIds });
    const service = new EnrollmentService({ store, clock, random });
    clock.advance(60_000);
    while ((await service.fireDue(500)).length > 0);
    const requests = await store.db.selectFrom('send_request as r').innerJoin('variant as v', 'v.id', 'r.variant_id').select(['r.enrollment_id', 'r.step_id', 'v.key', 'v.id']).execute();
    expect(requests).toHaveLength(200);
    stepId = requests[0]!.step_id;
    variantIds = Object.fromEntries(requests.map((r) => [r.key, r.id]));
    // Sent now; b's prospects reply a day later one in two, a's never.
    const at = clock.now();
    let i = 0;
    const events = requests.flatMap((r) => {
      const sent = { workspace_id: workspaceId, enrollment_id: r.enrollment_id, type: 'step_sent', at: new Date(at), payload: JSON.stringify({ event: { type: 'step_sent', stepId: r.step_id } }) };
      const replies = r.key === 'b' && i++ % 2 === 0;
      return replies ? [sent, { workspace_id: workspaceId, enrollment_id: r.enrollment_id, type: 'reply', at: new Date(at + DAY), payload: JSON.stringify({ event: { type: 'reply' } }) }] : [sent];
    });
    await store.db.insertInto('event').values(events).execute();
    enrollments = await store.db.selectFrom('enrollment').select(['id', 'created_at']).execute();
  }, 60_000);
  afterAll(() => store?.destroy());

  it('declares nothing while the windows are open', async () => {
    expect(await settleWinners({ store, clock })).toEqual([]);
  });

  it('declares the better arm once, when the windows closed, and the report shows it', async () => {
    clock.advance(8 * DAY);
    expect(await settleWinners({ store, clock })).toEqual([{ stepId, variantId: variantIds.b }]);
    expect(await settleWinners({ store, clock })).toEqual([]);
    const [x] = await sequenceExperiments(store.db, workspaceId, sequenceId, clock.now());
    expect(x!.declared).toMatchObject({ variantId: variantIds.b, at: new Date(clock.now()).toISOString() });
    expect(x!.declared!.pValue).toBeLessThanOrEqual(0.05);
  });

  it('sends every new enrollment the winner and leaves those enrolled before on their arm', async () => {
    const seq = await new SequenceCache().get(store.db, sequenceId);
    expect(seq.steps[0]!.winner).toEqual({ armId: variantIds.b, since: clock.now() });
    const arms = seq.steps[0]!.variants!;
    const before = enrollments.map((e) => pickVariant(seq, { id: e.id, enrolledAt: new Date(e.created_at).getTime() }, stepId));
    expect(before).toEqual(enrollments.map((e) => assignArm(stepId, e.id, arms)));
    expect(new Set(before)).toEqual(new Set([variantIds.a, variantIds.b]));
    for (let i = 0; i < 50; i++) expect(pickVariant(seq, { id: newId(clock.now(), random), enrolledAt: clock.now() + i }, stepId)).toBe(variantIds.b);
  });

  it('keeps enrollments made after the declaration out of the figures and the ratio check', async () => {
    clock.advance(60_000);
    const now = clock.now();
    const leadIds = Array.from({ length: 60 }, () => newId(now, random));
    await sql`insert into lead (id, workspace_id, email, email_norm) select u.id, ${workspaceId}, u.e, u.e from unnest(${leadIds}::uuid[], ${leadIds.map((_, i) => `late${i}@aw${i}.test`)}::text[]) as u(id, e)`.execute(store.db);
    await bulkEnroll(store, { clock, random }, { workspaceId, sequenceId, leadIds });
    const service = new EnrollmentService({ store, clock, random });
    clock.advance(60_000);
    while ((await service.fireDue(500)).length > 0);
    const late = await store.db.selectFrom('send_request as r').innerJoin('enrollment as e', 'e.id', 'r.enrollment_id').select(['r.enrollment_id', 'r.variant_id']).where('e.lead_id', 'in', leadIds).execute();
    // The engine's own path: every new enrollment's send request carries the winner.
    expect(late.map((r) => r.variant_id)).toEqual(leadIds.map(() => variantIds.b));
    await store.db
      .insertInto('event')
      .values(late.map((r) => ({ workspace_id: workspaceId, enrollment_id: r.enrollment_id, type: 'step_sent', at: new Date(clock.now()), payload: JSON.stringify({ event: { type: 'step_sent', stepId } }) })))
      .execute();
    const [x] = await sequenceExperiments(store.db, workspaceId, sequenceId, clock.now());
    const b = x!.arms.find((a) => a.variantId === variantIds.b)!;
    expect(b.afterWinner).toBe(60);
    expect(x!.arms.reduce((n, a) => n + a.exposures, 0)).toBe(200);
    expect(x!.srm.mismatch).toBe(false);
  });
});
