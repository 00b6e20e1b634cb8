import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('mailbox routes (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Mail Co', 'owner@mail.test');
    b = await login(h.app, 'owner@mail.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
  });
  afterAll(() => h?.close());

  const input = {
    email: 'Rep@Mail.test',
    password: 'app password 1',
    dailyCap: 40,
    smtp: { host: 'smtp.mail.test', port: 587, security: 'starttls' },
    imap: { host: 'imap.mail.test', port: 993, security: 'tls' },
    workingHours: { workDays: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '23:59', humanTiming: false },
    // These servers do not exist: the connection test is skipped, so the mailbox is saved untested.
    verify: false,
  };

  it('adds a mailbox: password in the vault only, ramp from 5 a day, working hours as pacing', async () => {
    const r = await b.call('POST', `${base}/mailboxes`, input);
    expect(r.statusCode, r.body).toBe(201);
    const m = r.json();
    expect(m).toMatchObject({ email: 'rep@mail.test', provider: 'smtp_imap', health: 'ok', verification: 'not_verified', dailyCap: 40, todayCap: 5, sentToday: 0, ramp: { day: 1, days: 13 } });
    expect(r.body).not.toContain('app password 1');
    const row = await h.store.db.selectFrom('mailbox').select(['settings']).where('id', '=', m.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row.settings)).not.toContain('app password 1');
    expect((row.settings as { pacing: unknown }).pacing).toEqual({ workDays: [1, 2, 3, 4, 5, 6, 7], dayStart: '00:00', dayEnd: '23:59', dayJitterMinutes: 0, lunch: null, pickupMinutes: 0, spreadDay: false });
    expect(await h.ctx.vault!.get(m.id)).toEqual({ kind: 'password', username: 'rep@mail.test', password: 'app password 1' });
    expect((await b.call('GET', `${base}/mailboxes`)).json().mailboxes).toEqual([m]);
  });

  it('pauses and resumes a mailbox, with the reason shown', async () => {
    const [m] = (await b.call('GET', `${base}/mailboxes`)).json().mailboxes;
    const paused = (await b.call('POST', `${base}/mailboxes/${m.id}/pause`, { reason: 'on holiday' })).json();
    expect(paused).toMatchObject({ health: 'paused', healthReason: 'paused by a person: on holiday' });
    expect((await b.call('POST', `${base}/mailboxes/${m.id}/resume`)).json()).toMatchObject({ health: 'ok', healthReason: null });
  });

  it('refuses the same address twice, and working hours shorter than an hour', async () => {
    expect((await b.call('POST', `${base}/mailboxes`, input)).json().error.code).toBe('CONFLICT');
    const short = await b.call('POST', `${base}/mailboxes`, { ...input, email: 'other@mail.test', workingHours: { ...input.workingHours, start: '09:00', end: '09:30' } });
    expect(short.statusCode).toBe(400);
    expect(short.json().error.message).toMatch(/at least an hour/);
  });

  it('reports an unreachable server in plain words', async () => {
    const m = (await b.call('POST', `${base}/mailboxes`, { ...input, email: 'closed@mail.test', smtp: { host: '127.0.0.1', port: 1, security: 'none' }, imap: { host: '127.0.0.1', port: 1, security: 'none' } })).json();
    const r = (await b.call('POST', `${base}/mailboxes/${m.id}/test`)).json();
    expect(r.ok).toBe(false);
    expect(r.checks.map((c: { protocol: string; ok: boolean }) => [c.protocol, c.ok])).toEqual([
      ['SMTP', false],
      ['IMAP', false],
    ]);
    expect(r.checks[0].message).toMatch(/127\.0\.0\.1:1/);
  });

  // Issue 11: a mailbox whose host could not be reached was saved and shown "ok"; its enrollments
  // then waited with "Due —" and no reason anywhere.
  it('tests a new mailbox before saving it: an unreachable host is refused with what is wrong, and nothing is saved', async () => {
    const closed = { ...input, email: 'unreachable@mail.test', smtp: { host: '127.0.0.1', port: 1, security: 'none' }, imap: { host: '127.0.0.1', port: 1, security: 'none' } };
    const { verify: _skip, ...tested } = closed;
    const r = await b.call('POST', `${base}/mailboxes`, tested);
    expect(r.statusCode, r.body).toBe(502);
    expect(r.json().error.code).toBe('MAILBOX_UNAVAILABLE');
    expect(r.json().error.message).toMatch(/not added.*127\.0\.0\.1:1/);
    expect(r.json().error.details.checks.map((c: { protocol: string; ok: boolean }) => [c.protocol, c.ok])).toEqual([['SMTP', false], ['IMAP', false]]);
    expect(await h.store.db.selectFrom('mailbox').select('id').where('email', '=', 'unreachable@mail.test').executeTakeFirst()).toBeUndefined();
  });

  it('shows send and sync failures in health, and says why each stuck enrollment cannot progress and what to do', async () => {
    const db = h.store.db;
    const m = (await b.call('POST', `${base}/mailboxes`, { ...input, email: 'stuck@mail.test', smtp: { host: '127.0.0.1', port: 1, security: 'none' }, imap: { host: '127.0.0.1', port: 1, security: 'none' } })).json();
    expect(m).toMatchObject({ health: 'ok', verification: 'not_verified' });
    await b.call('POST', `${base}/leads/import`, { csv: 'email,first_name\nana@acme.test,Ana\n' });
    const seq = await b.call('PUT', `${base}/sequences`, { key: 'stuck', name: 'Stuck', window: 'any', jitterMinutes: 0, mailboxes: ['stuck@mail.test'], steps: [{ key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hi {{first_name}}', title: '' }] });
    expect(seq.statusCode, seq.body).toBe(200);
    expect((await b.call('POST', `${base}/sequences/${seq.json().sequenceId}/enroll`, { all: true })).json().enrolled).toBe(1);
    const e = await db.selectFrom('enrollment').select(['id', 'workspace_id', 'next_step_id']).where('sequence_id', '=', seq.json().sequenceId).executeTakeFirstOrThrow();
    // What the scheduler and the sender leave behind when the host cannot be reached: the step
    // handed to the sender, its request back in the queue after a failed try.
    await db.updateTable('enrollment').set({ waiting_for: 'send', due_at: null }).where('id', '=', e.id).execute();
    await db
      .insertInto('send_request')
      .values({ id: '0190bbbb-0000-7000-8000-00000000b001', workspace_id: e.workspace_id, enrollment_id: e.id, step_id: e.next_step_id!, mailbox_id: m.id, state: 'queued', due_at: new Date(), attempts: 2, last_error: 'transient: connect: connect ECONNREFUSED 127.0.0.1:1' })
      .execute();
    const box = (await b.call('GET', `${base}/mailboxes`)).json().mailboxes.find((x: { id: string }) => x.id === m.id);
    expect(box.health).toBe('error');
    expect(box.healthReason).toMatch(/^Sending fails: connect: connect ECONNREFUSED 127\.0\.0\.1:1\. Check the SMTP host/);
    const en = (await b.call('GET', `${base}/enrollments/${e.id}`)).json();
    expect(en.blocked).toMatchObject({ code: 'sending_fails', reason: expect.stringMatching(/^Sending from stuck@mail\.test keeps failing \(2 tries so far\)/), action: expect.stringMatching(/SMTP host, port and password/), detail: expect.stringContaining('ECONNREFUSED') });
    expect((await b.call('GET', `${base}/enrollments?sequenceId=${seq.json().sequenceId}`)).json().items[0].blocked.code).toBe('sending_fails');
    const ma = (await b.call('GET', `${base}/analytics/mailboxes`)).json().mailboxes.find((x: { id: string }) => x.id === m.id);
    expect(ma.health).toBe('error');

    // The test fails: the mailbox is no longer "not verified" but failed, and says why.
    await db.deleteFrom('send_request').where('enrollment_id', '=', e.id).execute();
    expect((await b.call('POST', `${base}/mailboxes/${m.id}/test`)).json().ok).toBe(false);
    const tested = (await b.call('GET', `${base}/mailboxes`)).json().mailboxes.find((x: { id: string }) => x.id === m.id);
    expect(tested).toMatchObject({ health: 'warning', verification: 'failed' });
    expect(tested.healthReason).toMatch(/last connection test failed: SMTP: .*127\.0\.0\.1:1/);
    // A sync that keeps failing reads as a warning on a mailbox otherwise fine.
    await db.insertInto('mailbox_sync').values({ mailbox_id: m.id, updated_at: new Date(), last_error: 'IMAP: connect ECONNREFUSED', last_error_at: new Date() }).execute();
    await db.updateTable('mailbox').set({ settings: JSON.stringify({}) }).where('id', '=', m.id).execute();
    const syncing = (await b.call('GET', `${base}/mailboxes`)).json().mailboxes.find((x: { id: string }) => x.id === m.id);
    expect(syncing.health).toBe('warning');
    expect(syncing.healthReason).toMatch(/^Reading the inbox fails: IMAP: connect ECONNREFUSED/);
  });
});
