/**
 * Branching sequences through the enrollment service, on both stores: the facts a branch is
 * decided by are read in the transaction (a person's open counts, an automatic one does not), an
 * arm's steps run only for those who took it, and reply intents notify or move to a nurture.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { makeWorld, type World } from '../../test/fixtures/world.ts';
import { applyDefinition } from './apply-definition.ts';
import { bulkEnroll } from './bulk-enroll.ts';
import { validateDefinition } from './definition.ts';
import { EnrollmentService } from './enrollment-service.ts';

const T0 = Date.UTC(2026, 2, 2, 12, 0); // Monday
const DAY = 86_400_000;

const outreach = {
  key: 'outreach',
  name: 'Outreach',
  window: 'any',
  holidays: false,
  jitter_minutes: 0,
  stop_rules: { on_reply: { interested: 'notify', not_interested: { move_to: 'nurture', after: '4 weeks' } } },
  steps: [
    { key: 'intro', type: 'email', subject: 'Hi', body: 'Hello' },
    {
      key: 'engaged',
      type: 'branch',
      delay: '2 days',
      branches: [
        { key: 'opened', when: { opened: 'intro' }, steps: [{ key: 'a1', type: 'email', body: 'Saw you read it' }] },
        { key: 'otherwise', steps: [{ key: 'b1', type: 'email', body: 'One more' }], then: 'end' },
      ],
    },
    { key: 'rejoin', type: 'email', delay: '1 day', body: 'Last one' },
  ],
};
const nurture = { key: 'nurture', name: 'Nurture', window: 'any', holidays: false, jitter_minutes: 0, steps: [{ key: 'n1', type: 'email', subject: 'Checking in', body: 'Checking back in' }] };

describe.each(testBackends())('branching sequences through the service (%s)', (backend) => {
  let store: TestStore;
  let clock: SimClock;
  let world: World;
  let svc: EnrollmentService;
  let seqId: string;
  let nurtureId: string;
  const random = seededRandom(18);

  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  async function setup(leads: number) {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    clock = new SimClock(T0);
    world = await makeWorld(store, { leads, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    svc = new EnrollmentService({ store, clock, random });
    seqId = (await applyDefinition(store, { clock, random }, world.workspaceId, validateDefinition(outreach))).sequenceId;
    nurtureId = (await applyDefinition(store, { clock, random }, world.workspaceId, validateDefinition(nurture))).sequenceId;
    const r = await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    expect(r.enrolled).toBe(leads);
  }

  /** Fires due timers and sends every queued request (recording step_sent), until nothing is due. */
  async function runUntil(t: number) {
    while (clock.now() < t) {
      clock.advance(Math.min(6 * 3_600_000, t - clock.now()));
      while ((await svc.fireDue(100)).length) {
        /* drain */
      }
      const queued = await store.db.selectFrom('send_request').select(['id', 'enrollment_id', 'step_id']).where('state', '=', 'queued').execute();
      for (const q of queued) {
        await store.db.updateTable('send_request').set({ state: 'sent' }).where('id', '=', q.id).execute();
        await svc.apply(q.enrollment_id, { type: 'step_sent', stepId: q.step_id, at: clock.now() });
      }
    }
  }

  async function stepsOf(enrollmentId: string) {
    const rows = await store.db.selectFrom('send_request as r').innerJoin('step as s', 's.id', 'r.step_id').select('s.key').where('r.enrollment_id', '=', enrollmentId).where('r.state', '=', 'sent').execute();
    return rows.map((r) => r.key).sort();
  }

  it('a person who opened gets the opened arm and rejoins; an automatic open counts for nothing', async () => {
    await setup(2);
    await runUntil(T0 + DAY);
    const [human, machine] = await store.db.selectFrom('enrollment').select(['id', 'lead_id']).where('sequence_id', '=', seqId).orderBy('lead_id').execute();
    for (const [e, verdict] of [
      [human!, 'human'],
      [machine!, 'proxy'],
    ] as const) {
      const sr = await store.db.selectFrom('send_request').select('id').where('enrollment_id', '=', e.id).executeTakeFirstOrThrow();
      await store.db.insertInto('tracking_event').values({ workspace_id: world.workspaceId, send_request_id: sr.id, enrollment_id: e.id, kind: 'open', verdict, at: new Date(clock.now()) }).execute();
    }
    await runUntil(T0 + 10 * DAY);
    expect(await stepsOf(human!.id)).toEqual(['a1', 'intro', 'rejoin']);
    expect(await stepsOf(machine!.id)).toEqual(['b1', 'intro']);
    const rows = await store.db.selectFrom('enrollment').select(['id', 'state', 'branch_choices']).where('sequence_id', '=', seqId).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(human!.id)).toMatchObject({ state: 'finished' });
    expect(Object.values(byId.get(human!.id)!.branch_choices)).toEqual(['opened']);
    expect(Object.values(byId.get(machine!.id)!.branch_choices)).toEqual(['otherwise']);
  });

  it('a not-interested reply moves the lead to the nurture, its first step 4 weeks on; an interested one makes a task', async () => {
    await setup(2);
    await runUntil(T0 + DAY);
    const [a, b] = await store.db.selectFrom('enrollment').select(['id', 'lead_id']).where('sequence_id', '=', seqId).orderBy('lead_id').execute();
    const at = clock.now();
    await svc.apply(a!.id, { type: 'reply', intent: 'not_interested', from: 'x@y.test' });
    await svc.apply(b!.id, { type: 'reply', intent: 'interested', from: 'ana@acme.test' });
    const moved = await store.db.selectFrom('enrollment').selectAll().where('sequence_id', '=', nurtureId).execute();
    expect(moved).toHaveLength(1);
    expect(moved[0]!.lead_id).toBe(a!.lead_id);
    expect(moved[0]!.due_at!.getTime()).toBeGreaterThanOrEqual(at + 28 * DAY);
    const old = await store.db.selectFrom('enrollment').select(['state', 'moved_to']).where('id', '=', a!.id).executeTakeFirstOrThrow();
    // Replied, and pointing at its successor as a person's move leaves it (the lead page's "moved from").
    expect(old).toEqual({ state: 'replied', moved_to: moved[0]!.id });
    const enrolled = await store.db.selectFrom('event').select('payload').where('enrollment_id', '=', moved[0]!.id).where('type', '=', 'enrolled').executeTakeFirstOrThrow();
    expect(enrolled.payload).toMatchObject({ movedFrom: a!.id });
    const tasks = await store.db.selectFrom('task').select(['enrollment_id', 'title', 'state', 'kind']).execute();
    expect(tasks).toEqual([{ enrollment_id: b!.id, title: 'Interested reply from ana@acme.test: follow up', state: 'open', kind: 'manual' }]);
    // The lead then opts out: nobody follows up with them, the notice is cancelled (the enrollment stays replied).
    const out = await svc.apply(b!.id, { type: 'unsubscribe', source: 'link' });
    expect([out.outcome, out.next.state]).toEqual(['applied', 'replied']);
    expect((await store.db.selectFrom('task').select('state').where('enrollment_id', '=', b!.id).executeTakeFirstOrThrow()).state).toBe('cancelled');
  });

  it('a second answer to the old thread after a reply rule moved the lead stops the nurture it went to', async () => {
    await setup(1);
    await runUntil(T0 + DAY);
    const [a] = await store.db.selectFrom('enrollment').select(['id']).where('sequence_id', '=', seqId).execute();
    await svc.apply(a!.id, { type: 'reply', intent: 'not_interested', from: 'x@y.test', messageId: '<notnow@y.test>' });
    const nurtured = await store.db.selectFrom('enrollment').select(['id', 'state']).where('sequence_id', '=', nurtureId).executeTakeFirstOrThrow();
    expect(nurtured.state).toBe('active');
    // The same reply again (a person relabels it): not a new answer; the nurture goes on.
    const same = await svc.apply(a!.id, { type: 'reply', messageId: '<notnow@y.test>' });
    expect([same.outcome, same.next.id]).toEqual(['ignored', a!.id]);
    expect((await store.db.selectFrom('enrollment').select(['state']).where('id', '=', nurtured.id).executeTakeFirstOrThrow()).state).toBe('active');
    const r = await svc.apply(a!.id, { type: 'reply', messageId: '<again@y.test>' });
    expect(r.next.id).toBe(nurtured.id);
    const after = await store.db.selectFrom('enrollment').select(['state']).where('id', '=', nurtured.id).executeTakeFirstOrThrow();
    expect(after.state).toBe('replied');
  });
});
