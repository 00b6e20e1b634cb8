import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { bedMailboxBody, mailBed, readInbox, resetMailBed } from '../../test/mail/mailbed.ts';
import { SESSION_COOKIE } from '../api/auth/sessions.ts';
import { createLogger } from '../common/logger.ts';
import { replyMail } from '../../test/ingest/seed-sent-sequence.ts';
import { startApp, type RunningApp } from '../app/app.ts';

/**
 * Removing a mailbox in the running app (every role in one process, the mail bed's Postfix and
 * Dovecot): sync20 has sent to one prospect and holds another enrollment not yet sent; it is
 * removed. The thread's enrollment pauses; the other moves to sync21 and is sent from sync21; the
 * sender and sync pools drop sync20 and never take it again; a reply to sync20 is not ingested
 * while a reply to sync21 stops its enrollment.
 */
const GONE = 'sync20@inbox.test';
const STAYS = 'sync21@inbox.test';

describeMailBed('removing a mailbox stops its sending and syncing, and the other mailbox carries on', () => {
  let app: RunningApp;
  let dir: string;
  let call: <T>(method: string, path: string, body?: unknown) => Promise<T>;
  const tag = randomBytes(4).toString('hex');
  const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
  const prospect = (n: number) => ({ email: `p${n}+rm${tag}@prospects.test`, inbox: mailBed.prospects[n - 1]! });

  beforeAll(async () => {
    await resetMailBed([GONE, STAYS]);
    dir = mkdtempSync(join(tmpdir(), 'cadenza-removal-'));
    app = await startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api', 'scheduler', 'sender', 'sync'], log: createLogger({ level: 'silent' }), polls: { refillEveryMs: 1_000, planEveryMs: 1_000 } });
    const base = app.url!;
    const setup = await fetch(`${base}/api/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ setupToken: app.setupToken!.token, email: 'owner@removal.test', password: 'a long enough password', workspaceName: 'Removal' }) });
    expect(setup.status).toBe(201);
    const me = (await setup.json()) as { workspaces: Array<{ id: string }>; csrfToken: string };
    const ws = me.workspaces[0]!.id;
    const cookie = setup.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!.split(';')[0]!;
    call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const r = await fetch(`${base}/api/workspaces/${ws}/${path}`, {
        method,
        headers: { cookie, 'x-csrf-token': me.csrfToken, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as T;
    };
  }, 120_000);
  afterAll(async () => {
    smtp.close();
    await app?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const until = async (what: string, check: () => Promise<boolean>, ms = 90_000) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const lease = async (resource: string) => !!(await app.store.db.selectFrom('lease').select('resource').where('resource', '=', resource).where('expires_at', '>', new Date()).executeTakeFirst());
  const sentRequest = async (enrollmentId: string) =>
    app.store.db.selectFrom('send_request').select(['state', 'message_id', 'mailbox_id']).where('enrollment_id', '=', enrollmentId).where('state', '=', 'sent').executeTakeFirst();
  const enrollment = async (leadId: string, sequenceId: string) =>
    app.store.db.selectFrom('enrollment').select(['id', 'state', 'state_reason', 'mailbox_id']).where('lead_id', '=', leadId).where('sequence_id', '=', sequenceId).executeTakeFirstOrThrow();

  it('sync20 removed: its thread pauses, its unsent enrollment is sent from sync21, neither pool touches sync20 again', async () => {
    const connect = (email: string) => call<{ id: string }>('POST', 'mailboxes', bedMailboxBody(email, 'pass'));
    const gone = await connect(GONE);
    const stays = await connect(STAYS);
    const lead = (n: number) => call<{ id: string }>('POST', 'leads', { email: prospect(n).email, firstName: `P${n}` });
    const [p1, p2] = [await lead(1), await lead(2)];
    const sequence = (key: string, mailboxes: string[], delay: string) =>
      call<{ sequenceId: string }>('PUT', 'sequences', {
        key: `${key}${tag}`,
        name: `${key} ${tag}`,
        window: 'any',
        jitterMinutes: 0,
        mailboxes,
        steps: [
          { key: 's1', type: 'email', delay, subject: `Hello {{first_name}} ${key} ${tag}`, body: 'A quick question, {{first_name}}.', title: '', variants: [] },
          { key: 's2', type: 'email', delay: '3 days', subject: `Re: Hello {{first_name}} ${key} ${tag}`, body: 'Any thoughts?', title: '', variants: [] },
        ],
      });
    // "only": sync20 alone sends p1's first email (a thread). "pool": p2 waits a day for its first step, on sync20.
    const only = await sequence('only', [GONE], '0 minutes');
    const pool = await sequence('pool', [GONE, STAYS], '1 days');
    await until('a sender and a syncer on both mailboxes', async () => (await lease(`mailbox:${gone.id}`)) && (await lease(`sync:${gone.id}`)) && (await lease(`mailbox:${stays.id}`)) && (await lease(`sync:${stays.id}`)));

    await call('POST', `sequences/${only.sequenceId}/enroll`, { leadIds: [p1.id] });
    await call('POST', `sequences/${pool.sequenceId}/enroll`, { leadIds: [p2.id] });
    const e1 = await enrollment(p1.id, only.sequenceId);
    const e2 = await enrollment(p2.id, pool.sequenceId);
    // The rotation may have put p2 on either mailbox; the case under test is one on sync20.
    await app.store.db.updateTable('enrollment').set({ mailbox_id: gone.id }).where('id', '=', e2.id).execute();
    await until('p1 sent from sync20', async () => !!(await sentRequest(e1.id)));
    const first = (await sentRequest(e1.id))!;
    expect(first.mailbox_id).toBe(gone.id);
    expect(await readInbox(prospect(1).inbox.user, prospect(1).inbox.pass, first.message_id!, { waitMs: 30_000 })).toHaveLength(1);

    const preview = await call<{ reassigned: number; paused: number; dryRun: boolean }>('DELETE', `mailboxes/${gone.id}?dryRun=true`);
    expect(preview).toMatchObject({ dryRun: true, reassigned: 1, paused: 1 });
    const removed = await call<{ reassigned: number; paused: number; reassignedTo: Array<{ email: string }> }>('DELETE', `mailboxes/${gone.id}`);
    expect(removed).toMatchObject({ reassigned: 1, paused: 1, reassignedTo: [{ email: STAYS, enrollments: 1 }] });
    expect(await enrollment(p1.id, only.sequenceId)).toMatchObject({ state: 'paused', mailbox_id: gone.id, state_reason: expect.stringMatching(/^mailbox removed/) });
    expect(await enrollment(p2.id, pool.sequenceId)).toMatchObject({ state: 'active', mailbox_id: stays.id });

    // Both pools let go of sync20 at once (the removal wakes their lease pass): no lease on it, no loop for it.
    await until('both pools to drop sync20', async () => !app.senders!.mailboxes.includes(gone.id) && !app.syncs!.mailboxes.includes(gone.id), 5_000);
    expect(await lease(`mailbox:${gone.id}`)).toBe(false);
    expect(await lease(`sync:${gone.id}`)).toBe(false);

    // p2's step falls due now (set in the store, as another process would: the scheduler's refill, every second here, finds it); it leaves from sync21.
    await app.store.db.updateTable('enrollment').set({ due_at: new Date() }).where('id', '=', e2.id).execute();
    await until('p2 sent from sync21', async () => !!(await sentRequest(e2.id)));
    const second = (await sentRequest(e2.id))!;
    expect(second.mailbox_id).toBe(stays.id);
    const [got] = await readInbox(prospect(2).inbox.user, prospect(2).inbox.pass, second.message_id!, { waitMs: 30_000 });
    expect(got!.source.toString()).toMatch(new RegExp(`^From: .*${STAYS}`, 'mi'));

    // A reply to sync20 first, then one to sync21: sync21's is ingested and stops p2; sync20's never is.
    const reply = async (from: string, to: string, inReplyTo: string, id: string) =>
      smtp.sendMail({ envelope: { from, to: [to] }, raw: replyMail({ from, to, inReplyTo, subject: 'Re: Hello', body: 'Sounds good, call me.', messageId: id }) });
    await reply(prospect(1).email, GONE, first.message_id!, `<to-gone-${tag}@prospects.test>`);
    await reply(prospect(2).email, STAYS, second.message_id!, `<to-stays-${tag}@prospects.test>`);
    await until('p2 replied', async () => (await enrollment(p2.id, pool.sequenceId)).state === 'replied');
    // Two more balance passes of each pool (the passes they run every ttl/3 on their own, run now):
    // a pool that took removed mailboxes again would have done so, and pulled the reply to sync20.
    for (let i = 0; i < 2; i++) await Promise.all([app.syncs!.balance(), app.senders!.balance()]);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(app.syncs!.mailboxes).toEqual([stays.id]);
    expect(app.senders!.mailboxes).toEqual([stays.id]);
    expect(await lease(`sync:${gone.id}`)).toBe(false);
    expect(await lease(`mailbox:${gone.id}`)).toBe(false);
    const ingested = await app.store.db.selectFrom('message').select('message_id').where('message_id', 'in', [`<to-gone-${tag}@prospects.test>`, `<to-stays-${tag}@prospects.test>`]).execute();
    expect(ingested.map((m) => m.message_id)).toEqual([`<to-stays-${tag}@prospects.test>`]);
    expect((await enrollment(p1.id, only.sequenceId)).state).toBe('paused');
    // Nothing more left sync20.
    expect(await app.store.db.selectFrom('send_request').select('id').where('mailbox_id', '=', gone.id).where('state', 'in', ['sent', 'in_flight', 'queued']).execute()).toHaveLength(1);
  }, 240_000);
});
