import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { startFaultProxy, type FaultProxy } from '../../../test/mail/fault-proxy.ts';
import { mailBed, resetMailBed } from '../../../test/mail/mailbed.ts';
import { replyMail, seedSentSequence } from '../../../test/ingest/seed-sent-sequence.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import type { IngestReport } from '../pipeline.ts';
import { SyncPool } from './sync-pool.ts';

/**
 * The sync role on the real bed, its mailbox's IMAP behind a TCP proxy that counts connections
 * (each one a LOGIN): replies pushed by IDLE are pulled on the watch's own connection, so after the
 * watch and the first pull no connection is opened for them; when the watch connection is cut, the
 * loop reconnects after its backoff (a watch and a full pull) and the next reply is again pulled on
 * the watch. The connector's side: src/mailbox/sync/imap-watch-pull.mail.test.ts. User sync78.
 */
const POOL_USER = 'sync78@inbox.test';
const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });

describeMailBed('sync role: replies pulled on the IDLE connection (real Dovecot)', () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    await resetMailBed([POOL_USER]);
    proxy = await startFaultProxy({ host: mailBed.host, port: mailBed.imapPort });
  }, 60_000);
  afterAll(async () => {
    smtp.close();
    await proxy?.close();
  });

  it('stops replies with no connection opened for them, and comes back after a cut', async () => {
    const store: TestStore = await freshStore('postgres');
    const tag = randomBytes(4).toString('hex');
    const random = seededRandom(`watch-pull-${tag}`);
    const service = new EnrollmentService({ store, clock: systemClock, random });
    const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    const leads = [0, 1, 2].map((i) => `w${i}.${tag}@prospects.test`);
    const s = await seedSentSequence(store, { clock: systemClock, random, service }, {
      mailboxEmail: POOL_USER,
      leads,
      tag,
      settings: { imap: { host: proxy.host, port: proxy.port, security: 'none' } },
      credential: { vault, username: POOL_USER, password: 'pass' },
    });
    const committed = new Map<string, () => void>();
    const pool = new SyncPool({
      store,
      service,
      clock: systemClock,
      random,
      vault,
      mailboxIds: [s.mailboxId],
      reconcileMs: 600_000,
      backoff: { baseMs: 200, capMs: 1_000 },
      onBatch: (_id, r: IngestReport) => {
        for (const m of r.messages) committed.get(m.messageId)?.();
      },
    });
    const stoppedBy = async (i: number) => {
      const x = s.sends.find((y) => y.leadEmail === leads[i])!;
      const messageId = `<wreply-${i}-${tag}@prospects.test>`;
      const done = new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`reply ${i} not committed within 15 s`)), 15_000);
        committed.set(messageId, () => {
          clearTimeout(t);
          resolve();
        });
      });
      await smtp.sendMail({ envelope: { from: x.leadEmail, to: [POOL_USER] }, raw: replyMail({ from: x.leadEmail, to: POOL_USER, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Yes, call me.', messageId }) });
      await done;
      return (await store.db.selectFrom('enrollment').select('state').where('id', '=', x.enrollmentId).executeTakeFirstOrThrow()).state;
    };
    try {
      const before = proxy.stats.connections;
      await pool.start();
      // Watched and pulled once: the watch and the first (full) pull, two connections.
      await expect.poll(async () => (await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).where('cursor', 'is not', null).executeTakeFirst()) !== undefined, { timeout: 30_000 }).toBe(true);
      await expect.poll(() => proxy.stats.connections - before, { timeout: 5_000 }).toBe(2);

      expect(await stoppedBy(0)).toBe('replied');
      expect(await stoppedBy(1)).toBe('replied');
      expect(proxy.stats.connections - before).toBe(2);

      // The watch connection is cut: the loop reconnects after its backoff (a watch and a full
      // pull), and the next reply is again pulled on the new watch's connection.
      proxy.cut();
      await expect.poll(() => proxy.stats.connections - before, { timeout: 10_000 }).toBe(4);
      expect(await stoppedBy(2)).toBe('replied');
      expect(proxy.stats.connections - before).toBe(4);
    } finally {
      await pool.stop();
      await store.destroy();
    }
  }, 90_000);
});
