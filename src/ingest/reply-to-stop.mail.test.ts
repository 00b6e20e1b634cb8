import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build as buildHistogram } from 'hdr-histogram-js';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { Metrics } from '../ops/metrics.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, mailBed, resetMailBed } from '../../test/mail/mailbed.ts';
import { classify } from './classify/ladder.ts';
import { parseMail } from './parse/parse-mail.ts';
import type { IngestReport } from './pipeline.ts';
import { replyMail, seedSentSequence, type Seeded, type SeededSend } from '../../test/ingest/seed-sent-sequence.ts';
import { SyncPool } from './worker/sync-pool.ts';
import { CORPORA } from '../../test/corpora/location.ts';

/**
 * Reply-to-stop, end to end on the real mail bed: replies travel by SMTP through Postfix and LMTP
 * into Dovecot; the sync role (SyncPool) holds the mailbox's lease, IDLEs on INBOX, pulls on the
 * push, and the pipeline stops the enrollment. Latency here is measured by the test itself, from
 * just before the SMTP injection to the commit of the stop, so it includes Postfix's delivery on
 * top of what the /metrics histogram measures (server receipt, INTERNALDATE, to the commit).
 */
const USER = 'sync11@inbox.test';
const PASS = 'pass';
const REPLIES = 30;
const corpora = CORPORA;

