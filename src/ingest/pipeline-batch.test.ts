import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import type { SyncBatch } from '../mailbox/sync/source.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { countingStore } from '../../test/counting-store.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { replyMail, seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { parseMail } from './parse/parse-mail.ts';
import { ingestBatch, type IngestDeps, type IngestSteps } from './pipeline.ts';
import type { Classification } from './types.ts';

/**
 * A batch's transaction is set-based and still acts as if its messages were taken one by one: the
 * statements a batch runs do not grow with its replies; two messages on one enrollment apply in
 * order; the same message twice in one batch (INBOX and Junk) acts once; a replay acts never.
 */
const T0 = Date.UTC(2026, 5, 1, 9, 0); // Monday
const enc = (s: string) => new TextEncoder().encode(s);

for (const backend of testBackends()) {
  describe(`ingestion batches, set-based (${backend})`, () => {
    let store: TestStore;
    let counted: ReturnType<typeof countingStore>;
    const clock = new SimClock(T0);
    const random = seededRandom(`ingest-batch-${backend}`);
    const verdicts = new Map<string, Classification>();
    const human: Classification = { label: 'human_reply', confidence: 0.9, reason: 'test: a person wrote it', rung: 'default' };
    const steps: IngestSteps = {
      parse: async (raw) => ({ ok: true, mail: await parseMail(raw) }),
      newText: (m) => m.text,
      classify: (m) => verdicts.get(m.messageId ?? '') ?? human,
    };
    let deps: IngestDeps;
    let s: Seeded;
    let n = 0;
    const reply = (i: number, messageId = `<b${i}-${++n}@acme.test>`) => {
      const x = s.sends[i]!;
      return { raw: replyMail({ from: x.leadEmail, to: 'rep@cadenza.test', inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Yes, call me.', messageId }), messageId };
    };
    const batch = (raws: Array<{ raw: string; key?: string; folder?: 'inbox' | 'junk' }>): SyncBatch => ({
      messages: raws.map((r, i) => ({ key: r.key ?? `INBOX:1:${++n}-${i}`, folder: r.folder ?? 'inbox', raw: enc(r.raw), threadId: null, receivedAt: clock.now() - 500 })),
      problems: [],
      cursor: { n },
      mode: 'incremental',
    });
    const state = async (i: number) => (await store.db.selectFrom('enrollment').select('state').where('id', '=', s.sends[i]!.enrollmentId).executeTakeFirstOrThrow()).state;

    beforeAll(async () => {
      store = await freshStore(backend);
      counted = countingStore(store);
      const service = new EnrollmentService({ store: counted.store, clock, random });
      deps = { store: counted.store, service, clock, random, steps };
      s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: Array.from({ length: 12 }, (_, i) => `lead${i}@acme${i}.test`), tag: 'batch' });
      clock.advance(60_000);
    }, 60_000);
    afterAll(async () => {
      await store?.destroy();
    });

    it('runs as many statements for eight replies as for two', async () => {
      const before = counted.statements();
      const two = await ingestBatch(deps, { id: s.mailboxId, workspaceId: s.workspaceId }, batch([reply(0), reply(1)]));
      const forTwo = counted.statements() - before;
      const eight = await ingestBatch(deps, { id: s.mailboxId, workspaceId: s.workspaceId }, batch([2, 3, 4, 5, 6, 7, 8, 9].map((i) => reply(i))));
      const forEight = counted.statements() - before - forTwo;
      expect(two.messages.map((m) => m.action)).toEqual(['reply', 'reply']);
      expect(eight.messages.every((m) => m.action === 'reply' && m.inserted)).toBe(true);
      for (let i = 0; i < 10; i++) expect(await state(i)).toBe('replied');
      expect(forEight).toBe(forTwo);
      // The thread context with its targets, the inbound rows, the engine's lock and its one write
      // (states, cancelled sends and tasks, journal), the fence + cursor + stop latencies.
      expect(forEight).toBe(5);
    });

    it('applies two messages on one enrollment in order, acts once on a message stored twice, and never on a replay', async () => {
      const ooo = reply(10, '<ooo@acme10.test>');
      verdicts.set(ooo.messageId, { label: 'auto_reply', confidence: 0.95, reason: 'test: out of office', rung: 'out_of_office' });
      const answer = reply(10, '<after@acme10.test>');
      const twice = reply(11, '<twice@acme11.test>');
      const b = batch([ooo, answer, twice, { ...twice, folder: 'junk' }]);
      const r = await ingestBatch(deps, { id: s.mailboxId, workspaceId: s.workspaceId }, b);
      expect(r.messages.map((m) => [m.action, m.inserted])).toEqual([
        ['out_of_office', true],
        ['reply', true],
        ['reply', true],
        ['reply', false],
      ]);
      expect(await state(10)).toBe('replied');
      expect(await state(11)).toBe('replied');
      const journal = await store.db.selectFrom('event').select('type').where('enrollment_id', '=', s.sends[10]!.enrollmentId).orderBy('id').execute();
      expect(journal.map((j) => j.type).slice(-2)).toEqual(['out_of_office', 'reply']);
      const copies = await store.db.selectFrom('message').select('folder').where('message_id', '=', twice.messageId).execute();
      expect(copies).toEqual([{ folder: 'inbox' }]);

      const again = await ingestBatch(deps, { id: s.mailboxId, workspaceId: s.workspaceId }, b);
      expect(again.messages.every((m) => !m.inserted)).toBe(true);
      expect(again.applied).toEqual([]);
    });
  });
}
