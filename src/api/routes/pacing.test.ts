import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

/** Issue 10: every pacing setting is settable per workspace and per mailbox, with plain-word errors. */
describe.each(testBackends())('pacing routes (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  const mailboxId = '00000000-0000-4000-8000-0000000000a1';
  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Pace Co', 'owner@pace.test');
    b = await login(h.app, 'owner@pace.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    await h.store.db.insertInto('mailbox').values({ id: mailboxId, workspace_id: w.workspaceId, email: 'rep@pace.test', provider: 'smtp_imap' }).execute();
  });
  afterAll(() => h?.close());

  it('a mailbox inherits the workspace defaults, overrides some, and a reset inherits again', async () => {
    const before = (await b.call('GET', `${base}/mailboxes/${mailboxId}/pacing`)).json();
    expect(before.effective).toMatchObject({ dailyCap: 30, hourlyCap: null, ramp: null, gapMinutes: [8, 15], workDays: [1, 2, 3, 4, 5], dayStart: '08:40', spreadDay: true });

    const ws = await b.call('PATCH', `${base}/pacing`, { dailyCap: 50, ramp: { start: 5, step: 5 }, gapMinutes: [0.5, 1.5], spreadDay: false, workDays: [1, 2, 3, 4, 5, 6], dayStart: '08:00', dayEnd: '18:00' });
    expect(ws.statusCode, ws.body).toBe(200);
    expect(ws.json().effective).toMatchObject({ dailyCap: 50, ramp: { start: 5, step: 5 }, gapMinutes: [0.5, 1.5], workDays: [1, 2, 3, 4, 5, 6] });

    const inherited = (await b.call('GET', `${base}/mailboxes/${mailboxId}/pacing`)).json();
    expect(inherited.own).toEqual({ caps: {}, pacing: {} });
    expect(inherited.effective).toMatchObject({ dailyCap: 50, ramp: { start: 5, step: 5 }, gapMinutes: [0.5, 1.5], dayStart: '08:00', dayEnd: '18:00', spreadDay: false });
    const listed = (await b.call('GET', `${base}/mailboxes`)).json().mailboxes[0];
    expect(listed).toMatchObject({ dailyCap: 50, todayCap: 5 });

    const own = await b.call('PATCH', `${base}/mailboxes/${mailboxId}/pacing`, { gapMinutes: [1, 2], hourlyCap: 10, ramp: null, lunch: null });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json().effective).toMatchObject({ dailyCap: 50, hourlyCap: 10, ramp: null, gapMinutes: [1, 2], lunch: null });
    const row = await h.store.db.selectFrom('mailbox').select(['daily_cap', 'hourly_cap', 'ramp']).where('id', '=', mailboxId).executeTakeFirstOrThrow();
    expect(row).toEqual({ daily_cap: null, hourly_cap: 10, ramp: {} });

    const reset = (await b.call('PATCH', `${base}/mailboxes/${mailboxId}/pacing`, { reset: ['gapMinutes', 'ramp'] })).json();
    expect(reset.effective).toMatchObject({ gapMinutes: [0.5, 1.5], ramp: { start: 5, step: 5 }, hourlyCap: 10 });
  });

  it('refuses bad settings with plain words and the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ gapMinutes: [2, 1] }, /gapMinutes.*minimum may not be larger than the maximum/],
      [{ gapMinutes: [0.05, 1] }, /gapMinutes/],
      [{ dayStart: '25:00' }, /dayStart.*HH:MM/],
      [{ dailyCap: 0 }, /dailyCap.*at least 1/],
      [{ hourlyCap: 0 }, /hourlyCap.*at least 1/],
      [{ workDays: [] }, /at least one working day/],
      [{ gapMinute: [1, 2] }, /gapMinute/],
      [{ dayStart: '12:00', dayEnd: '12:30' }, /at least an hour/],
    ];
    for (const [body, message] of cases) {
      const r = await b.call('PATCH', `${base}/mailboxes/${mailboxId}/pacing`, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
      expect(r.json().error.message, JSON.stringify(body)).toMatch(message);
    }
  });

  it('PUT /sequences warns when a step delay is shorter than its mailboxes gap, naming both', async () => {
    await b.call('PATCH', `${base}/mailboxes/${mailboxId}/pacing`, { gapMinutes: [8, 15] });
    const seq = {
      key: 'quick',
      name: 'Quick',
      mailboxes: ['rep@pace.test'],
      steps: [
        { key: 'one', type: 'email', subject: 'Hi', body: 'Hello' },
        { key: 'two', type: 'email', delay: '2 minutes', body: 'Again' },
        { key: 'three', type: 'email', delay: '1 day', body: 'Once more' },
      ],
    };
    const r = await b.call('PUT', `${base}/sequences`, seq);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().warnings).toEqual([expect.stringMatching(/^step two: .*2 minutes.*rep@pace\.test \(8 min-15 min\)/)]);
    await b.call('PATCH', `${base}/mailboxes/${mailboxId}/pacing`, { gapMinutes: [0.5, 1] });
    expect((await b.call('PUT', `${base}/sequences`, seq)).json().warnings).toEqual([]);
  });
});
