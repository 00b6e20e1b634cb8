import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import type { SyncBatch } from '../mailbox/sync/source.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { setWarmup } from '../warmup/membership.ts';
import { warmupRecogniser } from '../warmup/receive/recogniser.ts';
import { warmupPoolKey, writeWarmup } from '../warmup/text/marker.ts';
import { apiHarness, login, type ApiHarness, type Browser } from '../../test/api.ts';
import { testBackends, type TestStore } from '../../test/stores.ts';
import { addMembership } from '../api/auth/accounts.ts';
import { hashPassword } from '../api/auth/passwords.ts';
import { replyMail, seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { parseMail } from './parse/parse-mail.ts';
import { ingestBatch, type IngestDeps, type IngestSteps, type WarmupFolders } from './pipeline.ts';
import type { Classification } from './types.ts';

/**
 * The pipeline hands warmup mail to the receiving side (warmup/receive/recogniser.ts, as the
 * composition root wires it): in one batch a warmup mail in Junk, a prospect's reply and a bounce.
 * The reply stops its enrollment and the bounce bounces; the warmup mail is recorded (junk), rescued,
 * flagged and read, and leaves no message row (the inbox view, analytics, webhooks and CRM read
 * those and their events), no event and no signal. A forged warmup mail (right sender, wrong text)
 * is an ordinary message.
 */
const T0 = Date.UTC(2026, 5, 1, 9, 0); // Monday
const enc = (s: string) => new TextEncoder().encode(s);
const REP = 'rep@cadenza.test';
const PEER = 'anna@peer.test';

for (const backend of testBackends()) {
  describe(`ingestion pipeline with the warmup network (${backend})`, () => {
    let h: ApiHarness;
    let store: TestStore;
    let owner: Browser;
    const clock = new SimClock(T0);
    const random = seededRandom(`ingest-warmup-${backend}`);
    const master = Buffer.alloc(32, 9);
    const key = warmupPoolKey(master, 'default');
    const verdicts = new Map<string, Classification>();
    const human: Classification = { label: 'human_reply', confidence: 0.9, reason: 'test: a person wrote it', rung: 'default' };
    const steps: IngestSteps = {
      parse: async (raw) => ({ ok: true, mail: await parseMail(raw) }),
      newText: (m) => m.text.split(/\r?\n>/)[0]!.trim(),
      classify: (m) => verdicts.get(m.messageId ?? '') ?? human,
    };
    const actions: string[] = [];
    const folders: WarmupFolders = {
      moveToInbox: async (k) => (actions.push(`move ${k}`), { status: 'done', key: `INBOX:${k}` }),
      flag: async (k) => (actions.push(`flag ${k}`), { status: 'done', key: null }),
      markRead: async (k) => (actions.push(`read ${k}`), { status: 'done', key: null }),
    };
    let deps: IngestDeps;
    let s: Seeded;
    const mb = () => ({ id: s.mailboxId, workspaceId: s.workspaceId });
    const batch = (msgs: Array<{ raw: string; key: string; folder: 'inbox' | 'junk' }>, n: number): SyncBatch => ({
      messages: msgs.map((m) => ({ key: m.key, folder: m.folder, raw: enc(m.raw), threadId: null, receivedAt: clock.now() - 500 })),
      problems: [],
      cursor: { n },
      mode: 'incremental',
    });
    const warmupRaw = (messageId: string, body?: string) => {
      const t = writeWarmup(key, 'en', { from: PEER, to: REP, messageId, fromName: 'Anna', toName: 'Pat' });
      return [`From: Anna Berg <${PEER}>`, `To: Pat Rep <${REP}>`, `Subject: ${t.subject}`, `Message-ID: ${messageId}`, 'Date: Mon, 01 Jun 2026 08:59:00 +0000', 'Content-Type: text/plain; charset=utf-8', '', body ?? t.body].join('\r\n');
    };

    beforeAll(async () => {
      h = await apiHarness(backend);
      store = h.store;
      const service = new EnrollmentService({ store, clock, random });
      s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: REP, leads: ['lead0@acme.test', 'lead1@acme.test'], tag: 'w' });
      // The peer: a member of the same pool in another workspace.
      const ws = newId(clock.now(), random);
      await store.db.insertInto('workspace').values({ id: ws, name: 'peer' }).execute();
      const peerId = newId(clock.now(), random);
      await store.db.insertInto('mailbox').values({ id: peerId, workspace_id: ws, email: PEER, provider: 'smtp_imap', settings: JSON.stringify({}), time_zone: 'UTC' }).execute();
      await setWarmup(store.db, ws, peerId, { enabled: true }, clock.now());
      await setWarmup(store.db, s.workspaceId, s.mailboxId, { enabled: true }, clock.now());
      // The workspace's owner, who sees every mailbox's mail in the inbox view.
      const accountId = newId(clock.now(), random);
      await store.db.insertInto('account').values({ id: accountId, email: 'owner@cadenza.test', name: 'owner', password_hash: await hashPassword('owner password 123') }).execute();
      await addMembership(store.db, { clock, random }, { accountId, workspaceId: s.workspaceId, email: 'owner@cadenza.test', name: 'owner', role: 'owner' });
      owner = await login(h.app, 'owner@cadenza.test', 'owner password 123');
      deps = { store, service, clock, random, steps, warmup: warmupRecogniser({ db: store.db, master, clock, random, reply: { share: 1 } }) };
      clock.advance(60_000);
    }, 60_000);
    afterAll(async () => {
      await h?.close();
    });

    it('a batch of warmup mail, a reply and a bounce: only the reply and the bounce reach the inbox and their enrollments', async () => {
      const [a, b] = s.sends;
      verdicts.set('<dsn@mx>', { label: 'bounce', confidence: 0.99, reason: 'DSN 5.1.1', rung: 'bounce', bounce: { recipient: b!.leadEmail, recipients: [b!.leadEmail], status: '5.1.1', replyCode: 550, hardSoft: 'hard', bounceClass: 'user_unknown', diagnostic: 'no such user', originalMessageId: b!.messageId } });
      const eventsBefore = Number((await store.db.selectFrom('event').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const r = await ingestBatch(
        deps,
        mb(),
        batch(
          [
            { raw: warmupRaw('<w1@peer.test>'), key: 'Junk:1:7', folder: 'junk' },
            { raw: replyMail({ from: a!.leadEmail, to: REP, inReplyTo: a!.messageId, subject: `Re: ${a!.subject}`, body: 'Yes, call me.', messageId: '<r1@acme.test>' }), key: 'INBOX:1:8', folder: 'inbox' },
            { raw: replyMail({ from: 'MAILER-DAEMON@mx.acme.test', to: REP, subject: 'Undelivered Mail Returned to Sender', body: 'failed', messageId: '<dsn@mx>' }), key: 'INBOX:1:9', folder: 'inbox' },
          ],
          1,
        ),
        { folders },
      );
      expect(r.warmup).toEqual(['Junk:1:7']);
      expect(r.messages.map((m) => [m.messageId, m.action])).toEqual([
        ['<r1@acme.test>', 'reply'],
        ['<dsn@mx>', 'hard_bounce'],
      ]);
      const state = async (id: string) => (await store.db.selectFrom('enrollment').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;
      expect(await state(a!.enrollmentId)).toBe('replied');
      expect(await state(b!.enrollmentId)).toBe('bounced');
      // No row for the warmup mail: nothing for the inbox view, analytics, webhooks or CRM to read.
      expect(await store.db.selectFrom('message').select('id').where('message_id', '=', '<w1@peer.test>').execute()).toEqual([]);
      const inbox = (await owner.call('GET', `/api/workspaces/${s.workspaceId}/inbox`)).json<{ items: Array<{ from: string | null; subject: string | null }> }>().items;
      expect(inbox.map((i) => i.from)).toContain(a!.leadEmail);
      expect(inbox.map((i) => i.from)).not.toContain(PEER);
      // The events (what webhooks, analytics and CRM activity are made of): the reply's and the bounce's, nothing more.
      const events = await store.db.selectFrom('event').select(['type', 'enrollment_id']).orderBy('id').execute();
      expect(events.length).toBeGreaterThan(eventsBefore);
      expect(new Set(events.slice(eventsBefore).map((e) => e.enrollment_id))).toEqual(new Set([a!.enrollmentId, b!.enrollmentId]));
      // Its placement is recorded; it was rescued, flagged and read; a reply is planned.
      const mail = await store.db.selectFrom('warmup_mail').selectAll().where('message_id', '=', '<w1@peer.test>').executeTakeFirstOrThrow();
      expect(mail).toMatchObject({ kind: 'first', sender_address: PEER, receiver_mailbox_id: s.mailboxId, received_folder: 'junk' });
      expect(actions).toEqual(['move Junk:1:7', 'flag INBOX:Junk:1:7', 'read INBOX:Junk:1:7']);
      const reply = await store.db.selectFrom('warmup_mail').selectAll().where('in_reply_to', '=', '<w1@peer.test>').execute();
      expect(reply).toMatchObject([{ kind: 'reply', sender_mailbox_id: s.mailboxId, receiver_address: PEER }]);
      expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual({ n: 1 });

      // A replay (the commit's crash) takes it again, records nothing new, plans no second reply.
      const again = await ingestBatch(deps, mb(), batch([{ raw: warmupRaw('<w1@peer.test>'), key: 'INBOX:2:1', folder: 'inbox' }], 2), { folders });
      expect(again.warmup).toEqual(['INBOX:2:1']);
      expect((await store.db.selectFrom('warmup_mail').select('received_folder').where('message_id', '=', '<w1@peer.test>').executeTakeFirstOrThrow()).received_folder).toBe('junk');
      expect(await store.db.selectFrom('warmup_mail').select('id').where('in_reply_to', '=', '<w1@peer.test>').execute()).toHaveLength(1);
    });

    it('mail from a member whose text does not verify, and any mail to a mailbox outside the pool, is ordinary mail', async () => {
      const forged = await ingestBatch(
        deps,
        mb(),
        batch(
          [
            { raw: warmupRaw('<w2@peer.test>', 'Hi Pat, how was the week? Anna'), key: 'INBOX:3:1', folder: 'inbox' },
            { raw: warmupRaw('<w4@peer.test>'), key: 'INBOX:3:3', folder: 'inbox' },
          ],
          3,
        ),
        { folders },
      );
      expect(forged.warmup).toEqual(['INBOX:3:3']);
      expect(forged.messages.map((m) => m.messageId)).toEqual(['<w2@peer.test>']);
      await setWarmup(store.db, s.workspaceId, s.mailboxId, { enabled: false }, clock.now());
      const out = await ingestBatch(deps, mb(), batch([{ raw: warmupRaw('<w3@peer.test>'), key: 'INBOX:3:2', folder: 'inbox' }], 4), { folders });
      expect(out.warmup).toEqual([]);
      await setWarmup(store.db, s.workspaceId, s.mailboxId, { enabled: true }, clock.now());
    });
  });
}
