/**
 * The credit of a prospect's signal after a move (issue 18, found by the analytics accuracy bench,
 * src/sim/analytics-accuracy.test.ts), on both stores, through the enrollment service: a reply to
 * the old thread after the successor has sent is credited to the old enrollment's email (the one
 * answered), not the successor's newer one; a signal to a successor that has sent nothing yet is
 * credited to the email its predecessor sent last; a signal to the old enrollment whose thread
 * sent nothing stays with the old sequence. The journal facts (ops/figure-facts.ts) say it, and the
 * rollup's breakdown after a fold says the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { journalFacts, lastEmailSentAtBefore } from './figure-facts.ts';
import { foldFigures } from './figure-rollup.ts';
import { breakdown } from './figures.ts';

const T0 = Date.UTC(2026, 2, 2, 12, 0); // Monday
const DAY = 86_400_000;

/** A sequence sent at any hour, without holidays or jitter, so the times below are exact. */
const anyHour = (key: string, steps: unknown[], more: Record<string, unknown> = {}) => ({ key, name: key, window: 'any', holidays: false, jitter_minutes: 0, steps, ...more });
/** Outreach: "not now" moves the lead to the nurture, its email two days on. */
const outreach = anyHour(
  'outreach',
  [
    { key: 'intro', type: 'email', subject: 'Hi', body: 'Hello' },
    { key: 'follow', type: 'email', delay: '10 days', body: 'Again' },
  ],
  { stop_rules: { on_reply: { not_interested: { move_to: 'nurture', after: '2 days' } } } },
);
const nurture = anyHour('nurture', [{ key: 'n1', type: 'email', subject: 'Checking in', body: 'Checking back in' }]);

/** Runs the clock to `t` in steps of `stepMs`, firing what is due and sending every queued email. */
function sender(store: TestStore, svc: EnrollmentService, clock: SimClock, stepMs: number) {
  return async (t: number) => {
    while (clock.now() < t) {
      clock.advance(Math.min(stepMs, t - clock.now()));
      while ((await svc.fireDue(100)).length) {
        /* drain */
      }
      const queued = await store.db.selectFrom('send_request').select(['id', 'enrollment_id', 'step_id']).where('state', '=', 'queued').execute();
      for (const q of queued) {
        await store.db.updateTable('send_request').set({ state: 'sent' }).where('id', '=', q.id).execute();
        await svc.apply(q.enrollment_id, { type: 'step_sent', stepId: q.step_id, at: clock.now() });
      }
    }
  };
}

