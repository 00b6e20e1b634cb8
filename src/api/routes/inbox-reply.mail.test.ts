import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { startFaultProxy, type FaultProxy } from '../../../test/mail/fault-proxy.ts';
import { bedEndpoint, countByMessageId, mailBed, mailBedSkipReason, readInbox, startMailBed } from '../../../test/mail/mailbed.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { addMembership } from '../auth/accounts.ts';
import { hashPassword } from '../auth/passwords.ts';
import { seededRandom } from '../../common/random.ts';
import { parseMail } from '../../ingest/parse/parse-mail.ts';

/**
 * Replying from the unified inbox through the mail bed: sync23 (the rep) received messages from
 * sync22 (the prospect); the reply goes out over sync23's own SMTP submission and lands once in
 * sync22's INBOX, threaded, to the Reply-To when there is one. The bed files every submitted
 * message in the sender's Sent folder (as Gmail and Outlook do), which is what settles a reply
 * whose connection broke around the DATA terminator (the fault proxy cuts it there).
 */

const REP = { user: 'sync23@inbox.test', pass: 'pass' };
const PROSPECT = { user: 'sync22@inbox.test', pass: 'pass' };
/** +tags deliver to the base user's INBOX: distinct addresses, one mailbox to read. */
const ASSISTANT = 'sync22+assistant@inbox.test';
const BOSS = 'sync22+boss@inbox.test';
/** A colleague's mailbox in the same workspace: on the thread, never a recipient of the answer. */
const COLLEAGUE = 'sync23+team@inbox.test';

type Sent = { id: string; messageId: string; mailboxId: string; to: string[]; cc: string[]; subject: string; confirmedBy: string; replayed: boolean };

