import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import { applyDefinition } from './apply-definition.ts';
import { bulkEnroll } from './bulk-enroll.ts';
import { validateDefinition } from './definition.ts';
import { pickVariant } from './effects.ts';
import { EnrollmentService } from './enrollment-service.ts';
import { SequenceCache } from './sequence-repo.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { assignArm } from '../experiments/assignment.ts';
import { settleWinners } from './auto-winner.ts';
import { sequenceExperiments } from '../experiments/experiments.ts';
import { sequenceLevelExperiments } from './experiment-report.ts';

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

/**
 * A sequence experiment's automatic winner (timing arms: the follow-up's delay): declared once from
 * exposures counted when the follow-up is planned; from then on every new enrollment runs the
 * winning arm (its delay), those enrolled before keep theirs, and the late ones stay out of the figures.
 */
describe.each(testBackends())('automatic winner of a sequence experiment (%s)', (backend) => {
  let store: TestStore;
  const clock = new SimClock(Date.UTC(2026, 2, 2, 9, 0));
  const random = seededRandom('auto-winner-arms');
  let workspaceId: string;
  let sequenceId: string;
  let service: EnrollmentService;
  let before: Array<{ id: string; arm: string; dueAt: number | null }>;

  const enroll = async (n: number, prefix: string) => {
    const now = clock.now();
    const leadIds = Array.from({ length: n }, () => newId(now, random));
    await sql`insert into lead (id, workspace_id, email, email_norm) select u.id, ${workspaceId}, u.e, u.e from unnest(${leadIds}::uuid[], ${leadIds.map((_, i) => `${prefix}${i}@aw${i}.test`)}::text[]) as u(id, e)`.execute(store.db);
    await bulkEnroll(store, { clock, random }, { workspaceId, sequenceId, leadIds });
    return leadIds;
  };
  /** Sends each due intro as the outbox records it: the engine plans the follow-up by the arm's delay. */
  const sendIntros = async (leadIds: string[]) => {
    clock.advance(60_000);
    while ((await service.fireDue(500)).length > 0);
    const requests = await store.db.selectFrom('send_request as r').innerJoin('enrollment as e', 'e.id', 'r.enrollment_id').select(['r.enrollment_id', 'r.step_id']).where('e.lead_id', 'in', leadIds).execute();
    expect(requests).toHaveLength(leadIds.length);
    for (const r of requests) await service.apply(r.enrollment_id, { type: 'step_sent', stepId: r.step_id, at: clock.now() });
  };
  const armsOf = async (leadIds: string[]) =>
    (await store.db.selectFrom('enrollment').select(['id', 'experiment_arms', 'due_at']).where('lead_id', 'in', leadIds).execute()).map((e) => ({ id: e.id, arm: (e.experiment_arms as Record<string, string>).timing!, dueAt: e.due_at?.getTime() ?? null }));

  beforeAll(async () => {
    store = await freshStore(backend);
    service = new EnrollmentService({ store, clock, random });
    workspaceId = newId(clock.now(), random);
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'AW', time_zone: 'Europe/London' }).execute();
    await store.db.insertInto('mailbox').values({ id: newId(clock.now(), random), workspace_id: workspaceId, email: 'rep@aw.test', provider: 'smtp_imap' }).execute();
    const def = validateDefinition({
      key: 'timing',
      name: 'Timing',
      window: 'any',
      jitter_minutes: 0,
      holidays: false,
      steps: [
        { key: 'intro', type: 'email', subject: 'Hi', body: 'Hi' },
        { key: 'follow', type: 'email', delay: '2 days', body: 'Following up' },
      ],
      experiments: [{ key: 'timing', auto_winner: true, min_sample_per_arm: 50, reply_window_days: 7, arms: [{ key: 'soon', steps: { follow: { delay: '1 day' } } }, { key: 'later', steps: { follow: { delay: '3 days' } } }] }],
    });
    sequenceId = (await applyDefinition(store, { clock, random }, workspaceId, def)).sequenceId;
    const leadIds = await enroll(200, 'p');
    await sendIntros(leadIds);
    before = await armsOf(leadIds);
    expect(new Set(before.map((e) => e.arm))).toEqual(new Set(['soon', 'later']));
    // The arms' delays as planned: one day and three days after the intro.
    for (const e of before) expect(e.dueAt! - clock.now()).toBe((e.arm === 'soon' ? 1 : 3) * DAY);
    // 'later' is answered one in two, a day after its follow-up was planned; 'soon' never.
    let i = 0;
    const replies = before.filter((e) => e.arm === 'later' && i++ % 2 === 0);
    await store.db.insertInto('event').values(replies.map((e) => ({ workspace_id: workspaceId, enrollment_id: e.id, type: 'reply', at: new Date(clock.now() + DAY), payload: JSON.stringify({ event: { type: 'reply' } }) }))).execute();
  }, 120_000);
  afterAll(() => store?.destroy());

  it('declares nothing while the windows are open', async () => {
    expect(await settleWinners({ store, clock })).toEqual([]);
  });

  it('declares the better arm once when the windows closed; the report shows it', async () => {
    clock.advance(8 * DAY);
    expect(await settleWinners({ store, clock })).toEqual([{ experimentKey: 'timing', armKey: 'later' }]);
    expect(await settleWinners({ store, clock })).toEqual([]);
    const [x] = await sequenceLevelExperiments(store.db, workspaceId, sequenceId, clock.now());
    expect(x!.declared).toMatchObject({ arm: 'later', at: new Date(clock.now()).toISOString() });
    expect(x!.declared!.pValue).toBeLessThanOrEqual(0.05);
    expect(x!.winner).toBe('later');
  });

  it('runs every new enrollment on the winning arm, leaves earlier ones on theirs, and keeps the new ones out of the figures', async () => {
    const seq = await new SequenceCache().get(store.db, sequenceId);
    expect(seq.experiments![0]!.winner).toEqual({ armKey: 'later', since: clock.now() });
    clock.advance(60_000);
    const late = await enroll(60, 'late');
    await sendIntros(late);
    const lateArms = await armsOf(late);
    expect(lateArms.map((e) => e.arm)).toEqual(late.map(() => 'later'));
    for (const e of lateArms) expect(e.dueAt! - clock.now()).toBe(3 * DAY);
    const earlier = await armsOf((await store.db.selectFrom('lead').select('id').where('email', 'like', 'p%').execute()).map((l) => l.id));
    expect(earlier).toHaveLength(200);
    expect(new Map(earlier.map((e) => [e.id, e.arm]))).toEqual(new Map(before.map((e) => [e.id, e.arm])));
    const [x] = await sequenceLevelExperiments(store.db, workspaceId, sequenceId, clock.now());
    expect(x!.arms.find((a) => a.key === 'later')!.afterWinner).toBe(60);
    expect(x!.arms.reduce((n, a) => n + a.exposures, 0)).toBe(200);
    expect(x!.srm.mismatch).toBe(false);
  });
});
