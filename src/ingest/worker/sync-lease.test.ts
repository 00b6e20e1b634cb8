import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import type { SyncBatch } from '../../mailbox/sync/source.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { OneBatch } from '../../../test/sync/one-batch.ts';
import { replyMail, seedSentSequence } from '../../../test/ingest/seed-sent-sequence.ts';
import { createSteps, slowStepsModule } from '../../../test/sync/slow-steps.ts';
import { SyncPool } from './sync-pool.ts';

/**
 * The sync lease is renewed whatever a message costs to parse and classify: the CPU work runs in
 * the prepare pool's threads, and the main thread's renewals (every ttl/3) go on meanwhile. A
 * message that takes longer than the lease's TTL still commits under the lease it started with.
 * The second case is the shape this replaced, kept as the witness: the same message parsed on
 * the main thread starves the renewals, the lease expires, the batch is fenced and is committed
 * only after the lease is taken again under a new token.
 */
const TTL_MS = 1_500;
const SPIN_MS = 4_500;

for (const backend of testBackends()) {
  describe(`the sync lease outlives slow messages (${backend})`, () => {
    let store: TestStore | undefined;
    let pool: SyncPool | undefined;
    afterEach(async () => {
      await pool?.stop();
      await store?.destroy();
    });

    const run = async (mode: 'pool' | 'main thread') => {
      store = await freshStore(backend);
      const tag = randomBytes(3).toString('hex');
      const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
      const service = new EnrollmentService({ store, clock: systemClock, random: seededRandom(tag) });
      const s = await seedSentSequence(store, { clock: systemClock, random: seededRandom(`seed-${tag}`), service }, { mailboxEmail: 'rep@cadenza.test', leads: ['a@acme.test'], tag });
      const send = s.sends[0]!;
      const raw = replyMail({ from: send.leadEmail, to: 'rep@cadenza.test', inReplyTo: send.messageId, subject: `Re: ${send.subject}`, body: 'Yes, call me.', messageId: `<slow-${tag}@acme.test>`, headers: { 'X-Test-Spin-Ms': String(SPIN_MS), 'X-Test-Spin-Once': 'yes' } });
      // The batch waits until the test has read the lease it starts under: on the main thread,
      // its spin would otherwise starve the test's query until the lease had expired and gone.
      let leaseRead = () => {};
      const read = new Promise<void>((r) => (leaseRead = r));
      const batch: SyncBatch = { messages: [{ key: 'INBOX:1:1', folder: 'inbox', raw: new TextEncoder().encode(raw), threadId: null, receivedAt: Date.now() }], problems: [], cursor: { uid: 1 }, mode: 'incremental' };
      pool = new SyncPool({
        store,
        service,
        clock: systemClock,
        random: seededRandom(`pool-${tag}`),
        vault,
        owner: `lease-test-${tag}`,
        mailboxIds: [s.mailboxId],
        leaseTtlMs: TTL_MS,
        reconcileMs: 60_000,
        connectorFor: () => new OneBatch(batch, read),
        ...(mode === 'pool' ? { prepare: { size: 1, deadlineMs: 30_000, stepsModule: slowStepsModule } } : { steps: createSteps() }),
      });
      await pool.start();
      const lease = async () => store!.db.selectFrom('lease').select(['owner', 'token']).where('resource', '=', `sync:${s.mailboxId}`).executeTakeFirst();
      const first = await lease();
      expect(first).toBeDefined();
      leaseRead();
      const end = Date.now() + 40_000;
      while ((await store.db.selectFrom('enrollment').select('state').where('id', '=', send.enrollmentId).executeTakeFirstOrThrow()).state !== 'replied') {
        if (Date.now() > end) throw new Error('the reply was never committed');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual({ uid: 1 });
      return { first: first!, after: (await lease())! };
    };

    it('in the prepare pool: the batch commits under the lease it started with', async () => {
      const { first, after } = await run('pool');
      expect(after).toEqual(first);
    }, 60_000);

    it('on the main thread (the shape replaced): the lease expires during the message, and the batch commits only under a new token', async () => {
      const { first, after } = await run('main thread');
      expect(Number(after.token)).toBeGreaterThan(Number(first.token));
    }, 60_000);
  });
}
