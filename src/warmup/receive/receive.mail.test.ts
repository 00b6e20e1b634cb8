/**
 * The receiving side on the mail bed (Postfix + Dovecot): mailbox A writes two warmup mails to
 * mailbox B, one delivered through Postfix into B's INBOX and one that "the filter" put in B's Junk
 * (APPENDed there: the bed does not filter spam), beside an ordinary human mail. B's connector
 * pulls; each warmup mail verifies, its folder is recorded, the one in Junk is rescued to INBOX,
 * both are flagged and read; the human mail is not warmup and is left as it was.
 * Mail-bed users: sync76 (A), sync77 (B).
 */
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { withImap } from '../../mailbox/imap/connect.ts';
import { createConnector } from '../../mailbox/connectors/registry.ts';
import type { FetchedMessage } from '../../mailbox/sync/source.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, mailBed, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import type { WarmupReceipt } from '../membership.ts';
import { warmupPoolKey, writeWarmup } from '../text/marker.ts';
import { receiveWarmup, type ReceiveResult } from './receive.ts';

const A = 'sync76@inbox.test';
const B = 'sync77@inbox.test';
const PASS = 'pass';
const KEY = warmupPoolKey(Buffer.alloc(32, 3), 'default');
const imapB = { endpoint: bedEndpoint('imap'), username: B, auth: { kind: 'password' as const, password: PASS } };

function warmupMail(n: number, lang: 'en' | 'de') {
  const messageId = `<warmup-${n}-${Date.now()}@inbox.test>`;
  const t = writeWarmup(KEY, lang, { from: A, to: B, messageId, fromName: 'Anna', toName: 'Ben' });
  return { messageId, options: { from: { name: 'Anna Berg', address: A }, to: { name: 'Ben Ode', address: B }, subject: t.subject!, text: t.body, messageId } };
}

async function whereIs(messageId: string): Promise<Array<{ folder: string; flags: string[] }>> {
  const out: Array<{ folder: string; flags: string[] }> = [];
  for (const folder of ['INBOX', 'Junk']) {
    for (const m of await readInbox(B, PASS, messageId, { folder, waitMs: 0 })) out.push({ folder, flags: m.flags.filter((f) => f !== '\\Recent').sort() });
  }
  return out;
}

describeMailBed('warmup receiving side on the bed', () => {
  const connector = createConnector(
    { id: '0192f7a0-0000-7000-8000-000000000077', email: B, provider: 'smtp_imap', settings: { imap: bedEndpoint('imap') } },
    { clock: systemClock, random: seededRandom(77), credential: { kind: 'password', username: B, password: PASS } },
    ['sync', 'folders'],
  );
  beforeAll(async () => {
    await resetMailBed([A, B]);
  }, 60_000);
  afterAll(async () => {
    await connector.close();
  });

  it('rescues warmup mail from Junk, flags and reads it, records the folders, and leaves human mail alone', async () => {
    const inInbox = warmupMail(1, 'en');
    const inJunk = warmupMail(2, 'de');
    const humanId = `<human-${Date.now()}@inbox.test>`;
    const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
    await smtp.sendMail(inInbox.options);
    await smtp.sendMail({ from: { name: 'Anna Berg', address: A }, to: { name: 'Ben Ode', address: B }, subject: 'Lunch?', text: 'Hi Ben, lunch on Friday? Anna', messageId: humanId });
    smtp.close();
    const junkRaw = await new MailComposer(inJunk.options).compile().build();
    await withImap(imapB, (c) => c.append('Junk', junkRaw, [], new Date()));
    expect(await readInbox(B, PASS, inInbox.messageId)).toHaveLength(1); // waits for Postfix's delivery
    expect(await readInbox(B, PASS, humanId)).toHaveLength(1);

    const pulled: FetchedMessage[] = [];
    for await (const batch of connector.pull(null, { resyncWindowMs: 3_600_000 })) pulled.push(...batch.messages);
    const receipts: WarmupReceipt[] = [];
    const deps = {
      key: KEY,
      pool: 'default',
      folders: connector,
      record: async (r: WarmupReceipt) => void receipts.push(r),
      reply: { share: 1, minDelayMs: 60_000, maxDelayMs: 120_000, working: () => true },
      random: seededRandom(1),
    };
    const now = Date.now();
    const results: Array<{ m: FetchedMessage; r: ReceiveResult }> = [];
    for (const m of pulled) results.push({ m, r: await receiveWarmup(m, { mailboxId: '0192f7a0-0000-7000-8000-000000000077', address: B }, deps, now) });
    const byId = (id: string) => results.find(({ m }) => Buffer.from(m.raw).toString('latin1').includes(id))!.r;

    expect(byId(humanId)).toEqual({ warmup: false });
    expect(byId(inInbox.messageId)).toMatchObject({ warmup: true, language: 'en', kind: 'first', folder: 'inbox', reply: { to: A, toName: 'Anna', inReplyTo: inInbox.messageId } });
    const junk = byId(inJunk.messageId);
    expect(junk).toMatchObject({ warmup: true, language: 'de', folder: 'junk' });
    expect(junk.warmup && junk.actions.map((a) => [a.action, a.result.status])).toEqual([
      ['moveToInbox', 'done'],
      ['flag', 'done'],
      ['markRead', 'done'],
    ]);
    expect(receipts.map((r) => [r.messageId, r.folder]).sort()).toEqual([[inInbox.messageId, 'inbox'], [inJunk.messageId, 'junk']].sort());

    expect(await whereIs(inJunk.messageId)).toEqual([{ folder: 'INBOX', flags: ['\\Flagged', '\\Seen'] }]);
    expect(await whereIs(inInbox.messageId)).toEqual([{ folder: 'INBOX', flags: ['\\Flagged', '\\Seen'] }]);
    expect(await whereIs(humanId)).toEqual([{ folder: 'INBOX', flags: [] }]);
  }, 60_000);
});
