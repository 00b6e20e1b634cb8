import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

const DAY = 86_400_000;

/**
 * GET …/sequences/{id}/experiments counts the arm each send request carried, and an outcome only
 * inside the reply window that closes N days after that send (docs/experiments.md).
 */
describe.each(testBackends())('experiments: exposures and outcomes in the window (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let sequenceId: string;
  const now = Date.now();
  const t0 = now - 30 * DAY;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Exp Co', 'owner@exp.test');
    b = await login(h.app, 'owner@exp.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    await b.call('POST', `${base}/leads/import`, { csv: 'email,first_name\na1@acme.test,A\na2@acme.test,B\nb1@beta.test,C\nb2@beta.test,D\n' });
    const seq = await b.call('PUT', `${base}/sequences`, {
      key: 'ab',
      name: 'AB',
      window: 'any',
      jitterMinutes: 0,
      steps: [{ key: 'intro', type: 'email', delay: '1 day', subject: 'Hi', body: 'Hi {{first_name}}', variantKey: 'a', weight: 1, variants: [{ key: 'b', subject: 'Hello', body: 'Hello {{first_name}}', weight: 1 }], title: '' }],
    });
    expect(seq.statusCode, seq.body).toBe(200);
    sequenceId = seq.json().sequenceId;
    expect((await b.call('POST', `${base}/sequences/${sequenceId}/enroll`, { all: true })).json().enrolled).toBe(4);
    const db = h.store.db;
    const step = await db.selectFrom('step').select('id').where('sequence_id', '=', sequenceId).executeTakeFirstOrThrow();
    const variants = Object.fromEntries((await db.selectFrom('variant').select(['id', 'key']).where('step_id', '=', step.id).execute()).map((v) => [v.key, v.id]));
    const enrollments = await db.selectFrom('enrollment as e').innerJoin('lead as l', 'l.id', 'e.lead_id').select(['e.id', 'e.workspace_id', 'l.email']).execute();
    const by = Object.fromEntries(enrollments.map((e) => [e.email.split('@')[0]!, e]));
    const ev = (who: string, type: string, at: number, event: Record<string, unknown> = {}) => ({ workspace_id: by[who]!.workspace_id, enrollment_id: by[who]!.id, type, at: new Date(at), payload: JSON.stringify({ event: { type: type.replace('.ignored', ''), ...event } }) });
    // The arm that counts is the one the send request carried (a1, a2 on 'a'; b1, b2 on 'b').
    for (const [who, arm] of [['a1', 'a'], ['a2', 'a'], ['b1', 'b'], ['b2', 'b']] as const) {
      await db
        .insertInto('send_request')
        .values({ id: crypto.randomUUID(), workspace_id: by[who]!.workspace_id, enrollment_id: by[who]!.id, step_id: step.id, variant_id: variants[arm]!, state: 'sent', due_at: new Date(t0) })
        .onConflict((oc) => oc.columns(['enrollment_id', 'step_id']).doUpdateSet({ variant_id: variants[arm]!, state: 'sent' }))
        .execute();
    }
    await db
      .insertInto('event')
      .values([
        ev('a1', 'step_sent', t0, { stepId: step.id }),
        ev('a2', 'step_sent', t0, { stepId: step.id }),
        ev('b1', 'step_sent', t0, { stepId: step.id }),
        // Sent two days ago: its 14-day window is still open.
        ev('b2', 'step_sent', now - 2 * DAY, { stepId: step.id }),
        // In the window.
        ev('a1', 'reply', t0 + 2 * DAY),
        ev('a1', 'meeting_booked.ignored', t0 + 5 * DAY),
        // After the window closed: not the arm's outcome.
        ev('a2', 'reply', t0 + 20 * DAY),
        // Ignored by the engine (the enrollment had stopped), still the prospect's answer.
        ev('b1', 'reply.ignored', t0 + DAY),
        ev('b2', 'reply', now - DAY),
      ])
      .execute();
    await db
      .insertInto('message')
      .values({ id: crypto.randomUUID(), workspace_id: by.b1!.workspace_id, enrollment_id: by.b1!.id, direction: 'inbound', message_id: '<b1@beta.test>', at: new Date(t0 + DAY), received_at: new Date(t0 + DAY), label: 'human_reply', intent: 'interested' })
      .execute();
  }, 60_000);
  afterAll(() => h?.close());

  it('reports each arm with its exposures, closed sends and outcomes in the window, and no winner before the minimum sample', async () => {
    const r = await b.call('GET', `${base}/sequences/${sequenceId}/experiments`);
    expect(r.statusCode, r.body).toBe(200);
    const [x, ...rest] = r.json().experiments;
    expect(rest).toEqual([]);
    expect(x.stepKey).toBe('intro');
    expect(x.settings).toMatchObject({ replyWindowDays: 14, outcome: 'replied', alpha: 0.05, minSamplePerArm: 200, autoWinner: false });
    const arms = Object.fromEntries(x.arms.map((a: { variantKey: string }) => [a.variantKey, a]));
    expect(arms.a).toMatchObject({ exposures: 2, closed: 2, outcomes: { replied: 1, positive: 0, meetings: 1 }, comparison: null });
    expect(arms.a.rates.replied.rate).toBe(0.5);
    expect(arms.b).toMatchObject({ exposures: 2, closed: 1, outcomes: { replied: 1, positive: 1, meetings: 0 } });
    expect(arms.b.comparison).toMatchObject({ pValue: 1, significant: false });
    expect(x.minSampleReached).toBe(false);
    expect(x.winner).toBeNull();
    expect(x.reason).toMatch(/minimum sample/);
    expect(x.srm.mismatch).toBe(false);
  });

  it('adding a variant later changes no exposure already recorded', async () => {
    const got = (await b.call('GET', `${base}/sequences/${sequenceId}`)).json();
    got.steps[0].variants.push({ key: 'c', subject: 'Hey', body: 'Hey {{first_name}}', weight: 1 });
    const put = await b.call('PUT', `${base}/sequences`, got);
    expect(put.statusCode, put.body).toBe(200);
    const r = await b.call('GET', `${base}/sequences/${sequenceId}/experiments`);
    const arms = Object.fromEntries(r.json().experiments[0].arms.map((a: { variantKey: string }) => [a.variantKey, a]));
    expect([arms.a.exposures, arms.b.exposures, arms.c.exposures]).toEqual([2, 2, 0]);
    expect(arms.a.outcomes.replied).toBe(1);
  });

  it("answers 404 for another workspace's sequence", async () => {
    const w2 = await seedWorkspace(h.store, 'Other Co', 'owner@other.test');
    const b2 = await login(h.app, 'owner@other.test', w2.password);
    const r = await b2.call('GET', `/api/workspaces/${w2.workspaceId}/sequences/${sequenceId}/experiments`);
    expect(r.statusCode).toBe(404);
    const forbidden = await b2.call('GET', `${base}/sequences/${sequenceId}/experiments`);
    expect([403, 404]).toContain(forbidden.statusCode);
  });
});