describeMailBed('reply to stop through the real mail bed (sync role, IMAP IDLE)', () => {
  let store: TestStore;
  let pool: SyncPool;
  let s: Seeded;
  const metrics = new Metrics();
  const tag = randomBytes(4).toString('hex');
  const waiters = new Map<string, (r: { report: IngestReport; at: number }) => void>();
  const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
  const service = () => new EnrollmentService({ store, clock: systemClock, random: seededRandom(`e2e-${tag}`) });

  const arrival = (messageId: string, timeoutMs = 15_000) =>
    new Promise<{ report: IngestReport; at: number }>((resolve, reject) => {
      const t = setTimeout(() => {
        // Say what the store knows, to tell a missed push from a message that failed to store.
        void Promise.all([
          store.db.selectFrom('mailbox_sync').select(['cursor', 'last_error']).where('mailbox_id', '=', s.mailboxId).executeTakeFirst(),
          store.db.selectFrom('quarantine').select(['provider_key', 'reason']).where('mailbox_id', '=', s.mailboxId).execute(),
          store.db.selectFrom('message').select(['provider_key', 'action']).where('message_id', '=', messageId).execute(),
        ]).then(([sync, q, m]) => reject(new Error(`no batch carried ${messageId} within ${timeoutMs} ms; sync ${JSON.stringify(sync)}; quarantine ${JSON.stringify(q)}; stored ${JSON.stringify(m)}`)));
      }, timeoutMs);
      waiters.set(messageId, (r) => {
        clearTimeout(t);
        resolve(r);
      });
    });
  const inject = (raw: string, from: string) => smtp.sendMail({ envelope: { from, to: [USER] }, raw });
  const append = async (raw: string | Buffer) => {
    const c = new ImapFlow({ host: mailBed.host, port: mailBed.imapPort, secure: false, doSTARTTLS: false, auth: { user: USER, pass: PASS }, logger: false, disableAutoIdle: true });
    c.on('error', () => undefined);
    await c.connect();
    try {
      await c.append('INBOX', raw);
    } finally {
      await c.logout().catch(() => c.close());
    }
  };
  const state = async (id: string) => store.db.selectFrom('enrollment').select(['state', 'state_reason', 'due_at']).where('id', '=', id).executeTakeFirstOrThrow();
  const send = (i: number): SeededSend => s.sends.find((x) => x.leadEmail === `r${i}.${tag}@prospects.test`)!;

  beforeAll(async () => {
    await resetMailBed([USER]);
    store = await freshStore('postgres');
    const master = randomBytes(32);
    const vault = new Vault(store, localKeyWrapper(master));
    const leads = Array.from({ length: REPLIES + 6 }, (_, i) => `r${i}.${tag}@prospects.test`);
    s = await seedSentSequence(store, { clock: systemClock, random: seededRandom(`seed-${tag}`), service: service() }, {
      mailboxEmail: USER,
      leads,
      tag,
      settings: { imap: bedEndpoint('imap'), smtp: bedEndpoint('smtp', 'none') },
      credential: { vault, username: USER, password: PASS },
    });
    pool = new SyncPool({
      store,
      service: service(),
      clock: systemClock,
      random: seededRandom(`pool-${tag}`),
      vault,
      metrics,
      mailboxIds: [s.mailboxId],
      reconcileMs: 60_000,
      leaseTtlMs: 30_000,
      onBatch: (_mb, report) => {
        const at = Date.now();
        for (const m of report.messages) waiters.get(m.messageId)?.({ report, at });
      },
    });
    await pool.start();
    expect(pool.mailboxes).toEqual([s.mailboxId]);
    // The first pull (an empty INBOX) stores a cursor; the IDLE watch is set up before it.
    for (let i = 0; i < 200 && !(await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).where('cursor', 'is not', null).executeTakeFirst()); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 120_000);

  afterAll(async () => {
    await pool?.stop();
    smtp.close();
    await store?.destroy();
  });

  it(`stops each of ${REPLIES} replies' enrollments, cancels the follow-up, p99 under 2 s`, async () => {
    const h = buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
    for (let i = 0; i < REPLIES; i++) {
      const x = send(i);
      const messageId = `<reply-${i}-${tag}@prospects.test>`;
      const raw = replyMail({ from: x.leadEmail, to: USER, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: `Thanks, let's talk on Tuesday.\n\nOn Monday, ${USER} wrote:\n> Hi Pat`, messageId });
      const seen = arrival(messageId);
      const t0 = Date.now();
      await inject(raw, x.leadEmail);
      const { report, at } = await seen;
      h.recordValue(Math.max(1, at - t0));
      expect(report.messages.find((m) => m.messageId === messageId)).toMatchObject({ action: 'reply', enrollmentId: x.enrollmentId, inserted: true });
      const st = await state(x.enrollmentId);
      expect(st.state).toBe('replied');
      expect(st.due_at).toBeNull();
    }
    const queued = await store.db.selectFrom('send_request').select('id').where('workspace_id', '=', s.workspaceId).where('state', '=', 'queued').execute();
    expect(queued).toEqual([]);
    const fig = { n: h.totalCount, p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99), max: h.maxValue };
    const server = metrics.summary();
    console.log(`reply-to-stop (SMTP injection -> stop committed), n=${fig.n}: p50 ${fig.p50} ms, p99 ${fig.p99} ms, max ${fig.max} ms`);
    console.log(`reply-to-stop (/metrics: INTERNALDATE, 1 s resolution -> commit), n=${server.count}: p50 ${server.p50} ms, p99 ${server.p99} ms, max ${server.max} ms`);
    expect(fig.p99).toBeLessThan(2_000);
    expect(server.count).toBe(REPLIES);
    const text = await metrics.text();
    expect(text).toMatch(/cadenza_reply_to_stop_ms\{quantile="0.99"\} \d+/);
    expect(text).toContain(`cadenza_ingested_messages_total{label="human_reply"} ${REPLIES}`);
  }, 180_000);

  it('a bounce from the corpora stops as bounced and suppresses; out-of-office pauses to the send window on the return day; an unsubscribe request unsubscribes', async (ctx) => {
    if (!existsSync(path.join(corpora, 'sisimai-labels.jsonl'))) return ctx.skip(`corpora not found at ../shared/corpora`);
    // A real DSN whose failed recipient the ladder reads, rewritten to one of our sends.
    const b = send(REPLIES);
    let dsn: string | null = null;
    for (const line of readFileSync(path.join(corpora, 'sisimai-labels.jsonl'), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const label = JSON.parse(line) as { file: string; kind: string; hard_soft: string | null };
      if (label.kind !== 'bounce' || label.hard_soft !== 'hard') continue;
      const raw = readFileSync(path.join(corpora, label.file), 'latin1');
      const c = await classify(await parseMail(raw));
      const r = c.bounce?.recipient;
      if (c.label !== 'bounce' || c.bounce?.hardSoft !== 'hard' || !r || !/^[^@\s]+@[^@\s]+$/.test(r)) continue;
      let rewritten = raw.replace(new RegExp(r.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), b.leadEmail);
      const orig = c.bounce.originalMessageId;
      if (orig) rewritten = rewritten.split(orig.slice(1, -1)).join(b.messageId.slice(1, -1));
      const again = await classify(await parseMail(rewritten));
      if (again.bounce?.recipient === b.leadEmail) {
        // Our own Message-ID on the report itself (its header block only; the quoted original keeps ours).
        const end = rewritten.search(/\r?\n\r?\n/);
        const head = rewritten.slice(0, end).replace(/^From .*\r?\n/, '').replace(/^Message-ID:.*(\r?\n[ \t].*)*\r?\n?/gim, '');
        dsn = `Message-ID: <dsn-${tag}@mailer.test>\r\n${head}${rewritten.slice(end)}`;
        break;
      }
    }
    expect(dsn, 'a hard bounce in the corpora whose recipient the ladder reads').not.toBeNull();
    const bounced = arrival(`<dsn-${tag}@mailer.test>`);
    await append(Buffer.from(dsn!, 'latin1'));
    expect((await bounced).report.messages.find((m) => m.messageId === `<dsn-${tag}@mailer.test>`)).toMatchObject({ action: 'hard_bounce', enrollmentId: b.enrollmentId });
    expect((await state(b.enrollmentId)).state).toBe('bounced');
    expect(await store.db.selectFrom('suppression').select('reason').where('workspace_id', '=', s.workspaceId).where('email_norm', '=', b.leadEmail).executeTakeFirst()).toEqual({ reason: 'hard_bounce' });

    // Out of office, back on a Monday one to two weeks from today (a fixed date would pass, and the pause
    // would then fall back to the default): the lead's zone is UTC, so the window opens at that day's start.
    const back = new Date(Date.now() + 7 * 86_400_000);
    back.setUTCHours(0, 0, 0, 0);
    back.setUTCDate(back.getUTCDate() + ((8 - back.getUTCDay()) % 7));
    const backWords = `${back.toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' })}, ${back.toLocaleDateString('en-US', { month: 'long', day: 'numeric', year: 'numeric', timeZone: 'UTC' })}`;
    const o = send(REPLIES + 1);
    const oooId = `<ooo-${tag}@prospects.test>`;
    const ooo = arrival(oooId);
    await inject(
      replyMail({ from: o.leadEmail, to: USER, inReplyTo: o.messageId, subject: `Automatic reply: ${o.subject}`, messageId: oooId, headers: { 'Auto-Submitted': 'auto-replied' }, date: new Date(), body: `Thank you for your message. I am out of the office with limited access to email, and will be back in the office on ${backWords}.` }),
      o.leadEmail,
    );
    expect((await ooo).report.messages.find((m) => m.messageId === oooId)).toMatchObject({ action: 'out_of_office', enrollmentId: o.enrollmentId });
    const so = await state(o.enrollmentId);
    expect(so.state).toBe('paused');
    expect(so.due_at?.toISOString()).toBe(back.toISOString());

    const u = send(REPLIES + 2);
    const unsubId = `<unsub-${tag}@prospects.test>`;
    const unsub = arrival(unsubId);
    await inject(replyMail({ from: u.leadEmail, to: USER, inReplyTo: u.messageId, subject: `Re: ${u.subject}`, messageId: unsubId, body: 'Please unsubscribe me from this list.' }), u.leadEmail);
    expect((await unsub).report.messages.find((m) => m.messageId === unsubId)).toMatchObject({ action: 'unsubscribe', enrollmentId: u.enrollmentId });
    expect((await state(u.enrollmentId)).state).toBe('unsubscribed');
    expect(await store.db.selectFrom('suppression').select('reason').where('workspace_id', '=', s.workspaceId).where('email_norm', '=', u.leadEmail).executeTakeFirst()).toEqual({ reason: 'unsubscribe' });
  }, 120_000);

  it('a stranger goes to the inbox, a malformed message to quarantine (the worker goes on), our own copy is not a reply', async () => {
    const strangerId = `<stranger-${tag}@else.test>`;
    const stranger = arrival(strangerId);
    await inject(replyMail({ from: 'someone@else.test', to: USER, subject: `Partnership idea ${tag}`, messageId: strangerId, body: 'Hello there' }), 'someone@else.test');
    expect((await stranger).report.messages.find((m) => m.messageId === strangerId)).toMatchObject({ action: 'inbox', enrollmentId: null, inserted: true });
    expect(await store.db.selectFrom('message').select(['direction', 'enrollment_id', 'folder']).where('message_id', '=', strangerId).executeTakeFirst()).toEqual({ direction: 'inbound', enrollment_id: null, folder: 'inbox' });

    // Not a mail at all (no header field): quarantined with its reason; the next message still flows.
    const before = Number((await store.db.selectFrom('quarantine').select((eb) => eb.fn.countAll<number>().as('n')).where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).n);
    await append(`this is not a header line ${tag}\r\n\r\njust bytes\r\n`);
    const own = send(REPLIES + 3);
    const afterId = `<after-${tag}@else.test>`;
    const after = arrival(afterId);
    // Our own send, as a copy in INBOX (a Bcc to self): recognised as ours.
    const ownSeen = arrival(own.messageId);
    await append(replyMail({ from: USER, to: own.leadEmail, subject: own.subject, messageId: own.messageId, body: 'Hi Pat' }));
    expect((await ownSeen).report.messages.find((m) => m.messageId === own.messageId)).toMatchObject({ action: 'own', inserted: false });
    await inject(replyMail({ from: 'another@else.test', to: USER, subject: `Later ${tag}`, messageId: afterId, body: 'Still there?' }), 'another@else.test');
    await after;
    const q = await store.db.selectFrom('quarantine').select(['reason', 'raw_size']).where('mailbox_id', '=', s.mailboxId).execute();
    expect(q.length).toBe(before + 1);
    expect(q[q.length - 1]!.reason).toMatch(/^no_header/);
    expect((await state(own.enrollmentId)).state).toBe('active');
    expect(pool.mailboxes).toEqual([s.mailboxId]);
  }, 120_000);

  it('stops gracefully: the lease is released', async () => {
    await pool.stop();
    expect(pool.mailboxes).toEqual([]);
    expect(await store.db.selectFrom('lease').selectAll().where('resource', '=', `sync:${s.mailboxId}`).execute()).toEqual([]);
  });
});