describe.skipIf(mailBedSkipReason() !== null)('POST /inbox/messages/:messageId/reply (mail bed)', () => {
  let h: ApiHarness;
  let owner: Browser;
  let workspaceId: string;
  let mailboxId: string;
  let proxy: FaultProxy;
  const random = seededRandom(`inbox-reply-${Date.now()}`);
  const id = () => newId(Date.now(), random);
  // Unique per run: the bed's mailboxes keep earlier runs' mail.
  const run = id();
  const firstMessageId = `<first-${run}@inbox.test>`;
  let n = 0;

  /** An inbound message from the prospect, as ingestion stores it. */
  async function inbound(o: { replyTo?: string[]; to?: string[]; cc?: string[] } = {}): Promise<{ rowId: string; messageId: string }> {
    const rowId = id();
    const messageId = `<in-${run}-${++n}@inbox.test>`;
    await h.store.db
      .insertInto('message')
      .values({
        id: rowId, workspace_id: workspaceId, mailbox_id: mailboxId, enrollment_id: null, direction: 'inbound', message_id: messageId,
        in_reply_to: firstMessageId, refs: [firstMessageId], thread_id: null, subject: 'Re: Pricing for next quarter', from_addr: PROSPECT.user,
        to_addrs: o.to ?? [REP.user], reply_to: o.replyTo ?? [], cc_addrs: o.cc ?? [], at: new Date(), folder: 'inbox', label: 'human_reply', action: 'reply', excerpt: 'what would it cost?',
      })
      .execute();
    return { rowId, messageId };
  }
  const reply = (rowId: string, body: Record<string, unknown>) => owner.call('POST', `/api/workspaces/${workspaceId}/inbox/messages/${rowId}/reply`, body);
  /** The mailbox's SMTP through the fault proxy (plain: the proxy reads the dialogue), or directly. */
  const smtpVia = async (viaProxy: boolean) => {
    const smtp = viaProxy ? { ...bedEndpoint('smtp', 'none'), port: proxy.port } : bedEndpoint('smtp');
    await h.store.db.updateTable('mailbox').set({ settings: JSON.stringify({ smtp, imap: bedEndpoint('imap'), serverSavesSent: true }) }).where('id', '=', mailboxId).execute();
  };

  beforeAll(async () => {
    await startMailBed();
    proxy = await startFaultProxy({ host: mailBed.host, port: mailBed.submissionPort });
    h = await apiHarness('pglite', {}, { sender: { replySettle: { windowMs: 4_000, pollMs: 200 } } });
    const w = await seedWorkspace(h.store, 'Reply', 'owner-reply@example.test');
    workspaceId = w.workspaceId;
    owner = await login(h.app, 'owner-reply@example.test', w.password);
    mailboxId = id();
    await h.store.db.insertInto('mailbox').values({ id: mailboxId, workspace_id: workspaceId, user_id: w.userId, email: REP.user, display_name: 'Sync Rep', provider: 'smtp_imap', settings: '{}' }).execute();
    await smtpVia(false);
    await h.store.db.insertInto('mailbox').values({ id: id(), workspace_id: workspaceId, user_id: w.userId, email: COLLEAGUE, display_name: 'Team', provider: 'smtp_imap', settings: JSON.stringify({ smtp: bedEndpoint('smtp'), imap: bedEndpoint('imap'), serverSavesSent: true }) }).execute();
    await h.ctx.vault!.put(workspaceId, mailboxId, { kind: 'password', username: REP.user, password: REP.pass });
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    await h?.close();
  });

  it('sends one threaded copy from the receiving mailbox and records the outbound row', async () => {
    const m = await inbound();
    const res = await reply(m.rowId, { text: `Hello, it is 10 a seat (${run}).` });
    expect(res.statusCode, res.body).toBe(200);
    const out = res.json<Sent>();
    expect(out).toMatchObject({ mailboxId, to: [PROSPECT.user], cc: [], subject: 'Re: Pricing for next quarter', confirmedBy: 'server', replayed: false });

    const got = await readInbox(PROSPECT.user, PROSPECT.pass, out.messageId, { waitMs: 10_000 });
    expect(got).toHaveLength(1);
    const mail = await parseMail(got[0]!.source);
    expect(mail.inReplyTo).toBe(m.messageId);
    expect(mail.references).toEqual([firstMessageId, m.messageId]);
    expect(mail.subject).toBe('Re: Pricing for next quarter');
    expect(mail.from?.address).toBe(REP.user);
    expect(mail.text).toContain(run);
    // A moment later there is still exactly one (no second send, no duplicate delivery).
    await new Promise((r) => setTimeout(r, 500));
    expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, out.messageId)).toBe(1);

    const row = await h.store.db.selectFrom('message').selectAll().where('id', '=', out.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ direction: 'outbound', mailbox_id: mailboxId, message_id: out.messageId, in_reply_to: m.messageId, refs: [firstMessageId, m.messageId], from_addr: REP.user, to_addrs: [PROSPECT.user] });
  }, 60_000);

  it('goes to Reply-To, not From; reply all copies the other recipients but never our own mailboxes', async () => {
    const m = await inbound({ replyTo: [ASSISTANT], to: [REP.user, COLLEAGUE], cc: [BOSS, REP.user.toUpperCase()] });
    const one = await reply(m.rowId, { text: `To the assistant only (${run}).` });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json<Sent>()).toMatchObject({ to: [ASSISTANT], cc: [] });
    const a = await parseMail((await readInbox(PROSPECT.user, PROSPECT.pass, one.json<Sent>().messageId, { waitMs: 10_000 }))[0]!.source);
    expect(a.to.map((x) => x.address)).toEqual([ASSISTANT]);
    expect(a.cc).toEqual([]);

    const all = await reply(m.rowId, { text: `To everyone (${run}).`, replyAll: true });
    expect(all.statusCode, all.body).toBe(200);
    const sent = all.json<Sent>();
    expect(sent).toMatchObject({ to: [ASSISTANT], cc: [BOSS] });
    const b = await parseMail((await readInbox(PROSPECT.user, PROSPECT.pass, sent.messageId, { waitMs: 10_000, atLeast: 2 }))[0]!.source);
    expect(b.to.map((x) => x.address)).toEqual([ASSISTANT]);
    expect(b.cc.map((x) => x.address)).toEqual([BOSS]);
    // Postfix delivered one copy per envelope recipient (assistant, boss), both to sync22; none to our own mailboxes.
    expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, sent.messageId)).toBe(2);
    expect(await countByMessageId(REP.user, REP.pass, sent.messageId)).toBe(0);
  }, 60_000);

  it('connection cut after the 250 to DATA: settled from the Sent folder before answering, 200, delivered once', async () => {
    await smtpVia(true);
    proxy.setMode({ kind: 'drop_after_terminator' });
    try {
      const m = await inbound();
      const swallowed = proxy.stats.swallowedReplies;
      const res = await reply(m.rowId, { text: `Cut after DATA (${run}).`, idempotencyKey: `k-after-${run}` });
      expect(proxy.stats.swallowedReplies).toBe(swallowed + 1);
      expect(res.statusCode, res.body).toBe(200);
      const out = res.json<Sent>();
      expect(out).toMatchObject({ confirmedBy: 'sent_folder', replayed: false });
      await readInbox(PROSPECT.user, PROSPECT.pass, out.messageId, { waitMs: 10_000 });
      expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, out.messageId)).toBe(1);
      // The same key again (a double click): the same answer, nothing sent.
      const again = await reply(m.rowId, { text: `Cut after DATA (${run}).`, idempotencyKey: `k-after-${run}` });
      expect(again.json<Sent>()).toMatchObject({ id: out.id, messageId: out.messageId, replayed: true });
      await new Promise((r) => setTimeout(r, 500));
      expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, out.messageId)).toBe(1);
    } finally {
      proxy.setMode({ kind: 'pass' });
      await smtpVia(false);
    }
  }, 60_000);

  it('connection cut before the server took it: SEND_UNCONFIRMED "not sent"; the retry with the same key sends once, under the same Message-ID', async () => {
    await smtpVia(true);
    proxy.setMode({ kind: 'drop_before_terminator' });
    const m = await inbound();
    const body = { text: `Cut before DATA ended (${run}).`, idempotencyKey: `k-before-${run}` };
    let messageId: string;
    try {
      const res = await reply(m.rowId, body);
      expect(res.statusCode, res.body).toBe(502);
      const err = res.json<{ error: { code: string; message: string; details: { messageId: string; retrySafe: boolean; sentFolder: string } } }>().error;
      expect(err.code).toBe('SEND_UNCONFIRMED');
      expect(err.message).toMatch(/^The reply was not sent: .*not in sync23@inbox\.test's Sent folder after 4 s\. Sending it again with the same idempotency key is safe/);
      expect(err.details).toMatchObject({ retrySafe: true, sentFolder: 'not_found' });
      messageId = err.details.messageId;
      expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, messageId)).toBe(0);
      // Another reply under this key is refused: a key names one reply.
      const other = await reply(m.rowId, { ...body, text: 'something else' });
      expect(other.statusCode).toBe(409);
    } finally {
      proxy.setMode({ kind: 'pass' });
    }
    const retry = await reply(m.rowId, body);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json<Sent>()).toMatchObject({ messageId, confirmedBy: 'server', replayed: false });
    await readInbox(PROSPECT.user, PROSPECT.pass, messageId, { waitMs: 10_000 });
    const again = await reply(m.rowId, body);
    expect(again.json<Sent>()).toMatchObject({ messageId, replayed: true });
    await new Promise((r) => setTimeout(r, 500));
    expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, messageId)).toBe(1);
    expect(await h.store.db.selectFrom('message').select('id').where('message_id', '=', messageId).execute()).toHaveLength(1);
    await smtpVia(false);
  }, 60_000);

  it('a key left "sending" by a process that died: refused while fresh, then settled from the Sent folder (found: no second copy; absent: sent under its Message-ID)', async () => {
    const m = await inbound();
    const body = { text: `Sent, then the process died (${run}).`, idempotencyKey: `k-died-${run}` };
    const first = await reply(m.rowId, body);
    expect(first.statusCode, first.body).toBe(200);
    const sent = first.json<Sent>();
    await readInbox(PROSPECT.user, PROSPECT.pass, sent.messageId, { waitMs: 10_000 });
    // As if the process had died after the server took it, before recording it.
    await h.store.db.deleteFrom('message').where('id', '=', sent.id).execute();
    const key = () => h.store.db.updateTable('reply_request').where('idempotency_key', '=', body.idempotencyKey);
    await key().set({ state: 'sending', result: null, updated_at: new Date() }).execute();
    const busy = await reply(m.rowId, body);
    expect(busy.statusCode).toBe(409);
    expect(busy.json().error.message).toMatch(/being sent right now/);
    await key().set({ updated_at: new Date(Date.now() - 10 * 60_000) }).execute();
    const settled = await reply(m.rowId, body);
    expect(settled.statusCode, settled.body).toBe(200);
    expect(settled.json<Sent>()).toMatchObject({ messageId: sent.messageId, confirmedBy: 'sent_folder', replayed: false });
    await new Promise((r) => setTimeout(r, 500));
    expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, sent.messageId)).toBe(1);

    // Died before the hand-over: nothing in Sent, so it is sent now, under the Message-ID the key holds.
    const m2 = await inbound();
    const messageId = `<died-early-${run}@inbox.test>`;
    const early = { text: `Died before the hand-over (${run}).`, idempotencyKey: `k-early-${run}` };
    const hash = createHash('sha256').update(JSON.stringify([m2.rowId, early.text, false])).digest('hex');
    await h.store.db
      .insertInto('reply_request')
      .values({ workspace_id: workspaceId, idempotency_key: early.idempotencyKey, inbound_id: m2.rowId, request_hash: hash, message_id: messageId, state: 'sending', updated_at: new Date(Date.now() - 10 * 60_000) })
      .execute();
    const other = await reply(m2.rowId, { ...early, text: 'Not what the key was for.' });
    expect(other.statusCode).toBe(409);
    expect(other.json().error.message).toMatch(/different reply/);
    const now = await reply(m2.rowId, early);
    expect(now.statusCode, now.body).toBe(200);
    expect(now.json<Sent>()).toMatchObject({ messageId, confirmedBy: 'server' });
    await readInbox(PROSPECT.user, PROSPECT.pass, messageId, { waitMs: 10_000 });
    expect(await countByMessageId(PROSPECT.user, PROSPECT.pass, messageId)).toBe(1);
  }, 60_000);

  it('answers a refused login with MAILBOX_AUTH_FAILED and records nothing; the key may be retried', async () => {
    const m = await inbound();
    await h.ctx.vault!.put(workspaceId, mailboxId, { kind: 'password', username: REP.user, password: 'not-the-password' });
    try {
      const before = await h.store.db.selectFrom('message').select('id').where('direction', '=', 'outbound').execute();
      const res = await reply(m.rowId, { text: 'This one must not go out.', idempotencyKey: `k-auth-${run}` });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.code).toBe('MAILBOX_AUTH_FAILED');
      const after = await h.store.db.selectFrom('message').select('id').where('direction', '=', 'outbound').execute();
      expect(after).toHaveLength(before.length);
    } finally {
      await h.ctx.vault!.put(workspaceId, mailboxId, { kind: 'password', username: REP.user, password: REP.pass });
    }
    const fixed = await reply(m.rowId, { text: 'This one must not go out.', idempotencyKey: `k-auth-${run}` });
    expect(fixed.statusCode, fixed.body).toBe(200);
  }, 60_000);

  it("a member who may read every mailbox's mail still replies only from their own: 403, nothing sent", async () => {
    const m = await inbound();
    const accountId = id();
    await h.store.db.insertInto('account').values({ id: accountId, email: 'member-reply@example.test', name: null, password_hash: await hashPassword('member password 1') }).execute();
    const userId = await addMembership(h.store.db, { clock: systemClock, random }, { accountId, workspaceId, email: 'member-reply@example.test', name: null, role: 'member' });
    await h.store.db.updateTable('app_user').set({ inbox_scope: 'all' }).where('id', '=', userId).execute();
    const member = await login(h.app, 'member-reply@example.test', 'member password 1');
    const res = await member.call('POST', `/api/workspaces/${workspaceId}/inbox/messages/${m.rowId}/reply`, { text: 'Not from my mailbox.' });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');
  }, 60_000);
});
