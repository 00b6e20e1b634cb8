import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { bedEndpoint, countByMessageId, mailBedSkipReason, readInbox, startMailBed } from '../../../test/mail/mailbed.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { addMembership } from '../auth/accounts.ts';
import { hashPassword } from '../auth/passwords.ts';
import { seededRandom } from '../../common/random.ts';
import { parseMail } from '../../ingest/parse/parse-mail.ts';

/**
 * Replying from the unified inbox through the mail bed: sync33 received a message from sync34;
 * the reply goes out over sync33's own SMTP submission and lands once in sync34's INBOX, threaded.
 */

const REP = { user: 'sync33@inbox.test', pass: 'pass' };
const PROSPECT = { user: 'sync34@inbox.test', pass: 'pass' };

describe.skipIf(mailBedSkipReason() !== null)('POST /inbox/messages/:messageId/reply (mail bed)', () => {
  let h: ApiHarness;
  let owner: Browser;
  let workspaceId: string;
  let mailboxId: string;
  let inboundId: string;
  const random = seededRandom(`inbox-reply-${Date.now()}`);
  const id = () => newId(Date.now(), random);
  // Unique per run: the bed's mailboxes keep earlier runs' mail.
  const run = id();
  const inboundMessageId = `<in-${run}@inbox.test>`;
  const firstMessageId = `<first-${run}@inbox.test>`;

  beforeAll(async () => {
    await startMailBed();
    h = await apiHarness('pglite');
    const w = await seedWorkspace(h.store, 'Reply', 'owner-reply@example.test');
    workspaceId = w.workspaceId;
    owner = await login(h.app, 'owner-reply@example.test', w.password);
    mailboxId = id();
    const settings = { smtp: bedEndpoint('smtp'), imap: bedEndpoint('imap'), serverSavesSent: true };
    await h.store.db.insertInto('mailbox').values({ id: mailboxId, workspace_id: workspaceId, user_id: w.userId, email: REP.user, display_name: 'Sync Rep', provider: 'smtp_imap', settings: JSON.stringify(settings) }).execute();
    await h.ctx.vault!.put(workspaceId, mailboxId, { kind: 'password', username: REP.user, password: REP.pass });
    inboundId = id();
    await h.store.db
      .insertInto('message')
      .values({
        id: inboundId, workspace_id: workspaceId, mailbox_id: mailboxId, enrollment_id: null, direction: 'inbound', message_id: inboundMessageId,
        in_reply_to: firstMessageId, refs: [firstMessageId], thread_id: null, subject: 'Re: Pricing for next quarter', from_addr: PROSPECT.user,
        to_addrs: [REP.user], at: new Date(), folder: 'inbox', label: 'human_reply', action: 'reply', excerpt: 'what would it cost?',
      })
      .execute();
  }, 120_000);
  afterAll(async () => h?.close());

  it('sends one threaded copy from the receiving mailbox and records the outbound row', async () => {
    const res = await owner.call('POST', `/api/workspaces/${workspaceId}/inbox/messages/${inboundId}/reply`, { text: `Hello, it is 10 a seat (${run}).` });
    expect(res.statusCode, res.body).toBe(200);
    const out = res.json<{ id: string; messageId: string; mailboxId: string; to: string; subject: string }>();
    expect(out).toMatchObject({ mailboxId, to: PROSPECT.user, subject: 'Re: Pricing for next quarter' });

    const got = await readInbox(PROSPECT.user, PROSPECT.pass, out.messageId, { waitMs: 10_000 });
    expect(got).toHaveLength(1);
    const mail = await parseMail(got[0]!.source);
    expect(mail.inReplyTo).toBe(inboundMessageId);
    expect(mail.references).toEqual([firstMessageId, inboundMessageId]);
    expect(mail.subject).toBe('Re: Pricing for next quarter');
    expect(mail.from?.address).toBe(REP.user);
    expect(mail.text).toContain(run);
    // A moment later there is still exactly one (no second send, no duplicate delivery).
    await new Promise((r) => setTimeout(r, 500));
    expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, out.messageId)).toBe(1);

    const row = await h.store.db.selectFrom('message').selectAll().where('id', '=', out.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ direction: 'outbound', mailbox_id: mailboxId, message_id: out.messageId, in_reply_to: inboundMessageId, refs: [firstMessageId, inboundMessageId], from_addr: REP.user, to_addrs: [PROSPECT.user] });
  }, 60_000);

  it('answers a refused login with MAILBOX_AUTH_FAILED and records nothing', async () => {
    await h.ctx.vault!.put(workspaceId, mailboxId, { kind: 'password', username: REP.user, password: 'not-the-password' });
    const before = await h.store.db.selectFrom('message').select('id').where('direction', '=', 'outbound').execute();
    const res = await owner.call('POST', `/api/workspaces/${workspaceId}/inbox/messages/${inboundId}/reply`, { text: 'This one must not go out.' });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.code).toBe('MAILBOX_AUTH_FAILED');
    const after = await h.store.db.selectFrom('message').select('id').where('direction', '=', 'outbound').execute();
    expect(after).toHaveLength(before.length);
  }, 60_000);
  it("a member who may read every mailbox's mail still replies only from their own: 403, nothing sent", async () => {
    const accountId = id();
    await h.store.db.insertInto('account').values({ id: accountId, email: 'member-reply@example.test', name: null, password_hash: await hashPassword('member password 1') }).execute();
    const userId = await addMembership(h.store.db, { clock: systemClock, random }, { accountId, workspaceId, email: 'member-reply@example.test', name: null, role: 'member' });
    await h.store.db.updateTable('app_user').set({ inbox_scope: 'all' }).where('id', '=', userId).execute();
    const member = await login(h.app, 'member-reply@example.test', 'member password 1');
    const res = await member.call('POST', `/api/workspaces/${workspaceId}/inbox/messages/${inboundId}/reply`, { text: 'Not from my mailbox.' });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');
  }, 60_000);
});