describe.each(testBackends())('the credit of a signal after a move (%s)', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('goes to the email of the enrollment it was addressed to, else to the one it was moved from; never to a newer email of the successor', async () => {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    const random = seededRandom(1818);
    const clock = new SimClock(T0);
    const world = await makeWorld(store, { leads: 2, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    const svc = new EnrollmentService({ store, clock, random });
    const seqId = (await applyDefinition(store, { clock, random }, world.workspaceId, validateDefinition(outreach))).sequenceId;
    const nurtureId = (await applyDefinition(store, { clock, random }, world.workspaceId, validateDefinition(nurture))).sequenceId;
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    const runUntil = sender(store, svc, clock, 3_600_000);
    const steps = new Map((await store.db.selectFrom('step').select(['id', 'key']).execute()).map((s) => [s.id, s.key]));
    const seqName = (id: string | null) => (id === seqId ? 'outreach' : id === nurtureId ? 'nurture' : String(id));

    await runUntil(T0 + DAY);
    const [a, b] = await store.db.selectFrom('enrollment').select(['id']).where('sequence_id', '=', seqId).orderBy('lead_id').execute();
    // Both answer "not now": each moves to the nurture, its first email two days on.
    await svc.apply(a!.id, { type: 'reply', intent: 'not_interested', messageId: '<a-notnow@x.test>' });
    await svc.apply(b!.id, { type: 'reply', intent: 'not_interested', messageId: '<b-notnow@x.test>' });
    const successor = async (id: string) => (await store.db.selectFrom('enrollment').select('moved_to').where('id', '=', id).executeTakeFirstOrThrow()).moved_to!;
    const a2 = await successor(a!.id);
    const b2 = await successor(b!.id);
    // B opts out through the nurture (addressed to it) before it has sent anything: outreach's intro takes it.
    clock.advance(3_600_000);
    await svc.apply(b2, { type: 'unsubscribe', source: 'link' });
    // The nurture then sends A its email; A answers the old thread (outreach's intro) again.
    await runUntil(T0 + 4 * DAY);
    expect((await store.db.selectFrom('send_request').select('state').where('enrollment_id', '=', a2).executeTakeFirstOrThrow()).state).toBe('sent');
    const again = await svc.apply(a!.id, { type: 'reply', messageId: '<a-again@x.test>' });
    expect(again.next.id).toBe(a2);
    const passed = await store.db.selectFrom('event').select('payload').where('enrollment_id', '=', a2).where('type', '=', 'reply').executeTakeFirstOrThrow();
    expect(passed.payload).toMatchObject({ addressedTo: a!.id });

    const facts = await sql<{ series: string; sequence_id: string | null; step_id: string | null }>`
      select series, sequence_id, step_id from (${journalFacts({ workspaceId: world.workspaceId, after: 0n, upTo: null, since: new Date(0), until: new Date(T0 + 30 * DAY) })}) f
      where series in ('replies', 'unsubscribes') order by series, f.at`.execute(store.db);
    expect(facts.rows.map((f) => `${f.series} ${seqName(f.sequence_id)} ${f.step_id ? steps.get(f.step_id) : '-'}`)).toEqual([
      'replies outreach intro',
      'replies outreach intro',
      'replies outreach intro',
      'unsubscribes outreach intro',
    ]);

    // The same through the rollup: a fold, then the breakdown by step.
    await foldFigures(store);
    const rows = await breakdown(store.db, world.workspaceId, { since: new Date(T0), until: new Date(T0 + 30 * DAY) }, 'step');
    const byKey = new Map(rows.map((r) => [r.key === null ? '-' : steps.get(r.key), r]));
    expect([byKey.get('intro')?.replies, byKey.get('intro')?.unsubscribes, byKey.get('n1')?.replies ?? 0, byKey.get('n1')?.sends]).toEqual([3, 1, 0, 1]);
  }, 120_000);

  it('credits the latest email before the signal whether it went out in the month before or long before (the month is searched first)', async () => {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    const random = seededRandom(3131);
    const clock = new SimClock(T0);
    const world = await makeWorld(store, { leads: 2, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    const svc = new EnrollmentService({ store, clock, random });
    const seqId = (await applyDefinition(store, { clock, random }, world.workspaceId, validateDefinition(anyHour('long', [
      { key: 'intro', type: 'email', subject: 'Hi', body: 'Hello' },
      { key: 'follow', type: 'email', delay: '10 days', body: 'Again' },
    ])))).sequenceId;
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seqId, leadIds: world.leadIds });
    const runUntil = sender(store, svc, clock, 6 * 3_600_000);
    const [a, b] = await store.db.selectFrom('enrollment').select(['id']).where('sequence_id', '=', seqId).orderBy('lead_id').execute();
    // Both get the intro and, ten days on, the follow-up; A replies two days after it (in the
    // month), B fifty days after it (only the whole journal has it, and the intro is older still).
    await runUntil(T0 + 13 * DAY);
    await svc.apply(a!.id, { type: 'reply', messageId: '<a@x.test>' });
    await runUntil(T0 + 61 * DAY);
    await svc.apply(b!.id, { type: 'reply', messageId: '<b@x.test>' });
    const steps = new Map((await store.db.selectFrom('step').select(['id', 'key']).execute()).map((s) => [s.id, s.key]));
    const follow = await sql<{ enrollment_id: string; at: Date }>`select enrollment_id, at from event where type = 'step_sent' and (payload->'event'->>'stepId')::uuid = ${[...steps].find(([, k]) => k === 'follow')![0]}`.execute(store.db);
    expect(follow.rows).toHaveLength(2);
    const replies = await sql<{ enrollment_id: string; sent_at: Date }>`
      select r.enrollment_id, ${lastEmailSentAtBefore(sql`r.enrollment_id`, sql`r.at`)} as sent_at from event r where r.type = 'reply' order by r.at`.execute(store.db);
    const followAt = (e: string) => new Date(follow.rows.find((f) => f.enrollment_id === e)!.at).getTime();
    expect(replies.rows.map((r) => new Date(r.sent_at).getTime())).toEqual([followAt(a!.id), followAt(b!.id)]);
    const facts = await sql<{ step_id: string | null }>`
      select step_id from (${journalFacts({ workspaceId: world.workspaceId, after: 0n, upTo: null, since: new Date(0), until: new Date(T0 + 90 * DAY) })}) f
      where series = 'replies' order by f.at`.execute(store.db);
    expect(facts.rows.map((f) => steps.get(f.step_id!))).toEqual(['follow', 'follow']);
  }, 120_000);
});
