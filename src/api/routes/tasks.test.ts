import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('task and analytics routes (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Task Co', 'owner@task.test');
    b = await login(h.app, 'owner@task.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    await b.call('POST', `${base}/leads/import`, { csv: 'email,first_name,phone\nana@acme.test,Ana,+33 1 23 45 67 89\n' });
    const seq = await b.call('PUT', `${base}/sequences`, {
      key: 'calls',
      name: 'Calls first',
      window: 'any',
      jitterMinutes: 0,
      steps: [
        { key: 'call', type: 'call', delay: '0 minutes', subject: '', body: '', title: 'Call Ana' },
        { key: 'mail', type: 'email', delay: '2 days', subject: 'After our call', body: 'Hi {{first_name}}', title: '' },
      ],
    });
    expect(seq.statusCode, seq.body).toBe(200);
    expect((await b.call('POST', `${base}/sequences/${seq.json().sequenceId}/enroll`, { all: true })).json().enrolled).toBe(1);
    // The scheduler's work, done here at once: the call step falls due and becomes a task.
    await new EnrollmentService({ store: h.store, clock: systemClock, random: seededRandom('tasks') }).fireDue(100);
  });
  afterAll(() => h?.close());

  it("lists today's call with the lead's phone, and completing it moves the enrollment on", async () => {
    const open = (await b.call('GET', `${base}/tasks`)).json().tasks;
    expect(open).toEqual([expect.objectContaining({ kind: 'call', state: 'open', title: 'Call Ana', leadEmail: 'ana@acme.test', leadName: 'Ana', phone: '+33 1 23 45 67 89', sequenceName: 'Calls first' })]);
    const done = await b.call('POST', `${base}/tasks/${open[0].id}/complete`, { outcome: 'voicemail' });
    expect(done.statusCode, done.body).toBe(200);
    expect((await b.call('GET', `${base}/tasks`)).json().tasks).toEqual([]);
    const closed = (await b.call('GET', `${base}/tasks?state=done`)).json().tasks;
    expect(closed.map((t: { id: string }) => t.id)).toEqual([open[0].id]);
    const row = await h.store.db.selectFrom('task').select(['outcome']).where('id', '=', open[0].id).executeTakeFirstOrThrow();
    expect(row.outcome).toBe('voicemail');
    const e = await h.store.db.selectFrom('enrollment').select(['state', 'done_step_ids']).executeTakeFirstOrThrow();
    expect(e.state).toBe('active');
    expect(e.done_step_ids).toHaveLength(1);
    expect((await b.call('POST', `${base}/tasks/${open[0].id}/complete`, { outcome: 'done' })).json().error.code).toBe('INVALID_TRANSITION');
  });

  it('exports the tasks of a state as CSV, formula-looking cells neutralised, and records the download', async () => {
    await h.store.db.updateTable('lead').set({ company: '=HYPERLINK("http://evil.example/","x")' }).where('email', '=', 'ana@acme.test').execute();
    const r = await b.call('GET', `${base}/tasks.csv?state=done`);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(r.headers['content-disposition']).toBe('attachment; filename="tasks-done.csv"');
    const lines = r.body.split('\r\n');
    expect(lines[0]).toBe('due_at,kind,state,title,lead_email,lead_name,company,phone,sequence,attempts,notes');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z,call,done,Call Ana,ana@acme\.test,Ana,/);
    // A spreadsheet reads these as text, not as a formula (common/csv-write.ts).
    expect(lines[1]).toContain(`,"'=HYPERLINK(""http://evil.example/"",""x"")",'+33 1 23 45 67 89,Calls first,`);
    // Nothing open any more: the header alone.
    expect((await b.call('GET', `${base}/tasks.csv`)).body).toBe('due_at,kind,state,title,lead_email,lead_name,company,phone,sequence,attempts,notes\r\n');
    const logged = await h.store.db.selectFrom('audit_event').select(['detail']).where('action', '=', 'export.downloaded').where('target', '=', 'tasks.csv').orderBy('at').execute();
    expect(logged.map((l) => l.detail)).toEqual([{ rows: 1, state: 'done' }, { rows: 0, state: 'open' }]);
  });

  it('counts the journal per day and gives the reply-to-stop percentiles', async () => {
    const db = h.store.db;
    const e = await db.selectFrom('enrollment').select(['id', 'workspace_id', 'mailbox_id']).executeTakeFirstOrThrow();
    const mail = { event: { type: 'step_sent', stepId: (await db.selectFrom('step').select('id').where('key', '=', 'mail').executeTakeFirstOrThrow()).id } };
    const now = Date.now();
    const yesterday = new Date(now - 86_400_000);
    // What the engine journals and ingestion stores: two sends (one yesterday), a reply that
    // reached the mailbox 1.5 s before the stop was journalled, a bounce; all but one send today.
    await db
      .insertInto('event')
      .values([
        { workspace_id: e.workspace_id, enrollment_id: e.id, type: 'step_sent', at: yesterday, payload: JSON.stringify(mail) },
        { workspace_id: e.workspace_id, enrollment_id: e.id, type: 'step_sent', at: new Date(now - 2000), payload: JSON.stringify(mail) },
        { workspace_id: e.workspace_id, enrollment_id: e.id, type: 'reply', at: new Date(now) },
        { workspace_id: e.workspace_id, enrollment_id: e.id, type: 'bounce', at: new Date(now) },
      ])
      .execute();
    await db
      .insertInto('message')
      .values({ id: '0190aaaa-0000-7000-8000-00000000a001', workspace_id: e.workspace_id, mailbox_id: e.mailbox_id, enrollment_id: e.id, direction: 'inbound', message_id: '<r1@acme.test>', at: new Date(now - 1500), received_at: new Date(now - 1500), label: 'human_reply', stop_latency_ms: 1500 })
      .execute();
    const a = (await b.call('GET', `${base}/analytics?days=7`)).json();
    expect(a.days).toHaveLength(7);
    const today = new Date(now).toISOString().slice(0, 10);
    expect(a.days[6]).toEqual({ day: today, sends: 1, opened: 0, openedAutomatically: 0, clicked: 0, replies: 1, positiveReplies: 0, meetings: 0, bounces: 1, unsubscribes: 0 });
    expect(a.days[5]).toEqual({ day: yesterday.toISOString().slice(0, 10), sends: 1, opened: 0, openedAutomatically: 0, clicked: 0, replies: 0, positiveReplies: 0, meetings: 0, bounces: 0, unsubscribes: 0 });
    expect(a.funnel).toEqual([{ sequenceName: 'Calls first', stepKey: 'mail', removed: false, sent: 2, replied: 1 }]);
    expect(a.replyToStop).toEqual({ count: 1, p50Ms: 1500, p90Ms: 1500, p99Ms: 1500 });
  });
});
