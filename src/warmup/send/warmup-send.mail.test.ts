/**
 * Two opted-in mailboxes on the mail bed (Postfix + Dovecot) send each other their planned warmup
 * mail through the real sender path: the day's plan written by plan-store, each mailbox's
 * MailboxSender (campaign queue empty) handing its warmup mail to its SMTP transport under its
 * bucket, delivery by Postfix, then the receiver's connector pulls and the receiving side verifies
 * it and plans a reply, which goes back the same way, in thread, and verifies too.
 * Both are on one domain (the bed's), which the planner would never pair: the plan here is the two
 * sends written directly, what the planner's output is stored as.
 * Mail-bed users: sync96 (A), sync97 (B).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { createConnector } from '../../mailbox/connectors/registry.ts';
import type { Transport } from '../../mailbox/connectors/connector.ts';
import type { FetchedMessage } from '../../mailbox/sync/source.ts';
import { trackingKey } from '../../sending/compose/tracking.ts';
import { MailboxSender } from '../../sending/mailbox-sender.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { recordWarmupReceipt, setWarmup } from '../membership.ts';
import { writeDayPlan } from '../plan-store.ts';
import { receiveWarmup } from '../receive/receive.ts';
import { warmupPoolKey } from '../text/marker.ts';
import { scheduleWarmupReply } from './replies.ts';
import { sendDueWarmup } from './warmup-sender.ts';

const PASS = 'pass';
const users = [
  { email: 'sync96@inbox.test', name: 'Anna Berg', id: '00000000-0000-7000-8001-' + randomBytes(6).toString('hex') },
  { email: 'sync97@inbox.test', name: 'Ben Ode', id: '00000000-0000-7000-8001-' + randomBytes(6).toString('hex') },
] as const;
const master = randomBytes(32);
const KEY = warmupPoolKey(master, 'default');
const pacing = { dayStart: '00:30', dayEnd: '23:30', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [1, 1] };
/** A zone in which it is around noon now, so the mailboxes' working day is open whenever the test runs. */
const noonZone = (() => {
  const k = 12 - new Date().getUTCHours();
  return k === 0 ? 'UTC' : k > 0 ? `Etc/GMT-${k}` : `Etc/GMT+${-k}`;
})();

