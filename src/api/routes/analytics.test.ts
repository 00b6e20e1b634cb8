import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

const HOUR = 3_600_000;

/**
 * Issue 11: after a demo, the analytics screen said 22 sends and 0 replies beside a funnel of 345
 * sent and 27 replied, and reply-to-stop read "1162.8 s". The headline counted the journal over
 * the real clock's last 30 days while the demo had stamped its work a day and more ahead; the
 * funnel counted every send ever, and credited a reply to the enrollment's last step, a call; the
 * latency was measured between two stamps of the demo's accelerated clock.
 */
describe.each(testBackends())('analytics: one definition, one clock (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let stepIds: Record<string, string>;
  let enrollments: Array<{ id: string; workspace_id: string; mailbox_id: string | null }>;
  const now = Date.now();
  // The demo's clock ran ahead of the real one: its work is stamped from 30 to 40 hours from now.
  const ahead = now + 30 * HOUR;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Demo Co', 'owner@demo.test');
    b = await login(h.app, 'owner@demo.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    await b.call('POST', `${base}/leads/import`, { csv: 'email,first_name\nana@acme.test,Ana\nbo@beta.test,Bo\n' });
    const seq = await b.call('PUT', `${base}/sequences`, {
      key: 'outbound',
      name: 'Outbound',
      window: 'any',
      jitterMinutes: 0,
      steps: [
        { key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hi {{first_name}}', title: '' },
        { key: 'call', type: 'call', delay: '4 hours', subject: '', body: '', title: 'Call', waitForTask: false },
        { key: 'bump', type: 'email', delay: '1 day', subject: '', body: 'Bump', title: '' },
      ],
    });
    expect(seq.statusCode, seq.body).toBe(200);
    expect((await b.call('POST', `${base}/sequences/${seq.json().sequenceId}/enroll`, { all: true })).json().enrolled).toBe(2);
    const db = h.store.db;
    stepIds = Object.fromEntries((await db.selectFrom('step').select(['id', 'key']).where('sequence_id', '=', seq.json().sequenceId).execute()).map((s) => [s.key, s.id]));
    enrollments = await db.selectFrom('enrollment').select(['id', 'workspace_id', 'mailbox_id']).orderBy('id').execute();
    const [e1, e2] = enrollments;
    const ev = (e: typeof e1, type: string, at: number, event: Record<string, unknown>) => ({ workspace_id: e!.workspace_id, enrollment_id: e!.id, type, at: new Date(at), payload: JSON.stringify({ event: { type, ...event } }) });
    // Two intros, the call step's task (it journals no send), one bump; a reply after the call
    // step (the last email before it was the intro) and one after the bump.
    await db
      .insertInto('event')
      .values([
        ev(e1, 'step_sent', ahead, { stepId: stepIds.intro }),
        ev(e2, 'step_sent', ahead, { stepId: stepIds.intro }),
        ev(e2, 'step_sent', ahead + 8 * HOUR, { stepId: stepIds.bump }),
        ev(e1, 'reply', ahead + 5 * HOUR, {}),
        ev(e2, 'reply', ahead + 9 * HOUR, {}),
      ])
      .execute();
    await db.updateTable('enrollment').set({ state: 'replied', last_step_id: stepIds.call! }).where('id', '=', e1!.id).execute();
    // Ingestion measured both stops in real time (1.2 s and 0.3 s) although the demo's clock made them 72 and 18 minutes.
    for (const [i, e] of [e1!, e2!].entries()) {
      await db
        .insertInto('message')
        .values({ id: `0190aaaa-0000-7000-8000-00000000a00${i}`, workspace_id: e.workspace_id, mailbox_id: e.mailbox_id, enrollment_id: e.id, direction: 'inbound', message_id: `<r${i}@acme.test>`, at: new Date(ahead + 5 * HOUR), received_at: new Date(ahead + 5 * HOUR), label: 'human_reply', stop_latency_ms: i === 0 ? 1200 : 300 })
        .execute();
    }
  }, 60_000);
  afterAll(() => h?.close());

  it('counts the headline, the chart and the funnel over one window that ends with the latest work, and crediting each reply to the last email before it', async () => {
    const r = await b.call('GET', `${base}/analytics?days=30`);
    expect(r.statusCode, r.body).toBe(200);
    const a = r.json();
    expect(a.totals).toEqual({ sends: 3, opened: 0, openedAutomatically: 0, clicked: 0, replies: 2, positiveReplies: 0, meetings: 0, bounces: 0, unsubscribes: 0 });
    expect(a.previous.totals.sends).toBe(0);
    const sum = (k: 'sends' | 'replies') => a.days.reduce((n: number, d: Record<string, number>) => n + d[k]!, 0);
    expect([sum('sends'), sum('replies')]).toEqual([3, 2]);
    expect(a.funnel).toEqual([
      { sequenceName: 'Outbound', stepKey: 'intro', removed: false, sent: 2, replied: 1 },
      { sequenceName: 'Outbound', stepKey: 'bump', removed: false, sent: 1, replied: 1 },
    ]);
    expect(a.unattributedReplies).toBe(0);
    expect(Date.parse(a.asOf)).toBeGreaterThanOrEqual(ahead);
    expect(a.days.at(-1).day).toBe(new Date(ahead + 9 * HOUR).toISOString().slice(0, 10));
    expect(a.replyToStop).toEqual({ count: 2, p50Ms: 300, p90Ms: 1200, p99Ms: 1200 });
  });

  it("counts one sequence's figures when asked: its enrollments' facts and its steps only", async () => {
    const other = await b.call('PUT', `${base}/sequences`, { key: 'other', name: 'Other', window: 'any', steps: [{ key: 'hello', type: 'email', delay: '0 minutes', subject: 'Hello', body: 'Hello', title: '' }] });
    expect(other.statusCode, other.body).toBe(200);
    const outboundId = (await h.store.db.selectFrom('sequence').select('id').where('key', '=', 'outbound').executeTakeFirstOrThrow()).id;
    const whole = (await b.call('GET', `${base}/analytics?days=30`)).json();
    const outbound = (await b.call('GET', `${base}/analytics?days=30&sequenceId=${outboundId}`)).json();
    expect(outbound.totals).toEqual(whole.totals);
    expect(outbound.funnel.map((f: { stepKey: string }) => f.stepKey)).toEqual(['intro', 'bump']);
    expect(outbound.replyToStop.count).toBe(2);
    const none = (await b.call('GET', `${base}/analytics?days=30&sequenceId=${other.json().sequenceId}`)).json();
    expect(none.totals.sends + none.totals.replies).toBe(0);
    expect(none.funnel).toEqual([{ sequenceName: 'Other', stepKey: 'hello', removed: false, sent: 0, replied: 0 }]);
    expect(none.replyToStop.count).toBe(0);
    const csv = await b.call('GET', `${base}/analytics/days.csv?days=30&sequenceId=${other.json().sequenceId}`);
    expect(csv.body.trimEnd().split('\r\n').slice(1).every((l: string) => /^\d{4}-\d{2}-\d{2}(,0)+$/.test(l))).toBe(true);
  });
});
