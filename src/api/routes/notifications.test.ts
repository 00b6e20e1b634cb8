import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerAndRep, type OwnerAndRep } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { fanOut } from '../notify/fanout.ts';

/**
 * The notification routes (issue 19): each member sees and marks only their own notifications
 * (here the call task of their own mailbox's sequence), chooses for themselves, and the Slack URL
 * is refused on loopback in words, kept sealed, and never shown back (its host only).
 */
describe.each(testBackends())('notification routes (%s)', (backend) => {
  let f: OwnerAndRep;
  let base: string;

  beforeAll(async () => {
    f = await ownerAndRep(backend);
    base = `/api/workspaces/${f.ws}`;
    await fanOut({ store: f.h.store, clock: systemClock });
  }, 60_000);
  afterAll(() => f?.h.close());

  it("lists a member's own notifications and marks only theirs read", async () => {
    const rep = (await f.rep.call('GET', `${base}/notifications`)).json();
    const owner = (await f.owner.call('GET', `${base}/notifications`)).json();
    expect(rep.unread).toBe(1);
    expect(rep.items.map((i: { kind: string; link: string }) => [i.kind, i.link])).toEqual([['task_due', '/tasks']]);
    expect(owner.items).toHaveLength(1);
    expect(owner.items[0].id).not.toBe(rep.items[0].id);
    const theirs = await f.rep.call('POST', `${base}/notifications/read`, { ids: [owner.items[0].id] });
    expect(theirs.json()).toEqual({ marked: 0, unread: 1 });
    expect((await f.rep.call('POST', `${base}/notifications/read`, { all: true })).json()).toEqual({ marked: 1, unread: 0 });
    expect((await f.owner.call('GET', `${base}/notifications?unread=true`)).json().unread).toBe(1);
  });

  it('keeps choices per member, with the defaults before any', async () => {
    const d = (await f.rep.call('GET', `${base}/notification-preferences`)).json();
    expect(d.kinds.map((k: { kind: string; inApp: boolean; email: boolean }) => [k.kind, k.inApp, k.email])).toEqual([
      ['reply_positive', true, false],
      ['meeting_booked', true, false],
      ['task_due', true, false],
      ['mailbox_attention', true, false],
    ]);
    expect(d).toMatchObject({ scope: 'mine', digestEveryHours: 24, slack: { configured: false, host: null }, mailConfigured: false });
    // A settings kind is an admin's and owner's to hear of, so only they choose its channels.
    const ownerKinds = (await f.owner.call('GET', `${base}/notification-preferences`)).json().kinds;
    expect(ownerKinds.map((k: { kind: string; label: string }) => [k.kind, k.label]).at(-1)).toEqual(['sso_attention', 'Single sign-on needs attention']);
    const bad = await f.rep.call('PUT', `${base}/notification-preferences`, { kinds: [], scope: 'mine', digestEveryHours: 5 });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/every 1, 4 or 24 hours/);
    const r = await f.rep.call('PUT', `${base}/notification-preferences`, { kinds: [{ kind: 'task_due', inApp: false, browser: false, email: true, slack: false }], scope: 'all', digestEveryHours: 4 });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ scope: 'all', digestEveryHours: 4 });
    expect(r.json().kinds.find((k: { kind: string }) => k.kind === 'task_due')).toMatchObject({ kind: 'task_due', inApp: false, email: true });
    // The owner's are untouched.
    expect((await f.owner.call('GET', `${base}/notification-preferences`)).json()).toMatchObject({ scope: 'mine', digestEveryHours: 24 });
  });

  it('refuses a loopback Slack URL in words, seals a good one and shows only its host', async () => {
    const refused = await f.rep.call('PUT', `${base}/notification-preferences/slack`, { url: 'http://127.0.0.1:9/hook' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/Slack webhook URL must be https/);
    const secret = 'T0001/B0002/k3ep-th1s-s3cret';
    const r = await f.rep.call('PUT', `${base}/notification-preferences/slack`, { url: `https://hooks.example.test/services/${secret}` });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().slack).toEqual({ configured: true, host: 'hooks.example.test', disabledReason: null });
    expect(r.body).not.toContain(secret);
    const row = await f.h.store.db.selectFrom('notification_setting').select(['slack_url_sealed']).where('workspace_id', '=', f.ws).where('slack_host', '=', 'hooks.example.test').executeTakeFirstOrThrow();
    expect(row.slack_url_sealed!.toString('latin1')).not.toContain(secret);
    const audit = await f.owner.call('GET', `${base}/audit-log`);
    expect(audit.statusCode).toBe(200);
    expect(audit.body).toContain('notifications-slack');
    expect(audit.body).not.toContain(secret);
    const gone = await f.rep.call('PUT', `${base}/notification-preferences/slack`, { url: null });
    expect(gone.json().slack).toEqual({ configured: false, host: null, disabledReason: null });
  });

  it("tells a meeting booked on a call to the enrollment's owner, not to a member who turned meetings off", async () => {
    // The owner hears of everyone's events, except meetings.
    const off = { inApp: false, browser: false, email: false, slack: false };
    const mine = await f.owner.call('PUT', `${base}/notification-preferences`, { kinds: [{ kind: 'meeting_booked', ...off }], scope: 'all', digestEveryHours: 24 });
    expect(mine.statusCode, mine.body).toBe(200);
    const done = await f.rep.call('POST', `${base}/tasks/${f.repsMailbox.taskId}/complete`, { outcome: 'meeting_booked' });
    expect(done.statusCode, done.body).toBe(200);
    await fanOut({ store: f.h.store, clock: systemClock });
    const rep = (await f.rep.call('GET', `${base}/notifications`)).json();
    expect(rep.items[0]).toMatchObject({ kind: 'meeting_booked', title: 'Meeting booked with Lead r', body: 'Booked on a call · Sequence r', link: `/leads/${f.repsMailbox.leadId}` });
    const owner = (await f.owner.call('GET', `${base}/notifications`)).json();
    expect(owner.items.map((i: { kind: string }) => i.kind)).not.toContain('meeting_booked');
    // Completed once: the same task again is refused, and nothing more is told.
    expect((await f.rep.call('POST', `${base}/tasks/${f.repsMailbox.taskId}/complete`, { outcome: 'meeting_booked' })).statusCode).toBe(409);
    expect(await fanOut({ store: f.h.store, clock: systemClock })).toBe(0);
  });
});
