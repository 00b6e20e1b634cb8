import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { logTaskCall, sweepCalls } from '../../dialer/calls.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { zoneAtHour } from '../../../test/zone-at-hour.ts';


describe.each(testBackends())('call routes (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let workspaceId: string;
  const service = () => new EnrollmentService({ store: h.store, clock: systemClock, random: seededRandom('calls') });
  const db = () => h.store.db;
  const leadId = async (email: string) => (await db().selectFrom('lead').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
  const openTask = async () => (await b.call('GET', `${base}/tasks`)).json().tasks[0] as { id: string } | undefined;
  const enrollmentOf = async (email: string) =>
    db().selectFrom('enrollment').innerJoin('lead', 'lead.id', 'enrollment.lead_id').select(['enrollment.state', 'enrollment.state_reason', 'enrollment.waiting_for']).where('lead.email', '=', email).executeTakeFirstOrThrow();

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Dial Co', 'owner@dial.test');
    workspaceId = w.workspaceId;
    b = await login(h.app, 'owner@dial.test', w.password);
    base = `/api/workspaces/${workspaceId}`;
    await db().updateTable('workspace').set({ country: 'FR' }).where('id', '=', workspaceId).execute();
    const day = zoneAtHour(12);
    await b.call('POST', `${base}/leads/import`, {
      csv: `email,first_name,phone,time_zone\nana@acme.test,Ana,+33 1 23 45 67 89,${day}\nbob@acme.test,Bob,,${day}\nnight@acme.test,Nia,+33 6 12 34 56 78,${zoneAtHour(2)}\n`,
    });
    const hook = await b.call('POST', `${base}/webhooks`, { url: 'https://hooks.example.test/cadenza', events: ['call.logged'] });
    expect(hook.statusCode, hook.body).toBe(201);
    const seq = await b.call('PUT', `${base}/sequences`, {
      key: 'calls',
      name: 'Calls first',
      window: 'any',
      jitterMinutes: 0,
      steps: [
        { key: 'call', type: 'call', delay: '0 minutes', title: 'Call Ana', retry: { attempts: 1, after: '2 hours', on: ['no_answer', 'busy'] } },
        { key: 'mail', type: 'email', delay: '2 days', subject: 'After our call', body: 'Hi {{first_name}}' },
      ],
    });
    expect(seq.statusCode, seq.body).toBe(200);
    expect((await b.call('GET', `${base}/sequences/${seq.json().sequenceId}`)).json().steps[0].retry).toEqual({ attempts: 1, after: '2 hours', on: ['no_answer', 'busy'] });
    const enrolled = await b.call('POST', `${base}/sequences/${seq.json().sequenceId}/enroll`, { leadIds: [await leadId('ana@acme.test')] });
    expect(enrolled.json().enrolled, enrolled.body).toBe(1);
    await service().fireDue(100);
  });
  afterAll(() => h?.close());

  it("dials a call task's lead, tries again after no answer per the step's rule, then a connected call moves the sequence on", async () => {
    const task = (await openTask())!;
    const c1 = await b.call('POST', `${base}/calls`, { taskId: task.id });
    expect(c1.statusCode, c1.body).toBe(201);
    const call1 = c1.json().call;
    expect(call1).toMatchObject({ direction: 'outbound', source: 'dialer', state: 'dialing', number: '+33123456789', taskId: task.id, attempt: 1, outcome: null });
    expect((await b.call('POST', `${base}/calls/${call1.id}/progress`, { event: 'ringing', sipCallId: 'abc@ws' })).json().call.state).toBe('ringing');
    // A repeated report changes nothing and says why.
    expect((await b.call('POST', `${base}/calls/${call1.id}/progress`, { event: 'ringing' })).json().ignored).toBe('already ringing');
    const ended = (await b.call('POST', `${base}/calls/${call1.id}/progress`, { event: 'ended', cause: 'no_answer' })).json().call;
    expect(ended).toMatchObject({ state: 'ended', suggested: 'no_answer', outcome: null, durationMs: null, endCause: 'no_answer' });
    const o1 = await b.call('POST', `${base}/calls/${call1.id}/outcome`, { outcome: 'no_answer' });
    expect(o1.statusCode, o1.body).toBe(200);
    expect(o1.json().task).toMatchObject({ state: 'open', attempt: 1 });
    const retryAt = Date.parse(o1.json().task.retryAt);
    expect(retryAt - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect((await enrollmentOf('ana@acme.test')).waiting_for).toBe('task');
    const t = await db().selectFrom('task').select(['state', 'attempts', 'due_at']).where('id', '=', task.id).executeTakeFirstOrThrow();
    expect({ state: t.state, attempts: t.attempts, due: t.due_at.getTime() }).toEqual({ state: 'open', attempts: 1, due: retryAt });

    // The second try, answered: the rep's outcome closes the task and the sequence moves on.
    const call2 = (await b.call('POST', `${base}/calls`, { taskId: task.id })).json().call;
    expect(call2.attempt).toBe(2);
    await b.call('POST', `${base}/calls/${call2.id}/progress`, { event: 'ringing' });
    await b.call('POST', `${base}/calls/${call2.id}/progress`, { event: 'answered' });
    const up = (await b.call('POST', `${base}/calls/${call2.id}/progress`, { event: 'ended', cause: 'hangup' })).json().call;
    expect(up).toMatchObject({ suggested: 'connected', outcome: null });
    expect(up.durationMs).toBeGreaterThanOrEqual(0);
    const o2 = (await b.call('POST', `${base}/calls/${call2.id}/outcome`, { outcome: 'connected', notes: 'Interested in Q1, call back' })).json();
    expect(o2.task).toEqual({ state: 'done', attempt: 2, retryAt: null });
    expect(o2.call).toMatchObject({ outcome: 'connected', notes: 'Interested in Q1, call back' });
    expect(await enrollmentOf('ana@acme.test')).toMatchObject({ state: 'active', waiting_for: 'timer' });
    // Given once: the same outcome again answers as before, another is a conflict.
    expect((await b.call('POST', `${base}/calls/${call2.id}/outcome`, { outcome: 'connected' })).statusCode).toBe(200);
    const again = await b.call('POST', `${base}/calls/${call2.id}/outcome`, { outcome: 'meeting_booked' });
    expect([again.statusCode, again.json().error.code]).toEqual([409, 'CONFLICT']);

    // The webhook and the lead's calls.
    const hooks = await db().selectFrom('webhook_delivery').select(['event_id', 'event_type', 'payload']).where('event_type', '=', 'call.logged').orderBy('id').execute();
    expect(hooks.map((d) => [d.event_id, (d.payload as { outcome: string }).outcome])).toEqual([
      [`call:${call1.id}`, 'no_answer'],
      [`call:${call2.id}`, 'connected'],
    ]);
    const list = (await b.call('GET', `${base}/calls?leadId=${await leadId('ana@acme.test')}`)).json().calls;
    expect(list.map((c: { id: string }) => c.id)).toEqual([call2.id, call1.id]);
    const page = (await b.call('GET', `${base}/leads/${await leadId('ana@acme.test')}`)).json();
    expect(page.timeline.filter((e: { kind: string }) => e.kind === 'call').map((e: { what: string; detail: string }) => e.detail)).toEqual(['connected: Interested in Q1, call back', 'no answer']);
  });

  it("refuses a lead with no number and the lead's night (unless asked), in plain words", async () => {
    const none = await b.call('POST', `${base}/calls`, { leadId: await leadId('bob@acme.test') });
    expect([none.statusCode, none.json().error.code, none.json().error.message]).toEqual([422, 'NOT_DIALLABLE', 'cannot dial this lead: the lead has no phone number']);
    const night = await b.call('POST', `${base}/calls`, { leadId: await leadId('night@acme.test') });
    expect([night.statusCode, night.json().error.code]).toEqual([409, 'OUTSIDE_CALLING_HOURS']);
    expect(night.json().error.message).toMatch(/^it is 02:\d\d in Etc\/GMT[+-]\d+ for this lead: call between 08:00 and 21:00 their time$/);
    const anyway = await b.call('POST', `${base}/calls`, { leadId: await leadId('night@acme.test'), allowOutsideHours: true });
    expect(anyway.statusCode, anyway.body).toBe(201);
    // Given an outcome without the softphone ever saying it ended: the rep's word ends it.
    expect((await b.call('POST', `${base}/calls/${anyway.json().call.id}/outcome`, { outcome: 'no_answer' })).json().call).toMatchObject({ state: 'ended', outcome: 'no_answer', endCause: 'hangup' });
    expect((await b.call('POST', `${base}/calls`, { leadId: await leadId('bob@acme.test'), taskId: (await openTask())?.id ?? '00000000-0000-4000-8000-000000000000' })).statusCode).toBe(400);
  });

  it('a call lost mid-way is dropped at once, never left without an outcome; the rep may still say what happened', async () => {
    const call = (await b.call('POST', `${base}/calls`, { leadId: await leadId('ana@acme.test') })).json().call;
    await b.call('POST', `${base}/calls/${call.id}/progress`, { event: 'answered' });
    const lost = (await b.call('POST', `${base}/calls/${call.id}/progress`, { event: 'ended', cause: 'media_lost' })).json().call;
    expect(lost).toMatchObject({ state: 'ended', outcome: 'dropped', suggested: 'dropped', endCause: 'media_lost' });
    expect((await b.call('POST', `${base}/calls/${call.id}/progress`, { event: 'answered' })).json().ignored).toBe('the call has ended');
    expect((await b.call('POST', `${base}/calls/${call.id}/outcome`, { outcome: 'connected' })).json().call.outcome).toBe('connected');
  });

  it('the sweep drops a call the softphone went silent on, and gives an unlogged call its suggested outcome', async () => {
    const ana = await leadId('ana@acme.test');
    const silent = (await b.call('POST', `${base}/calls`, { leadId: ana })).json().call;
    await b.call('POST', `${base}/calls/${silent.id}/progress`, { event: 'answered' });
    const unlogged = (await b.call('POST', `${base}/calls`, { leadId: ana })).json().call;
    await b.call('POST', `${base}/calls/${unlogged.id}/progress`, { event: 'ended', cause: 'busy' });
    const at = (ms: number): Clock => ({ ...systemClock, now: () => Date.now() + ms });
    const deps = (ms: number) => ({ store: h.store, clock: at(ms), random: seededRandom('sweep'), service: service() });
    expect(await sweepCalls(deps(60_000))).toEqual({ dropped: 0, autoLogged: 0 });
    expect(await sweepCalls(deps(120_000))).toEqual({ dropped: 1, autoLogged: 0 });
    const s = (await b.call('GET', `${base}/calls/${silent.id}`)).json().call;
    expect(s).toMatchObject({ state: 'ended', outcome: 'dropped', endCause: 'silent' });
    expect(await sweepCalls(deps(31 * 60_000))).toEqual({ dropped: 0, autoLogged: 1 });
    expect((await b.call('GET', `${base}/calls/${unlogged.id}`)).json().call.outcome).toBe('busy');
    expect(await sweepCalls(deps(31 * 60_000))).toEqual({ dropped: 0, autoLogged: 0 });
  });

  it('matches an incoming call to its lead by number, read in the workspace country', async () => {
    const r = await b.call('POST', `${base}/calls/inbound`, { from: '01 23 45 67 89' });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ caller: { e164: '+33123456789', reason: null }, leads: [{ email: 'ana@acme.test', name: 'Ana' }], more: false, call: { direction: 'inbound', state: 'ringing', leadId: await leadId('ana@acme.test') } });
    const nobody = (await b.call('POST', `${base}/calls/inbound`, { from: 'anonymous' })).json();
    expect(nobody).toMatchObject({ caller: { e164: null }, leads: [], call: { leadId: null, missed: false } });
    // Declined (or the caller gave up) before an answer: recorded as a missed incoming call.
    const declined = await b.call('POST', `${base}/calls/${nobody.call.id}/progress`, { event: 'ended', cause: 'rejected' });
    expect(declined.json().call).toMatchObject({ state: 'ended', missed: true, answeredAt: null, suggested: 'no_answer' });
    // Answered, then logged like an outgoing call.
    const taken = r.json().call;
    await b.call('POST', `${base}/calls/${taken.id}/progress`, { event: 'answered' });
    await b.call('POST', `${base}/calls/${taken.id}/progress`, { event: 'ended', cause: 'hangup' });
    const logged = await b.call('POST', `${base}/calls/${taken.id}/outcome`, { outcome: 'connected', notes: 'called back about pricing' });
    expect(logged.json().call).toMatchObject({ direction: 'inbound', outcome: 'connected', missed: false, notes: 'called back about pricing' });
  });

  it('a wrong number stops the enrollment and flags the number; a call logged on the task by hand keeps a record', async () => {
    await db().insertInto('lead').values({ id: '00000000-0000-4000-8000-0000000000c1', workspace_id: workspaceId, email: 'cy@acme.test', email_norm: 'cy@acme.test', first_name: 'Cy', phone: '+33 1 99 88 77 66', phone_e164: '+33199887766', phone_status: 'valid', time_zone: zoneAtHour(12) }).execute();
    const seqId = (await db().selectFrom('sequence').select('id').where('key', '=', 'calls').executeTakeFirstOrThrow()).id;
    await b.call('POST', `${base}/sequences/${seqId}/enroll`, { leadIds: ['00000000-0000-4000-8000-0000000000c1'] });
    await service().fireDue(100);
    const task = (await b.call('GET', `${base}/tasks`)).json().tasks.find((t: { leadEmail: string }) => t.leadEmail === 'cy@acme.test');
    const logged = await b.call('POST', `${base}/tasks/${task.id}/complete`, { outcome: 'busy', durationSeconds: 0 });
    expect(logged.json(), logged.body).toMatchObject({ ok: true, state: 'open' });
    const call = (await b.call('POST', `${base}/calls`, { taskId: task.id })).json().call;
    expect(call.attempt).toBe(2);
    expect((await b.call('POST', `${base}/calls/${call.id}/outcome`, { outcome: 'wrong_number' })).json().task).toMatchObject({ state: 'done' });
    expect(await enrollmentOf('cy@acme.test')).toMatchObject({ state: 'stopped', state_reason: 'wrong number (call)' });
    const lead = await db().selectFrom('lead').select(['phone_status', 'phone_reason']).where('email', '=', 'cy@acme.test').executeTakeFirstOrThrow();
    expect(lead.phone_status).toBe('flagged');
    expect(lead.phone_reason).toMatch(/^wrong number: a call on \d{4}-\d\d-\d\d reached someone else$/);
    const calls = (await b.call('GET', `${base}/calls?leadId=00000000-0000-4000-8000-0000000000c1`)).json().calls;
    expect(calls.map((c: { source: string; outcome: string }) => `${c.source} ${c.outcome}`)).toEqual(['dialer wrong_number', 'logged busy']);
  });

  it('a call logged by hand is written with its outcome or not at all', async () => {
    const seqId = (await db().selectFrom('sequence').select('id').where('key', '=', 'calls').executeTakeFirstOrThrow()).id;
    await db().insertInto('lead').values({ id: '00000000-0000-4000-8000-0000000000c2', workspace_id: workspaceId, email: 'dee@acme.test', email_norm: 'dee@acme.test', phone: '+33 1 99 88 77 65', phone_e164: '+33199887765', phone_status: 'valid', time_zone: zoneAtHour(12) }).execute();
    await b.call('POST', `${base}/sequences/${seqId}/enroll`, { leadIds: ['00000000-0000-4000-8000-0000000000c2'] });
    await service().fireDue(100);
    const task = (await b.call('GET', `${base}/tasks`)).json().tasks.find((t: { leadEmail: string }) => t.leadEmail === 'dee@acme.test');
    // The enrollment's event fails after the call's record is written (a crash, a lost connection):
    // the record goes with it, so no ended call is left that nobody gave an outcome.
    const failing = service();
    failing.applyInTx = async () => {
      throw new Error('connection lost');
    };
    const deps = { store: h.store, clock: systemClock, random: seededRandom('log'), service: failing };
    await expect(logTaskCall(deps, workspaceId, null, task.id, 'no_answer', null, 0)).rejects.toThrow('connection lost');
    expect(await db().selectFrom('phone_call').select('id').where('task_id', '=', task.id).execute()).toEqual([]);
    // Two logs at once are two tries in turn, never two records of the same try.
    const ok = { ...deps, service: service() };
    await Promise.all([logTaskCall(ok, workspaceId, null, task.id, 'no_answer', null, 0), logTaskCall(ok, workspaceId, null, task.id, 'no_answer', null, 0)]);
    const tries = await db().selectFrom('phone_call').select('attempt').where('task_id', '=', task.id).orderBy('attempt').execute();
    expect(tries.map((c) => c.attempt)).toEqual([1, 2]);
  });

  it('analytics count the calls of the period by outcome, with answered calls and talk time', async () => {
    const a = (await b.call('GET', `${base}/analytics?days=7`)).json().calls;
    const listed = (await b.call('GET', `${base}/calls?limit=500`)).json().calls as Array<{ outcome: string | null; answeredAt: string | null; durationMs: number | null }>;
    expect(a.calls).toBe(listed.length);
    const by = (o: string | null) => listed.filter((c) => c.outcome === o).length;
    expect(a.outcomes).toMatchObject({ connected: by('connected'), busy: by('busy'), no_answer: by('no_answer'), wrong_number: by('wrong_number'), dropped: by('dropped'), unlogged: by(null) });
    expect(Object.values(a.outcomes as Record<string, number>).reduce((x, y) => x + y, 0)).toBe(a.calls);
    expect(a.answered).toBe(listed.filter((c) => c.answeredAt !== null).length);
    expect(a.talkMs).toBe(listed.reduce((t, c) => t + (c.durationMs ?? 0), 0));
    expect(a.outcomes.connected).toBeGreaterThanOrEqual(2);
  });
});
