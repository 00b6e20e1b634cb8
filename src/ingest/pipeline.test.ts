import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import type { SyncBatch } from '../mailbox/sync/source.ts';
import { Leases } from '../ops/leases.ts';
import { Metrics } from '../ops/metrics.ts';
import { trackingKey, trackingLinks } from '../sending/compose/tracking.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { parseMail } from './parse/parse-mail.ts';
import { ingestBatch, type IngestDeps, type IngestSteps } from './pipeline.ts';
import { replyMail, seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import type { Classification } from './types.ts';

/**
 * The pipeline's own behaviour: threading, the action each classification takes, dedup of replays,
 * quarantine, the cursor and fencing. The classification is given per message (the ladder has its
 * own corpus tests); the parser is the real one.
 */
const T0 = Date.UTC(2026, 5, 1, 9, 0); // Monday
const enc = (s: string) => new TextEncoder().encode(s);

for (const backend of testBackends()) {
  describe(`ingestion pipeline (${backend})`, () => {
    let store: TestStore;
    const clock = new SimClock(T0);
    const random = seededRandom(`ingest-${backend}`);
    let service: EnrollmentService;
    const verdicts = new Map<string, Classification>();
    const human: Classification = { label: 'human_reply', confidence: 0.9, reason: 'test: a person wrote it', rung: 'default' };
    const steps: IngestSteps = {
      parse: async (raw) => (raw.byteLength > 100_000 ? { ok: false, reason: `too large: ${raw.byteLength} bytes` } : { ok: true, mail: await parseMail(raw) }),
      newText: (m) => m.text.split(/\r?\n>/)[0]!.trim(),
      classify: (m) => verdicts.get(m.messageId ?? '') ?? human,
    };
    const master = randomBytes(32);
    let deps: IngestDeps;
    let s: Seeded;
    let seq = 0;
    const batch = (raws: Array<{ raw: string; key?: string; folder?: 'inbox' | 'junk' | 'sent'; threadId?: string }>, cursor: Record<string, unknown> = { n: ++seq }): SyncBatch => ({
      messages: raws.map((r, i) => ({ key: r.key ?? `INBOX:1:${seq}${i}`, folder: r.folder ?? 'inbox', raw: enc(r.raw), threadId: r.threadId ?? null, receivedAt: clock.now() - 500 })),
      problems: [],
      cursor,
      mode: 'incremental',
    });
    const state = async (id: string) => store.db.selectFrom('enrollment').select(['state', 'state_reason', 'due_at', 'soft_bounces']).where('id', '=', id).executeTakeFirstOrThrow();
    const suppressed = async (email: string) => (await store.db.selectFrom('suppression').select('reason').where('workspace_id', '=', s.workspaceId).where('email_norm', '=', email).executeTakeFirst())?.reason ?? null;
    const mb = () => ({ id: s.mailboxId, workspaceId: s.workspaceId });

    beforeAll(async () => {
      store = await freshStore(backend);
      service = new EnrollmentService({ store, clock, random });
      deps = { store, service, clock, random, steps, trackingKey: trackingKey(master), metrics: new Metrics() };
      const leads = Array.from({ length: 12 }, (_, i) => `lead${i}@acme${i < 10 ? '' : i}.test`);
      s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads, tag: 't' });
      clock.advance(60_000);
    }, 60_000);
    afterAll(async () => {
      await store?.destroy();
    });
    const send = (email: string) => s.sends.find((x) => x.leadEmail === email)!;

    it('a reply threaded by In-Reply-To stops its enrollment and cancels the follow-up; a replay acts once; the cursor is stored', async () => {
      const a = send('lead0@acme.test');
      const b = batch([{ raw: replyMail({ from: a.leadEmail, to: 'rep@cadenza.test', inReplyTo: a.messageId, subject: `Re: ${a.subject}`, body: 'Sounds good, call me.\n> Hi Pat', messageId: '<r0@acme.test>' }) }], { uid: 10 });
      const r = await ingestBatch(deps, mb(), b);
      expect(r.messages).toMatchObject([{ action: 'reply', enrollmentId: a.enrollmentId, inserted: true }]);
      const st = await state(a.enrollmentId);
      expect(st.state).toBe('replied');
      expect(st.due_at).toBeNull();
      expect(await store.db.selectFrom('send_request').select('id').where('enrollment_id', '=', a.enrollmentId).where('state', '=', 'queued').execute()).toEqual([]);
      const row = await store.db.selectFrom('message').selectAll().where('message_id', '=', '<r0@acme.test>').executeTakeFirstOrThrow();
      expect(row).toMatchObject({ direction: 'inbound', enrollment_id: a.enrollmentId, thread_via: 'in_reply_to', label: 'human_reply', action: 'reply', new_text: 'Sounds good, call me.', body_html: null });
      expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual({ uid: 10 });

      // The same batch again (a crash before the cursor reached the connector), and the same message
      // under another key (a resync): nothing acts twice.
      const again = await ingestBatch(deps, mb(), b);
      expect(again.messages[0]!.inserted).toBe(false);
      const resync = await ingestBatch(deps, mb(), { ...b, messages: [{ ...b.messages[0]!, key: 'INBOX:2:1' }], mode: 'resync' }, { countResync: true });
      expect(resync.messages[0]!.inserted).toBe(false);
      const events = await store.db.selectFrom('event').select('type').where('enrollment_id', '=', a.enrollmentId).where('type', 'like', 'reply%').execute();
      expect(events).toEqual([{ type: 'reply' }]);
      expect((await store.db.selectFrom('mailbox_sync').select('resyncs').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).resyncs).toBe(1);
      expect(deps.metrics!.summary().count).toBe(1);
    });

    // Found by the Patroni drill (test/ops/patroni-drill.ts): after a network cut of the primary,
    // the record of a send accepted just before waited for the new primary while the sync already
    // read the prospect's reply; threaded only by the message table, the reply matched nothing and
    // the follow-up went out.
    it('a reply to a send whose record has not committed (request in flight, no outbound row yet) still stops its enrollment', async () => {
      const f = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep9@cadenza.test', leads: ['early@flight.test'], tag: 'f' });
      const x = f.sends[0]!;
      await store.db.deleteFrom('message').where('message_id', '=', x.messageId).execute();
      await store.db.updateTable('send_request').set({ state: 'in_flight' }).where('id', '=', x.sendRequestId).execute();
      const raw = replyMail({ from: x.leadEmail, to: 'rep9@cadenza.test', inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Yes, call me.', messageId: '<early-reply@flight.test>' });
      const r = await ingestBatch(deps, { id: f.mailboxId, workspaceId: f.workspaceId }, batch([{ raw }]));
      expect(r.messages).toMatchObject([{ action: 'reply', enrollmentId: x.enrollmentId, inserted: true }]);
      expect((await state(x.enrollmentId)).state).toBe('replied');
      const row = await store.db.selectFrom('message').select(['enrollment_id', 'thread_via']).where('message_id', '=', '<early-reply@flight.test>').executeTakeFirstOrThrow();
      expect(row).toEqual({ enrollment_id: x.enrollmentId, thread_via: 'in_reply_to' });
    });

    it('our own sent copy is never a reply; a message matching nothing goes to the inbox; a stranger never stops anyone', async () => {
      const a = send('lead1@acme.test');
      const own = replyMail({ from: 'rep@cadenza.test', to: a.leadEmail, subject: a.subject, body: 'Hi Pat', messageId: a.messageId });
      const stranger = replyMail({ from: 'someone@else.test', to: 'rep@cadenza.test', subject: `Re: ${a.subject}`, body: 'Who are you?', messageId: '<x1@else.test>', headers: { 'Reply-To': 'Desk <desk@else.test>', Cc: 'boss@else.test, Rep <rep@cadenza.test>' } });
      const r = await ingestBatch(deps, mb(), batch([{ raw: own }, { raw: own, folder: 'sent' }, { raw: stranger }]));
      expect(r.messages.map((m) => m.action)).toEqual(['own', 'own', 'inbox']);
      expect((await state(a.enrollmentId)).state).toBe('active');
      const row = await store.db.selectFrom('message').select(['enrollment_id', 'thread_via', 'direction', 'reply_to', 'cc_addrs']).where('message_id', '=', '<x1@else.test>').executeTakeFirstOrThrow();
      // Reply-To and Cc are kept: the inbox's reply goes to the one and may copy the other.
      expect(row).toEqual({ enrollment_id: null, thread_via: 'none', direction: 'inbound', reply_to: ['desk@else.test'], cc_addrs: ['boss@else.test', 'rep@cadenza.test'] });
      expect(await store.db.selectFrom('message').select('direction').where('message_id', '=', a.messageId).execute()).toEqual([{ direction: 'outbound' }]);
    });

    it("keeps an HTML reply's markup for the inbox's frame", async () => {
      const raw = ['From: Kim <kim@elsewhere.test>', 'To: rep@cadenza.test', 'Subject: Brochure', 'Message-ID: <html-1@elsewhere.test>', 'MIME-Version: 1.0', 'Content-Type: text/html; charset=utf-8', '', '<p>See <b>this</b></p><blockquote>old</blockquote>', ''].join('\r\n');
      await ingestBatch(deps, mb(), batch([{ raw }]));
      const row = await store.db.selectFrom('message').select(['body_html']).where('message_id', '=', '<html-1@elsewhere.test>').executeTakeFirstOrThrow();
      expect(row.body_html).toContain('<p>See <b>this</b></p><blockquote>old</blockquote>');
    });

    it('threads by sender and normalised subject when In-Reply-To is missing', async () => {
      const a = send('lead2@acme.test');
      const raw = replyMail({ from: 'Lead2@Acme.test', to: 'rep@cadenza.test', subject: `AW: RE : ${a.subject}`, body: 'Ja, gerne.', messageId: '<r2@acme.test>' });
      const r = await ingestBatch(deps, mb(), batch([{ raw }]));
      expect(r.messages[0]).toMatchObject({ action: 'reply', enrollmentId: a.enrollmentId });
      expect((await store.db.selectFrom('message').select('thread_via').where('message_id', '=', '<r2@acme.test>').executeTakeFirstOrThrow()).thread_via).toBe('subject');
    });

    it('a hard bounce stops as bounced and suppresses the address; a soft bounce is counted', async () => {
      const a = send('lead3@acme.test');
      const b = send('lead4@acme.test');
      const dsn = (id: string) => replyMail({ from: 'MAILER-DAEMON@mx.acme.test', to: 'rep@cadenza.test', subject: 'Undelivered Mail Returned to Sender', body: 'failed', messageId: id });
      verdicts.set('<dsn1@mx>', { label: 'bounce', confidence: 0.99, reason: 'DSN 5.1.1', rung: 'bounce', bounce: { recipient: a.leadEmail, recipients: [a.leadEmail], status: '5.1.1', replyCode: 550, hardSoft: 'hard', bounceClass: 'user_unknown', diagnostic: 'no such user', originalMessageId: a.messageId } });
      // No original Message-ID in this one: threaded by its failed recipient.
      verdicts.set('<dsn2@mx>', { label: 'bounce', confidence: 0.99, reason: 'DSN 4.2.2', rung: 'bounce', bounce: { recipient: b.leadEmail, recipients: [b.leadEmail], status: '4.2.2', replyCode: 452, hardSoft: 'soft', bounceClass: 'mailbox_full', diagnostic: 'full', originalMessageId: null } });
      const r = await ingestBatch(deps, mb(), batch([{ raw: dsn('<dsn1@mx>') }, { raw: dsn('<dsn2@mx>') }]));
      expect(r.messages.map((m) => [m.action, m.enrollmentId])).toEqual([['hard_bounce', a.enrollmentId], ['soft_bounce', b.enrollmentId]]);
      expect((await state(a.enrollmentId)).state).toBe('bounced');
      expect(await suppressed(a.leadEmail)).toBe('hard_bounce');
      const sb = await state(b.enrollmentId);
      expect([sb.state, sb.soft_bounces]).toEqual(['active', 1]);
      expect(await suppressed(b.leadEmail)).toBeNull();
      expect((await store.db.selectFrom('send_request').select('bounce_kind').where('id', '=', a.sendRequestId).executeTakeFirstOrThrow()).bounce_kind).toBe('hard');

      // Two more soft bounces: past the limit (3) it counts as hard, and the address is suppressed.
      for (const n of [3, 4]) {
        verdicts.set(`<dsn${n}@mx>`, verdicts.get('<dsn2@mx>')!);
        await ingestBatch(deps, mb(), batch([{ raw: dsn(`<dsn${n}@mx>`) }]));
      }
      const after = await state(b.enrollmentId);
      expect([after.state, after.soft_bounces]).toEqual(['bounced', 3]);
      expect(await suppressed(b.leadEmail)).toBe('hard_bounce');
    });

    // Before suppress() owned promise 6, the pipeline wrote every failed recipient's suppression but
    // stopped only the bounced enrollment's lead: another lead named in the same bounce stayed
    // live on a suppressed address (the outbox claim refused its sends; its tasks stayed open).
    it('a hard bounce naming another lead suppresses it and stops its enrollments too, each journalled once', async () => {
      const m = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep3@cadenza.test', leads: ['ann@multi.test', 'bob@multi.test', 'cy@multi.test'], tag: 'm' });
      const ann = m.sends.find((x) => x.leadEmail === 'ann@multi.test')!;
      const bob = m.sends.find((x) => x.leadEmail === 'bob@multi.test')!;
      verdicts.set('<dsn-multi@mx>', { label: 'bounce', confidence: 0.99, reason: 'DSN 5.1.1', rung: 'bounce', bounce: { recipient: ann.leadEmail, recipients: [ann.leadEmail, 'Bob@Multi.test'], status: '5.1.1', replyCode: 550, hardSoft: 'hard', bounceClass: 'user_unknown', diagnostic: 'no such user', originalMessageId: ann.messageId } });
      const raw = replyMail({ from: 'MAILER-DAEMON@mx.multi.test', to: 'rep3@cadenza.test', subject: 'Undelivered Mail Returned to Sender', body: 'failed', messageId: '<dsn-multi@mx>' });
      const r = await ingestBatch(deps, { id: m.mailboxId, workspaceId: m.workspaceId }, batch([{ raw }]));
      expect(r.messages.map((x) => [x.action, x.enrollmentId])).toEqual([['hard_bounce', ann.enrollmentId]]);
      expect(r.applied[0]).toMatchObject({ enrollmentId: ann.enrollmentId, result: { next: { state: 'bounced' } } });
      expect((await state(ann.enrollmentId)).state).toBe('bounced');
      const b = await state(bob.enrollmentId);
      expect([b.state, b.state_reason]).toEqual(['stopped', 'address suppressed']);
      const reasons = await store.db.selectFrom('suppression').select(['email_norm', 'reason', 'source']).where('workspace_id', '=', m.workspaceId).orderBy('email_norm').execute();
      expect(reasons).toEqual([
        { email_norm: 'ann@multi.test', reason: 'hard_bounce', source: 'message <dsn-multi@mx>' },
        { email_norm: 'bob@multi.test', reason: 'hard_bounce', source: 'message <dsn-multi@mx>' },
      ]);
      const journal = async (id: string) => (await store.db.selectFrom('event').select('type').where('enrollment_id', '=', id).where('type', 'in', ['bounce', 'bounce.ignored', 'stop', 'stop.ignored']).orderBy('id').execute()).map((e) => e.type);
      expect(await journal(ann.enrollmentId)).toEqual(['bounce']);
      expect(await journal(bob.enrollmentId)).toEqual(['stop']);
      expect((await state(m.sends.find((x) => x.leadEmail === 'cy@multi.test')!.enrollmentId)).state).toBe('active');
    });

    it('an out-of-office pauses until the send window opens on the return day, or the default pause', async () => {
      const a = send('lead5@acme.test');
      const b = send('lead6@acme.test');
      // Back on Saturday 2026-06-06: the window (any hour) is open that day, so it resumes at its start.
      verdicts.set('<ooo1@acme.test>', { label: 'auto_reply', confidence: 0.95, reason: 'out of office', rung: 'out_of_office', returnDate: Date.UTC(2026, 5, 6) });
      verdicts.set('<ooo2@acme.test>', { label: 'auto_reply', confidence: 0.95, reason: 'out of office', rung: 'out_of_office', returnDate: null });
      const mk = (x: typeof a, id: string) => replyMail({ from: x.leadEmail, to: 'rep@cadenza.test', inReplyTo: x.messageId, subject: `Out of office: ${x.subject}`, body: 'Away', messageId: id });
      await ingestBatch(deps, mb(), batch([{ raw: mk(a, '<ooo1@acme.test>') }, { raw: mk(b, '<ooo2@acme.test>') }]));
      const sa = await state(a.enrollmentId);
      expect(sa.state).toBe('paused');
      expect(sa.due_at?.toISOString()).toBe('2026-06-06T00:00:00.000Z');
      const sb = await state(b.enrollmentId);
      expect(sb.state).toBe('paused');
      expect(sb.due_at!.getTime()).toBe(clock.now() + 7 * 86_400_000);
    });

    it('an unsubscribe (reply intent, our mailto: token, an ARF complaint) unsubscribes and suppresses everywhere', async () => {
      const a = send('lead7@acme.test');
      const b = send('lead8@acme.test');
      const c = send('lead9@acme.test');
      verdicts.set('<u1@acme.test>', { ...human, intent: { intent: 'unsubscribe', confidence: 0.9, reason: 'please remove me' } });
      verdicts.set('<u3@fbl>', { label: 'feedback', confidence: 0.99, reason: 'ARF abuse', rung: 'headers', feedback: { type: 'abuse', recipient: c.leadEmail, originalMessageId: c.messageId } });
      const token = trackingLinks({ key: deps.trackingKey!, baseUrl: 'https://t.example', workspaceId: s.workspaceId, sendRequestId: b.sendRequestId }).unsubscribeToken;
      const r = await ingestBatch(deps, mb(), batch([
        { raw: replyMail({ from: a.leadEmail, to: 'rep@cadenza.test', inReplyTo: a.messageId, subject: `Re: ${a.subject}`, body: 'Please remove me from your list.', messageId: '<u1@acme.test>' }) },
        // A receiver's List-Unsubscribe mailto: no In-Reply-To, from a different address, our token in the subject.
        { raw: replyMail({ from: 'unsub-robot@mail.example', to: 'rep@cadenza.test', subject: `unsubscribe ${token}`, body: '', messageId: '<u2@mail.example>' }) },
        { raw: replyMail({ from: 'fbl@isp.example', to: 'rep@cadenza.test', subject: 'complaint', body: 'report', messageId: '<u3@fbl>' }) },
      ]));
      expect(r.messages.map((m) => [m.action, m.enrollmentId])).toEqual([['unsubscribe', a.enrollmentId], ['unsubscribe', b.enrollmentId], ['complaint', c.enrollmentId]]);
      for (const x of [a, b, c]) expect((await state(x.enrollmentId)).state).toBe('unsubscribed');
      expect([await suppressed(a.leadEmail), await suppressed(b.leadEmail), await suppressed(c.leadEmail)]).toEqual(['unsubscribe', 'unsubscribe', 'complaint']);
    });

    it('a low-confidence verdict pauses for review and waits in the review queue', async () => {
      const a = send('lead10@acme10.test');
      verdicts.set('<low@acme10.test>', { label: 'auto_reply', confidence: 0.3, reason: 'unsure', rung: 'model' });
      const r = await ingestBatch(deps, mb(), batch([{ raw: replyMail({ from: a.leadEmail, to: 'rep@cadenza.test', inReplyTo: a.messageId, subject: `Re: ${a.subject}`, body: 'hmm', messageId: '<low@acme10.test>' }) }]));
      expect(r.messages[0]).toMatchObject({ action: 'needs_review', needsReview: true });
      const st = await state(a.enrollmentId);
      expect([st.state, st.state_reason]).toEqual(['paused', 'needs review']);
      const { reviewQueue } = await import('./store.ts');
      expect((await reviewQueue(store.db, s.workspaceId)).map((m) => m.message_id)).toContain('<low@acme10.test>');
    });

    it('stop the whole company: a reply stops the other live enrollments of its domain, never of a free-mail domain', async () => {
      const c = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep2@cadenza.test', leads: ['ann@corp.test', 'bob@corp.test', 'cy@corp.test', 'dee@other.test', 'friend@gmail.com', 'pal@gmail.com'], tag: 'c', stopCompanyOnReply: true });
      const cd = { ...deps };
      const live = async () => (await store.db.selectFrom('enrollment as e').innerJoin('lead as l', 'l.id', 'e.lead_id').select('l.email_norm').where('e.workspace_id', '=', c.workspaceId).where('e.state', 'in', ['active', 'paused']).execute()).map((x) => x.email_norm).sort();
      const reply = (email: string, id: string) => {
        const x = c.sends.find((y) => y.leadEmail === email)!;
        return batch([{ raw: replyMail({ from: email, to: 'rep2@cadenza.test', inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Sure', messageId: id }) }]);
      };
      await ingestBatch(cd, { id: c.mailboxId, workspaceId: c.workspaceId }, reply('friend@gmail.com', '<g1@gmail.com>'));
      expect(await live()).toEqual(['ann@corp.test', 'bob@corp.test', 'cy@corp.test', 'dee@other.test', 'pal@gmail.com']);
      await ingestBatch(cd, { id: c.mailboxId, workspaceId: c.workspaceId }, reply('ann@corp.test', '<a1@corp.test>'));
      expect(await live()).toEqual(['dee@other.test', 'pal@gmail.com']);
      const bob = await state(c.sends.find((y) => y.leadEmail === 'bob@corp.test')!.enrollmentId);
      expect([bob.state, bob.state_reason]).toEqual(['stopped', 'corp.test replied (ann@corp.test)']);
    });

    it('quarantines what cannot be parsed or fetched, keeps the rest of the batch, and never crashes', async () => {
      const b = batch([{ raw: 'x'.repeat(200_000), key: 'INBOX:1:big' }, { raw: replyMail({ from: 'z@else.test', to: 'rep@cadenza.test', subject: 'hello', body: 'hi', messageId: '<ok@else.test>' }) }]);
      b.problems.push({ key: 'INBOX:1:gone', folder: 'inbox', reason: 'FETCH returned no body' });
      const r = await ingestBatch(deps, mb(), b);
      expect(r.quarantined).toBe(2);
      expect(r.messages.map((m) => m.action)).toEqual(['inbox']);
      const q = await store.db.selectFrom('quarantine').select(['provider_key', 'reason', 'raw_size']).where('mailbox_id', '=', s.mailboxId).orderBy('provider_key').execute();
      expect(q).toEqual([
        { provider_key: 'INBOX:1:big', reason: 'too large: 200000 bytes', raw_size: 200_000 },
        { provider_key: 'INBOX:1:gone', reason: 'FETCH returned no body', raw_size: null },
      ]);
      const raw = await store.db.selectFrom('quarantine').select('raw').where('provider_key', '=', 'INBOX:1:big').executeTakeFirstOrThrow();
      expect(raw.raw!.byteLength).toBe(200_000);
    });

    it('a message whose processing fails is rolled back alone and quarantined; the rest of the batch commits', async () => {
      // A verdict the store cannot serialise (a BigInt in the bounce details) stands for any bug on odd input.
      verdicts.set('<poison@else.test>', { label: 'delivery_report', confidence: 1, reason: 'x', rung: 'bounce', bounce: { replyCode: 250n } as unknown as Classification['bounce'] });
      const r = await ingestBatch(deps, mb(), batch([
        { raw: replyMail({ from: 'd@else.test', to: 'rep@cadenza.test', subject: 'report', body: 'x', messageId: '<poison@else.test>' }), key: 'INBOX:1:poison' },
        { raw: replyMail({ from: 'e@else.test', to: 'rep@cadenza.test', subject: 'fine', body: 'y', messageId: '<fine@else.test>' }) },
      ]));
      expect(r.messages.map((m) => m.messageId)).toEqual(['<fine@else.test>']);
      expect(r.quarantined).toBe(1);
      expect((await store.db.selectFrom('quarantine').select('reason').where('provider_key', '=', 'INBOX:1:poison').executeTakeFirstOrThrow()).reason).toMatch(/^processing failed: .*BigInt/);
      expect(await store.db.selectFrom('message').select('id').where('message_id', '=', '<poison@else.test>').execute()).toEqual([]);
      expect(await store.db.selectFrom('message').select('id').where('message_id', '=', '<fine@else.test>').execute()).toHaveLength(1);
    });

    it('a database failure while a message is retried alone fails the batch, never quarantines the reply: the next pull stops the enrollment', async () => {
      // A failover or a deadlock answers the message's statements, not the message: quarantined, the
      // reply would be "read" (the sender's last look skips it) and never stop its enrollment, and
      // the cursor would move past it.
      const a = send('lead11@acme11.test');
      let failures = 2; // the whole batch's try, then the message's own
      const flaky = Object.create(service) as EnrollmentService;
      flaky.applyEachInTx = (...args) => (failures-- > 0 ? Promise.reject(Object.assign(new Error('deadlock detected'), { code: '40P01' })) : service.applyEachInTx(...args));
      const cursorBefore = (await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor;
      const b = batch([{ raw: replyMail({ from: a.leadEmail, to: 'rep@cadenza.test', inReplyTo: a.messageId, subject: `Re: ${a.subject}`, body: 'Yes, call me.', messageId: '<deadlocked@acme11.test>' }), key: 'INBOX:1:deadlocked' }], { uid: 5000 });
      await expect(ingestBatch({ ...deps, service: flaky }, mb(), b)).rejects.toMatchObject({ code: '40P01' });
      expect(await store.db.selectFrom('quarantine').select('id').where('provider_key', '=', 'INBOX:1:deadlocked').execute()).toEqual([]);
      expect(await store.db.selectFrom('message').select('id').where('message_id', '=', '<deadlocked@acme11.test>').execute()).toEqual([]);
      expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual(cursorBefore);
      expect((await state(a.enrollmentId)).state).toBe('active');
      // Pulled again from the stored cursor, the same batch commits and the reply stops its enrollment.
      const r = await ingestBatch({ ...deps, service: flaky }, mb(), b);
      expect(r.messages).toMatchObject([{ action: 'reply', enrollmentId: a.enrollmentId, inserted: true }]);
      expect((await state(a.enrollmentId)).state).toBe('replied');
    });

    it('a batch under a lease that moved on is refused whole: no message, no event, no cursor', async () => {
      const leases = new Leases(store, clock);
      const mine = (await leases.acquire(`sync:${s.mailboxId}`, 'a', 1_000))!;
      clock.advance(2_000);
      const theirs = (await leases.acquire(`sync:${s.mailboxId}`, 'b', 60_000))!;
      expect(theirs.token).toBeGreaterThan(mine.token);
      const before = (await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor;
      const b = batch([{ raw: replyMail({ from: 'q@else.test', to: 'rep@cadenza.test', subject: 'x', body: 'x', messageId: '<fenced@else.test>' }) }], { uid: 999 });
      await expect(ingestBatch(deps, mb(), b, { fence: { resource: mine.resource, token: mine.token } })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await store.db.selectFrom('message').select('id').where('message_id', '=', '<fenced@else.test>').execute()).toEqual([]);
      expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual(before);
      await ingestBatch(deps, mb(), b, { fence: { resource: theirs.resource, token: theirs.token } });
      expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual({ uid: 999 });
    });
  });
}
