import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { bigPlainMessage, hostileMessages } from '../../test/fuzz/hostile-corpus.ts';
import { ingestResponsively } from '../../test/fuzz/responsiveness.ts';
import { seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { PreparePool } from './worker/prepare-pool.ts';

/**
 * Promise 8 under attack: the generated hostile corpus (about 1 MB a message, plus a 25 MB plain
 * text mail) goes through the real pipeline (the prepare pool's threads, the store) while an HTTP
 * server in this process answers /healthz. The event loop stays responsive (p99 delay under
 * 100 ms), the server keeps answering, and every message ends stored or quarantined. Before the
 * pool and the linear stages, one `<script`-only mail blocked this loop for minutes; with linear
 * stages but in this thread, the server answered once in 5 s.
 */
const P99_LIMIT_MS = 100;

for (const backend of testBackends()) {
  describe(`hostile mail through the real pipeline (${backend})`, () => {
    let store: TestStore;
    let s: Seeded;
    let pool: PreparePool;
    beforeAll(async () => {
      store = await freshStore(backend);
      const random = seededRandom(`hostile-${backend}`);
      const service = new EnrollmentService({ store, clock: systemClock, random });
      s = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: ['a@acme.test'], tag: 'hostile' });
      pool = new PreparePool();
      // The threads load their modules before the clock starts: a cold start is not the figure.
      await pool.prepare(new TextEncoder().encode('From: a@b.example\r\nSubject: warm\r\n\r\nhi\r\n'));
    }, 60_000);
    afterAll(async () => {
      await pool?.close();
      await store?.destroy();
    });

    it('the event loop stays responsive and every message is stored or quarantined', async () => {
      const corpus = [...hostileMessages(), bigPlainMessage()].map((m) => m.raw);
      const random = seededRandom(`ingest-${backend}`);
      const deps = { store, service: new EnrollmentService({ store, clock: systemClock, random }), clock: systemClock, random, steps: pool.steps() };
      const r = await ingestResponsively(deps, { id: s.mailboxId, workspaceId: s.workspaceId }, corpus);
      console.log(
        `hostile ingest (${backend}): ${r.messages} messages in ${r.seconds.toFixed(1)} s (${r.messagesPerSecond.toFixed(2)} msg/s); event-loop delay p99 ${r.p99Ms.toFixed(1)} ms, max ${r.maxMs.toFixed(1)} ms; /healthz answered ${r.answered} times, worst ${r.worstAnswerMs.toFixed(0)} ms; ${r.stored} stored, ${r.quarantined} quarantined`,
      );
      expect(r.stored + r.quarantined).toBe(corpus.length);
      const rows = await store.db.selectFrom('message').select(({ fn }) => fn.countAll<string>().as('n')).where('mailbox_id', '=', s.mailboxId).where('direction', '=', 'inbound').executeTakeFirstOrThrow();
      const q = await store.db.selectFrom('quarantine').select(({ fn }) => fn.countAll<string>().as('n')).where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow();
      expect(Number(rows.n) + Number(q.n)).toBe(corpus.length);
      expect(r.answered).toBeGreaterThan(r.seconds * 5);
      expect(r.worstAnswerMs).toBeLessThan(1000);
      expect(r.p99Ms).toBeLessThan(P99_LIMIT_MS);
    }, 120_000);
  });
}
