import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import type { SyncBatch } from '../../mailbox/sync/source.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { forMainThread, ingestBatch, runSteps } from '../pipeline.ts';
import { defaultIngestSteps } from '../pipeline-steps.ts';
import { replyMail, seedSentSequence, type Seeded } from '../../../test/ingest/seed-sent-sequence.ts';
import { PreparePool } from './prepare-pool.ts';
import { slowStepsModule } from '../../../test/sync/slow-steps.ts';

/**
 * The prepare pool: the real stages in worker threads give what they give in this thread; a
 * message past its deadline is quarantined with reason `timeout`, its worker replaced, and the
 * batch goes on; a drain refuses what waits and lets what runs finish; no thread is left.
 */
const enc = (s: string) => new TextEncoder().encode(s);
const T0 = Date.UTC(2026, 5, 1, 9, 0);

describe('PreparePool', () => {
  it('runs the real stages in a worker thread, with the same result as in this thread (cut to what the main thread reads)', async () => {
    const pool = new PreparePool({ size: 1 });
    try {
      const raw = enc(replyMail({ from: 'ann@acme.test', to: 'rep@cadenza.test', subject: 'Re: intro', body: 'Yes, interested. Call me Thursday.\r\n\r\nOn Mon, Rep wrote:\r\n> hi', messageId: '<same@acme.test>', date: new Date(T0) }));
      const there = await pool.prepare(raw);
      const here = forMainThread(await runSteps(defaultIngestSteps(), raw));
      expect(there).toEqual(here);
      expect(there.ok && there.classification.label).toBe('human_reply');
      const bad = await pool.prepare(new Uint8Array(0));
      expect(bad).toMatchObject({ ok: false, reason: expect.stringMatching(/^empty/) });
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('a message past its deadline is quarantined as timeout, its worker replaced, and the next one is prepared', async () => {
    const pool = new PreparePool({ size: 1, deadlineMs: 3_000, stepsModule: slowStepsModule });
    try {
      const slow = enc(replyMail({ from: 'x@acme.test', to: 'rep@cadenza.test', subject: 'Re: x', body: 'hi', messageId: '<slow@acme.test>', headers: { 'X-Test-Spin-Ms': '600000' } }));
      const fine = enc(replyMail({ from: 'y@acme.test', to: 'rep@cadenza.test', subject: 'Re: y', body: 'Thanks, not now.', messageId: '<fine@acme.test>' }));
      const [a, b] = await Promise.all([pool.prepare(slow), pool.prepare(fine)]);
      expect(a).toMatchObject({ ok: false, reason: expect.stringMatching(/^timeout: /) });
      expect(b.ok).toBe(true);
      expect(pool.stats).toMatchObject({ timedOut: 1, replaced: 1 });
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('close refuses what waits (the batch is not committed) and lets what runs finish', async () => {
    const pool = new PreparePool({ size: 1, stepsModule: slowStepsModule });
    const running = pool.prepare(enc(replyMail({ from: 'x@acme.test', to: 'rep@cadenza.test', subject: 'Re: x', body: 'ok', messageId: '<r@acme.test>', headers: { 'X-Test-Spin-Ms': '300' } })));
    const waiting = pool.prepare(enc(replyMail({ from: 'y@acme.test', to: 'rep@cadenza.test', subject: 'Re: y', body: 'ok', messageId: '<w@acme.test>' })));
    // Until the thread is up and has the first message, both wait in the queue: close once it runs.
    while (pool.stats.done === 0 && pool.running === 0) await new Promise((r) => setTimeout(r, 10));
    const closing = pool.close();
    await expect(waiting).rejects.toSatisfy((e: unknown) => isCadenzaError(e, 'WORKER_POOL_CLOSED'));
    expect((await running).ok).toBe(true);
    await closing;
    // No thread is left: a terminated Worker's threadId is -1.
    expect(pool.threadIds).toEqual([-1]);
    await expect(pool.prepare(enc('x'))).rejects.toSatisfy((e: unknown) => isCadenzaError(e, 'WORKER_POOL_CLOSED'));
  }, 60_000);
});

for (const backend of testBackends()) {
  describe(`ingestion through the prepare pool (${backend})`, () => {
    let store: TestStore;
    let s: Seeded;
    const clock = new SimClock(T0);
    const random = seededRandom(`pool-${backend}`);
    let service: EnrollmentService;
    let pool: PreparePool;
    beforeAll(async () => {
      store = await freshStore(backend);
      service = new EnrollmentService({ store, clock, random });
      s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: ['a@acme.test', 'b@beta.test'], tag: 'pool' });
      // A deadline far above an ordinary message's cost on a loaded machine, far below the stalled one's.
      pool = new PreparePool({ size: 2, deadlineMs: 5_000, stepsModule: slowStepsModule });
    }, 60_000);
    afterAll(async () => {
      await pool?.close();
      await store?.destroy();
    });

    it('a batch with a message past the deadline: that one is quarantined as timeout, the others act, the cursor commits', async () => {
      const [a, b] = s.sends;
      const raws = [
        replyMail({ from: a!.leadEmail, to: 'rep@cadenza.test', inReplyTo: a!.messageId, subject: `Re: ${a!.subject}`, body: 'Yes, let us talk.', messageId: '<a-reply@acme.test>' }),
        replyMail({ from: 'stranger@hostile.test', to: 'rep@cadenza.test', subject: 'Re: hi', body: 'x', messageId: '<stall@hostile.test>', headers: { 'X-Test-Spin-Ms': '600000' } }),
        replyMail({ from: b!.leadEmail, to: 'rep@cadenza.test', inReplyTo: b!.messageId, subject: `Re: ${b!.subject}`, body: 'Not interested.', messageId: '<b-reply@beta.test>' }),
      ];
      const batch: SyncBatch = { messages: raws.map((r, i) => ({ key: `INBOX:1:${i}`, folder: 'inbox', raw: enc(r), threadId: null, receivedAt: clock.now() })), problems: [], cursor: { uid: 3 }, mode: 'incremental' };
      const report = await ingestBatch({ store, service, clock, random, steps: pool.steps() }, { id: s.mailboxId, workspaceId: s.workspaceId }, batch);
      expect(report.quarantined).toBe(1);
      expect(report.messages.map((m) => [m.messageId, m.inserted])).toEqual([['<a-reply@acme.test>', true], ['<b-reply@beta.test>', true]]);
      const q = await store.db.selectFrom('quarantine').select(['provider_key', 'reason']).where('mailbox_id', '=', s.mailboxId).execute();
      expect(q).toEqual([{ provider_key: 'INBOX:1:1', reason: expect.stringMatching(/^timeout: /) }]);
      const states = await store.db.selectFrom('enrollment').select('state').where('id', 'in', [a!.enrollmentId, b!.enrollmentId]).execute();
      expect(states.map((r) => r.state)).toEqual(['replied', 'replied']);
      expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual({ uid: 3 });
    }, 60_000);
  });
}
