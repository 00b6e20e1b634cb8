import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { openStore } from '../store/store.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { makeWorld, type World } from '../../test/fixtures/world.ts';
import { applyDefinition } from './apply-definition.ts';
import { bulkEnroll } from './bulk-enroll.ts';
import { validateDefinition } from './definition.ts';
import { EnrollmentService } from './enrollment-service.ts';
import { isAllowed } from '../calendar/index.ts';

const T0 = Date.UTC(2026, 2, 2, 12, 0); // Monday 2 March 2026, 07:00 in New York

function definition(steps: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  return validateDefinition({ key: 'outbound', name: 'Outbound', window: 'Mon-Fri 09:00-17:00', mailboxes: ['rep0@acme.test', 'rep1@acme.test'], steps, ...extra });
}

const threeSteps = [
  { key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hello {{first_name}}', body: 'Hi' },
  { key: 'call', type: 'call', delay: '1 business day', title: 'Call them' },
  { key: 'bump', type: 'email', delay: '2 business days', body: 'Bump' },
];

describe.each(testBackends())('sequence engine on %s', (backend) => {
  let store: TestStore;
  let clock: SimClock;
  let world: World;
  let svc: EnrollmentService;
  const random = seededRandom(7);

  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  async function setup(steps = threeSteps, leads = 20) {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    clock = new SimClock(T0);
    world = await makeWorld(store, { leads, mailboxes: 2, nowMs: T0, random, zones: ['America/New_York', 'Europe/Berlin', 'Asia/Kolkata', null] , countries: ['US', 'DE', 'IN', null] });
    svc = new EnrollmentService({ store, clock, random });
    const summary = await applyDefinition(store, { clock, random }, world.workspaceId, definition(steps));
    return summary.sequenceId;
  }

  async function sendRequests(sequenceId: string) {
    return store.db
      .selectFrom('send_request as r')
      .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
      .innerJoin('step as s', 's.id', 'r.step_id')
      .select(['r.id', 'r.enrollment_id', 's.key', 'r.state', 'r.mailbox_id'])
      .where('e.sequence_id', '=', sequenceId)
      .execute();
  }

  it('enrolls in bulk, refuses suppressed and already-enrolled leads with a reason, and plans the first step inside the window', async () => {
    const seqId = await setup();
    await store.db.insertInto('suppression').values({ workspace_id: world.workspaceId, email_norm: 'lead3@prospect3.test', reason: 'unsubscribe' }).execute();
    const r = await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: [...world.leadIds, world.leadIds[0]!, '00000000-0000-7000-8000-00000000dead'] });
    expect(r.enrolled).toBe(19);
    expect(r.refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ reason: 'suppressed', email: 'lead3@prospect3.test' }),
        expect.objectContaining({ reason: 'not_found', leadId: '00000000-0000-7000-8000-00000000dead' }),
      ]),
    );
    const again = await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds.slice(0, 5) });
    expect(again.enrolled).toBe(0);
    expect(again.refused.filter((x) => x.reason === 'already_enrolled').length).toBe(4);

    const rows = await store.db.selectFrom('enrollment').innerJoin('lead', 'lead.id', 'enrollment.lead_id').select(['enrollment.due_at', 'enrollment.time_zone', 'enrollment.zone_source', 'lead.country']).where('sequence_id', '=', seqId).execute();
    for (const row of rows) {
      expect(row.due_at).not.toBeNull();
      expect(isAllowed(row.due_at!.getTime(), { zone: row.time_zone, window: { kind: 'hours', days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' }, skipHolidays: true, jitterMinutes: 45, ...(row.country ? { country: row.country } : {}) })).toBe(true);
    }
    // a lead without a zone falls back to its mailbox's zone
    expect(rows.some((x) => x.zone_source === 'mailbox' && x.time_zone === 'America/New_York')).toBe(true);
    const journal = await store.db.selectFrom('event').select('type').where('workspace_id', '=', world.workspaceId).execute();
    expect(journal.filter((j) => j.type === 'enrolled').length).toBe(19);
  });

  it('fires due steps once, waits for the send, then for the call task, and never creates a second request for a step', async () => {
    const seqId = await setup();
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    clock.advance(3 * 86_400_000);
    let fired = 0;
    for (;;) {
      const batch = await svc.fireDue(7);
      fired += batch.length;
      if (batch.length === 0) break;
    }
    expect(fired).toBe(20);
    let reqs = await sendRequests(seqId);
    expect(reqs.length).toBe(20);
    expect(new Set(reqs.map((r) => r.key))).toEqual(new Set(['intro']));
    // Nothing more is due: every enrollment is waiting for its send.
    expect(await svc.fireDue(100)).toEqual([]);

    // The sender reports each send; the next step (a call task) is planned from the send time.
    const stepIds = await store.db.selectFrom('step').select(['id', 'key']).where('sequence_id', '=', seqId).execute();
    const intro = stepIds.find((s) => s.key === 'intro')!.id;
    for (const r of reqs) {
      const res = await svc.apply(r.enrollment_id, { type: 'step_sent', stepId: intro, at: clock.now() });
      expect(res.outcome).toBe('applied');
      expect(res.next.waitingFor).toBe('timer');
      // A duplicate report changes nothing.
      expect((await svc.apply(r.enrollment_id, { type: 'step_sent', stepId: intro, at: clock.now() })).outcome).toBe('ignored');
    }
    clock.advance(4 * 86_400_000);
    while ((await svc.fireDue(50)).length) {
      /* drain */
    }
    const tasks = await store.db.selectFrom('task').select(['enrollment_id', 'step_id', 'state']).execute();
    expect(tasks.filter((t) => reqs.some((r) => r.enrollment_id === t.enrollment_id)).length).toBe(20);
    reqs = await sendRequests(seqId);
    expect(reqs.length).toBe(20);
  });

  it('stops on a reply: queued sends are cancelled, open tasks too, and nothing more is planned', async () => {
    const seqId = await setup();
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds.slice(0, 3) });
    clock.advance(3 * 86_400_000);
    await svc.fireDue(100);
    const [a, b] = (await sendRequests(seqId)).map((r) => r.enrollment_id);
    const r = await svc.apply(a!, { type: 'reply', messageId: '<x@y>' });
    expect(r.next.state).toBe('replied');
    const req = (await sendRequests(seqId)).find((x) => x.enrollment_id === a)!;
    expect(req.state).toBe('cancelled');
    // A send that raced the reply is recorded, but plans nothing.
    const intro = (await store.db.selectFrom('step').select('id').where('sequence_id', '=', seqId).where('key', '=', 'intro').executeTakeFirstOrThrow()).id;
    const late = await svc.apply(a!, { type: 'step_sent', stepId: intro, at: clock.now() });
    expect(late.next.state).toBe('replied');
    expect(late.next.dueAt).toBeNull();
    // Unsubscribe suppresses the address across the workspace.
    const u = await svc.apply(b!, { type: 'unsubscribe', source: 'link' });
    expect(u.next.state).toBe('unsubscribed');
    const lead = await store.db.selectFrom('enrollment').innerJoin('lead', 'lead.id', 'enrollment.lead_id').select('lead.email_norm').where('enrollment.id', '=', b!).executeTakeFirstOrThrow();
    const sup = await store.db.selectFrom('suppression').selectAll().where('workspace_id', '=', world.workspaceId).where('email_norm', '=', lead.email_norm).executeTakeFirst();
    expect(sup?.reason).toBe('unsubscribe');
  });

  it('stops the same lead in every other sequence when its address is suppressed', async () => {
    const seqId = await setup(threeSteps, 2);
    const other = await applyDefinition(store, { clock, random }, world.workspaceId, { ...definition(threeSteps), key: 'other', name: 'Other' });
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: other.sequenceId, leadIds: world.leadIds });
    const [e1] = await store.db.selectFrom('enrollment').select('id').where('sequence_id', '=', seqId).where('lead_id', '=', world.leadIds[0]!).execute();
    await svc.apply(e1!.id, { type: 'bounce', hard: true, reason: '5.1.1 user unknown' });
    const sib = await store.db.selectFrom('enrollment').select(['state', 'state_reason']).where('sequence_id', '=', other.sequenceId).where('lead_id', '=', world.leadIds[0]!).executeTakeFirstOrThrow();
    expect(sib.state).toBe('stopped');
    const untouched = await store.db.selectFrom('enrollment').select('state').where('sequence_id', '=', other.sequenceId).where('lead_id', '=', world.leadIds[1]!).executeTakeFirstOrThrow();
    expect(untouched.state).toBe('active');
  });

  // Issue 11: a call that does not hold the sequence (wait_for_task: false) outlives its end; the
  // enrollment then ended by a bounce, or its address was suppressed from another sequence, and
  // the call stayed open on the rep's list.
  it('cancels the open call task of a finished enrollment when its last email bounces or its address is suppressed elsewhere', async () => {
    const lastCall = [
      { key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hello', body: 'Hi' },
      { key: 'call', type: 'call', delay: '0 minutes', title: 'Call them', wait_for_task: false },
    ];
    const seqId = await setup(lastCall, 2);
    const other = await applyDefinition(store, { clock, random }, world.workspaceId, { ...definition(threeSteps), key: 'other', name: 'Other' });
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: other.sequenceId, leadIds: [world.leadIds[1]!] });
    clock.advance(3 * 86_400_000);
    await svc.fireDue(100);
    const intro = (await store.db.selectFrom('step').select('id').where('sequence_id', '=', seqId).where('key', '=', 'intro').executeTakeFirstOrThrow()).id;
    const mine = await store.db.selectFrom('enrollment').select(['id', 'lead_id']).where('sequence_id', '=', seqId).orderBy('lead_id').execute();
    for (const e of mine) await svc.apply(e.id, { type: 'step_sent', stepId: intro, at: clock.now() });
    clock.advance(86_400_000);
    await svc.fireDue(100);
    const tasks = async () => store.db.selectFrom('task as t').innerJoin('enrollment as e', 'e.id', 't.enrollment_id').select(['e.lead_id', 'e.state as enrollment', 't.state']).where('e.sequence_id', '=', seqId).execute();
    expect((await tasks()).map((t) => [t.enrollment, t.state])).toEqual([['finished', 'open'], ['finished', 'open']]);

    // The last email of lead 0 bounces: the enrollment ends bounced and its call is cancelled.
    const e0 = mine.find((e) => e.lead_id === world.leadIds[0])!;
    const b = await svc.apply(e0.id, { type: 'bounce', hard: true, reason: '5.1.1 user unknown' });
    expect(b.next.state).toBe('bounced');
    // Lead 1 unsubscribes from the other sequence: its finished enrollment here keeps its state, loses its call.
    const o1 = await store.db.selectFrom('enrollment').select('id').where('sequence_id', '=', other.sequenceId).executeTakeFirstOrThrow();
    await svc.apply(o1.id, { type: 'unsubscribe', source: 'link' });
    const after = new Map((await tasks()).map((t) => [t.lead_id, [t.enrollment, t.state]]));
    expect(after.get(world.leadIds[0]!)).toEqual(['bounced', 'cancelled']);
    expect(after.get(world.leadIds[1]!)).toEqual(['finished', 'cancelled']);
  });

  it('pauses on out-of-office, revives the cancelled request on resume, and never sends a step twice', async () => {
    const seqId = await setup(threeSteps, 1);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    clock.advance(3 * 86_400_000);
    await svc.fireDue(10);
    const [req] = await sendRequests(seqId);
    const returnAt = clock.now() + 5 * 86_400_000;
    const p = await svc.apply(req!.enrollment_id, { type: 'out_of_office', returnAt });
    expect(p.next.state).toBe('paused');
    expect((await sendRequests(seqId))[0]!.state).toBe('cancelled');
    clock.advanceTo(returnAt + 1);
    const resumed = await svc.fireDue(10);
    expect(resumed.map((x) => x.event.type)).toEqual(['resume']);
    clock.advance(86_400_000 * 3);
    await svc.fireDue(10);
    const after = await sendRequests(seqId);
    expect(after.length).toBe(1);
    expect(after[0]!.state).toBe('queued');
    expect(after[0]!.id).toBe(req!.id);
  });

  it('applies the edit rule to a running sequence: no step re-run, removed steps skipped, inserted-before steps not run', async () => {
    const seqId = await setup(threeSteps, 1);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    clock.advance(3 * 86_400_000);
    await svc.fireDue(10);
    const [req] = await sendRequests(seqId);
    const steps = async () => new Map((await store.db.selectFrom('step').select(['id', 'key']).where('sequence_id', '=', seqId).execute()).map((s) => [s.key, s.id]));
    await svc.apply(req!.enrollment_id, { type: 'step_sent', stepId: (await steps()).get('intro')!, at: clock.now() });
    let e = await store.db.selectFrom('enrollment').selectAll().where('id', '=', req!.enrollment_id).executeTakeFirstOrThrow();
    expect(e.next_step_id).toBe((await steps()).get('call'));

    // Remove the call step it was waiting for and add a new first step: it goes on to 'bump'.
    await applyDefinition(store, { clock, random }, world.workspaceId, definition([
      { key: 'new-first', type: 'email', delay: '0 minutes', subject: 'New', body: 'New first' },
      { key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hello', body: 'Hi' },
      { key: 'bump', type: 'email', delay: '2 business days', body: 'Bump' },
    ]));
    const changed = await svc.replanSequence(seqId);
    expect(changed).toBe(1);
    e = await store.db.selectFrom('enrollment').selectAll().where('id', '=', req!.enrollment_id).executeTakeFirstOrThrow();
    expect(e.next_step_id).toBe((await steps()).get('bump'));
    clock.advance(5 * 86_400_000);
    await svc.fireDue(10);
    await svc.apply(req!.enrollment_id, { type: 'step_sent', stepId: (await steps()).get('bump')!, at: clock.now() });
    e = await store.db.selectFrom('enrollment').selectAll().where('id', '=', req!.enrollment_id).executeTakeFirstOrThrow();
    // 'new-first' stands before its point, so it is not run: the enrollment finishes.
    expect(e.state).toBe('finished');
    const keys = (await sendRequests(seqId)).map((r) => r.key).sort();
    expect(keys).toEqual(['bump', 'intro']);
  });

  it('refuses a lead whose holiday region is unknown, and fails (not blocks) an enrollment whose plan breaks later', async () => {
    const seqId = await setup(threeSteps, 3);
    await store.db.updateTable('lead').set({ country: 'DE', region: 'XX' }).where('id', '=', world.leadIds[0]!).execute();
    const r = await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    expect(r.enrolled).toBe(2);
    expect(r.refused).toEqual([expect.objectContaining({ reason: 'cannot_plan', leadId: world.leadIds[0] })]);
    // A region that goes bad after enrollment fails that enrollment alone; the batch goes on.
    await store.db.updateTable('lead').set({ country: 'DE', region: 'XX' }).where('id', '=', world.leadIds[1]!).execute();
    clock.advance(3 * 86_400_000);
    const fired = await svc.fireDue(10);
    expect(fired.length).toBe(2);
    const intro = (await store.db.selectFrom('step').select('id').where('sequence_id', '=', seqId).where('key', '=', 'intro').executeTakeFirstOrThrow()).id;
    const bad = (await store.db.selectFrom('enrollment').select('id').where('lead_id', '=', world.leadIds[1]!).executeTakeFirstOrThrow()).id;
    const res = await svc.apply(bad, { type: 'step_sent', stepId: intro, at: clock.now() });
    expect(res.next.state).toBe('failed');
    expect(res.next.stateReason).toMatch(/cannot plan the next step/);
  });

  it('rejects a second send request for the same step at the database, whatever the caller does', async () => {
    const seqId = await setup(threeSteps, 1);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    clock.advance(3 * 86_400_000);
    await svc.fireDue(10);
    const [req] = await store.db.selectFrom('send_request').selectAll().innerJoin('enrollment', 'enrollment.id', 'send_request.enrollment_id').where('enrollment.sequence_id', '=', seqId).execute();
    await expect(
      store.db.insertInto('send_request').values({ id: '00000000-0000-7000-8000-0000000000aa', workspace_id: world.workspaceId, enrollment_id: req!.enrollment_id, step_id: req!.step_id, due_at: new Date() }).execute(),
    ).rejects.toThrow(/duplicate key|unique/);
  });

  it.runIf(backend === 'postgres')('two scheduler processes on one PostgreSQL never fire a step twice', async () => {
    const seqId = await setup(threeSteps, 300);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    clock.advance(3 * 86_400_000);
    const second = await openStore({ databaseUrl: store.url!, poolSize: 4 });
    try {
      const a = new EnrollmentService({ store, clock, random: seededRandom(1) });
      const b = new EnrollmentService({ store: second, clock, random: seededRandom(2) });
      const drain = async (s: EnrollmentService) => {
        let n = 0;
        for (;;) {
          const got = await s.fireDue(13);
          if (!got.length) return n;
          n += got.filter((x) => x.result.outcome === 'applied').length;
        }
      };
      const counts = await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
      expect(counts.reduce((x, y) => x + y, 0)).toBe(300);
      expect(counts.filter((c) => c > 0).length).toBeGreaterThan(1);
      const reqs = await sendRequests(seqId);
      expect(reqs.length).toBe(300);
      expect(new Set(reqs.map((r) => r.enrollment_id)).size).toBe(300);
    } finally {
      await second.close();
    }
  });
});