describeMailBed('warmup mail sent through the real sender on the bed', () => {
  let store: TestStore;
  const random = seededRandom(96);
  // The real clock, moved on by `skew` where the test must pass the mailbox's minimum gap without waiting it out.
  let skew = 0;
  const clock = { ...systemClock, now: () => Date.now() + skew };
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    await resetMailBed(users.map((u) => u.email));
    store = await freshStore('pglite');
    for (const [i, u] of users.entries()) {
      const ws = '00000000-0000-7000-8000-' + randomBytes(6).toString('hex');
      await store.db.insertInto('workspace').values({ id: ws, name: `W${i}`, time_zone: 'UTC' }).execute();
      const settings = { smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), serverSavesSent: false, pacing };
      await store.db.insertInto('mailbox').values({ id: u.id, workspace_id: ws, email: u.email, display_name: u.name, provider: 'smtp_imap', settings: JSON.stringify(settings), time_zone: noonZone }).execute();
      await setWarmup(store.db, ws, u.id, { enabled: true }, clock.now());
    }
  }, 60_000);
  afterAll(async () => {
    for (const c of closers) await c();
    await store?.destroy();
  });

  function senderOf(i: 0 | 1): MailboxSender {
    const u = users[i];
    const credential = { kind: 'password' as const, username: u.email, password: PASS };
    const transport: Transport = createConnector({ id: u.id, email: u.email, provider: 'smtp_imap', settings: { smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), serverSavesSent: false } }, { clock, random, credential }, ['send']);
    closers.push(() => transport.close());
    return new MailboxSender(u.id, {
      store,
      service: new EnrollmentService({ store, clock, random }),
      clock,
      random,
      paced: true,
      transport,
      trackingKey: trackingKey(master),
      publicUrl: 'https://cadenza.example.test',
      pauseMailbox: async () => undefined,
      extraStep: (id) => sendDueWarmup({ store, clock, transport, keyFor: () => KEY }, id),
    });
  }

  async function pull(i: 0 | 1): Promise<{ messages: FetchedMessage[]; folders: ReturnType<typeof createConnector> }> {
    const u = users[i];
    const c = createConnector({ id: u.id, email: u.email, provider: 'smtp_imap', settings: { imap: bedEndpoint('imap') } }, { clock, random, credential: { kind: 'password', username: u.email, password: PASS } }, ['sync', 'folders']);
    closers.push(() => c.close());
    const out: FetchedMessage[] = [];
    for await (const batch of c.pull(null, { resyncWindowMs: 3_600_000 })) out.push(...batch.messages);
    return { messages: out, folders: c };
  }

  it('each sends its planned mail once; the other verifies it, and a reply comes back in thread', async () => {
    const now = clock.now();
    const members = new Map(users.map((u) => [u.id, { address: u.email, mailboxId: u.id }]));
    const [toB, toA] = await writeDayPlan(store.db, 'default', [{ sender: users[0].id, receiver: users[1].id, at: now - 1000 }, { sender: users[1].id, receiver: users[0].id, at: now - 1000 }], members, random);
    const mid = async (id: string) => (await store.db.selectFrom('warmup_mail').select('message_id').where('id', '=', id).executeTakeFirstOrThrow()).message_id;
    const [midToB, midToA] = [await mid(toB!), await mid(toA!)];

    const senders = [senderOf(0), senderOf(1)] as const;
    for (const s of senders) expect(await s.step()).toMatchObject({ kind: 'extra', result: { kind: 'sent' } });
    // At most once: nothing more is due.
    for (const s of senders) expect(await s.step()).toEqual({ kind: 'idle' });
    expect(await readInbox(users[1].email, PASS, midToB)).toHaveLength(1);
    expect(await readInbox(users[0].email, PASS, midToA)).toHaveLength(1);

    // B reads A's mail: it verifies, its placement is recorded, and a reply is planned.
    const pulledB = await pull(1);
    const deps = {
      key: KEY,
      pool: 'default',
      folders: pulledB.folders,
      record: (r: Parameters<typeof recordWarmupReceipt>[1]) => recordWarmupReceipt(store.db, r, random),
      reply: { share: 1, minDelayMs: 0, maxDelayMs: 1, working: () => true },
      random,
    };
    const atB = pulledB.messages.find((m) => Buffer.from(m.raw).toString('latin1').includes(midToB))!;
    const got = await receiveWarmup(atB, { mailboxId: users[1].id, address: users[1].email }, deps, clock.now());
    expect(got).toMatchObject({ warmup: true, kind: 'first', folder: 'inbox', actions: [{ action: 'flag', result: { status: 'done' } }, { action: 'markRead', result: { status: 'done' } }], reply: { to: users[0].email, toName: 'Anna', inReplyTo: midToB } });
    const placed = await store.db.selectFrom('warmup_mail').select(['received_folder', 'sent_at']).where('message_id', '=', midToB).executeTakeFirstOrThrow();
    expect(placed.received_folder).toBe('inbox');
    expect(placed.sent_at).not.toBeNull();
    if (!got.warmup || !got.reply) throw new Error('no reply planned');
    const subject = (await import('postal-mime')).default.parse(atB.raw).then((m) => m.subject ?? '');
    const replyId = await scheduleWarmupReply(store.db, { pool: 'default', senderMailboxId: users[1].id, senderAddress: users[1].email, to: got.reply.to, toName: got.reply.toName, inReplyTo: got.reply.inReplyTo, subject: await subject, language: got.language, at: clock.now() - 1000 }, random);
    expect(replyId).not.toBeNull();
    // B sent its first mail a moment ago: the reply waits for B's minimum gap (1 min), under the same bucket.
    expect(await senders[1].step()).toEqual({ kind: 'idle' });
    skew = 61_000;
    expect(await senders[1].step()).toMatchObject({ kind: 'extra', result: { kind: 'sent' } });
    const replyMid = (await store.db.selectFrom('warmup_mail').select('message_id').where('id', '=', replyId!).executeTakeFirstOrThrow()).message_id;
    expect(await readInbox(users[0].email, PASS, replyMid)).toHaveLength(1);

    // A reads the reply: a warmup reply to its own mail, in thread.
    const pulledA = await pull(0);
    const atA = pulledA.messages.find((m) => Buffer.from(m.raw).toString('latin1').includes(replyMid))!;
    const raw = Buffer.from(atA.raw).toString('latin1');
    expect(raw).toMatch(new RegExp(`In-Reply-To: ${midToB.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const back = await receiveWarmup(atA, { mailboxId: users[0].id, address: users[0].email }, { ...deps, folders: pulledA.folders }, clock.now());
    expect(back).toMatchObject({ warmup: true, kind: 'reply', reply: null });
  }, 60_000);
});
