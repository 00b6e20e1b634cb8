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
  };

  it('adds a mailbox: password in the vault only, ramp from 5 a day, working hours as pacing', async () => {
    const r = await b.call('POST', `${base}/mailboxes`, input);
    expect(r.statusCode, r.body).toBe(201);
    const m = r.json();
    expect(m).toMatchObject({ email: 'rep@mail.test', provider: 'smtp_imap', health: 'ok', dailyCap: 40, todayCap: 5, sentToday: 0, ramp: { day: 1, days: 13 } });
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
});
