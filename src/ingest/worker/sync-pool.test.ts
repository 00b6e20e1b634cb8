import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { pauseMailbox } from '../../mailbox/health/pause.ts';
import type { SyncBatch } from '../../mailbox/sync/source.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { OneBatch } from '../../../test/sync/one-batch.ts';
import { defaultIngestSteps } from '../pipeline-steps.ts';
import { replyMail, seedSentSequence } from '../../../test/ingest/seed-sent-sequence.ts';
import { SyncPool } from './sync-pool.ts';

/**
 * The sync role on the pool's shared rules (mailbox/mailbox-pool.ts), on both backends: a mailbox
 * paused for sending is still synced, so a reply to its earlier mail still stops the enrollment
 * (promise 2); a mailbox whose sync part cannot be built (no IMAP server) is paused with the
 * reason, as the sender's would be.
 */
describe.each(testBackends())('the sync pool on %s', (backend) => {
  let store: TestStore | undefined;
  let pool: SyncPool | undefined;
  afterEach(async () => {
    await pool?.stop();
    await store?.destroy();
    pool = undefined;
    store = undefined;
  });

  async function seeded(settings?: unknown) {
    store = await freshStore(backend);
    const tag = randomBytes(3).toString('hex');
    const service = new EnrollmentService({ store, clock: systemClock, random: seededRandom(tag) });
    const s = await seedSentSequence(store, { clock: systemClock, random: seededRandom(`seed-${tag}`), service }, { mailboxEmail: 'rep@cadenza.test', leads: ['a@acme.test'], tag, ...(settings ? { settings } : {}) });
    return { tag, service, s, vault: new Vault(store, localKeyWrapper(randomBytes(32))) };
  }

  const until = async (what: () => Promise<boolean>, ms = 20_000) => {
    const end = Date.now() + ms;
    while (!(await what())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('syncs a mailbox paused for sending: the reply still stops the enrollment', async () => {
    const { tag, service, s, vault } = await seeded();
    const db = store!.db;
    expect(await pauseMailbox(db, s.mailboxId, 'paused by a person', Date.now())).toBe(true);
    const send = s.sends[0]!;
    const raw = replyMail({ from: send.leadEmail, to: 'rep@cadenza.test', inReplyTo: send.messageId, subject: `Re: ${send.subject}`, body: 'Yes, call me.', messageId: `<paused-${tag}@acme.test>` });
    const batch: SyncBatch = { messages: [{ key: 'INBOX:1:1', folder: 'inbox', raw: new TextEncoder().encode(raw), threadId: null, receivedAt: Date.now() }], problems: [], cursor: { uid: 1 }, mode: 'incremental' };
    pool = new SyncPool({ store: store!, service, clock: systemClock, random: seededRandom(`pool-${tag}`), vault, owner: `sync-${tag}`, mailboxIds: [s.mailboxId], reconcileMs: 60_000, steps: defaultIngestSteps(), connectorFor: () => new OneBatch(batch) });
    await pool.start();
    expect(pool.mailboxes).toEqual([s.mailboxId]);
    await until(async () => (await db.selectFrom('enrollment').select('state').where('id', '=', send.enrollmentId).executeTakeFirstOrThrow()).state === 'replied');
    expect(await db.selectFrom('mailbox').select('health').where('id', '=', s.mailboxId).executeTakeFirstOrThrow()).toEqual({ health: 'paused' });
  }, 60_000);

  it('pauses a mailbox whose sync part cannot be built, with the reason, and runs no loop on it', async () => {
    const { tag, service, s, vault } = await seeded({ smtp: { host: '127.0.0.1', port: 2525, security: 'none' } });
    await vault.put((await store!.db.selectFrom('mailbox').select('workspace_id').where('id', '=', s.mailboxId).executeTakeFirstOrThrow()).workspace_id, s.mailboxId, { kind: 'password', username: '', password: 'pw' });
    pool = new SyncPool({ store: store!, service, clock: systemClock, random: seededRandom(`pool-${tag}`), vault, owner: `sync-${tag}`, mailboxIds: [s.mailboxId], reconcileMs: 60_000, steps: defaultIngestSteps() });
    await pool.start();
    expect(pool.mailboxes).toEqual([]);
    expect(await store!.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', s.mailboxId).executeTakeFirstOrThrow()).toEqual({
      health: 'paused',
      health_reason: 'cannot connect: mailbox rep@cadenza.test has no IMAP server in its settings',
    });
  }, 60_000);
});
