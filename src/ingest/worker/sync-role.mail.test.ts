import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { createLogger } from '../../common/logger.ts';
import { seededRandom } from '../../common/random.ts';
import { openMasterKey } from '../../mailbox/master-key.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { startApp } from '../../app/app.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, mailBed, resetMailBed } from '../../../test/mail/mailbed.ts';
import { replyMail, seedSentSequence } from '../../../test/ingest/seed-sent-sequence.ts';

/** `cadenza start` with its default roles syncs a mailbox whose password is in the vault, and /metrics reports the stop. */
const USER = 'sync15@inbox.test';

describeMailBed('the sync role in cadenza start', () => {
  let store: TestStore;
  let dir: string;
  beforeAll(async () => {
    await resetMailBed([USER]);
    store = await freshStore('postgres');
    dir = mkdtempSync(join(tmpdir(), 'cadenza-sync-role-'));
  }, 60_000);
  afterAll(async () => {
    await store?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops an enrollment on a reply and exposes the latency on /metrics', async () => {
    const tag = randomBytes(4).toString('hex');
    const vault = new Vault(store, localKeyWrapper(await openMasterKey(store, { dataDir: dir, env: {} })));
    const s = await seedSentSequence(store, { clock: systemClock, random: seededRandom(tag), service: new EnrollmentService({ store, clock: systemClock, random: seededRandom(1) }) }, {
      mailboxEmail: USER,
      leads: [`a.${tag}@prospects.test`],
      tag,
      settings: { imap: bedEndpoint('imap') },
      credential: { vault, username: USER, password: 'pass' },
    });
    const app = await startApp({ databaseUrl: store.url, dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api', 'sync'], log: createLogger({ level: 'silent' }) });
    const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
    try {
      expect(app.syncs?.mailboxes).toEqual([s.mailboxId]);
      const x = s.sends[0]!;
      for (let i = 0; i < 100 && !(await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).where('cursor', 'is not', null).executeTakeFirst()); i++) await new Promise((r) => setTimeout(r, 50));
      await smtp.sendMail({ envelope: { from: x.leadEmail, to: [USER] }, raw: replyMail({ from: x.leadEmail, to: USER, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Yes please', messageId: `<role-${tag}@p.test>` }) });
      let state = '';
      for (let i = 0; i < 200 && state !== 'replied'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        state = (await store.db.selectFrom('enrollment').select('state').where('id', '=', x.enrollmentId).executeTakeFirstOrThrow()).state;
      }
      expect(state).toBe('replied');
      const text = await (await fetch(`${app.url}/metrics`)).text();
      expect(text).toContain('cadenza_reply_to_stop_ms_count 1');
      expect(text).toContain('cadenza_ingested_messages_total{label="human_reply"} 1');
      expect(text).toContain('cadenza_synced_mailboxes 1');
    } finally {
      smtp.close();
      await app.stop();
    }
    expect(await store.db.selectFrom('lease').selectAll().where('resource', '=', `sync:${s.mailboxId}`).execute()).toEqual([]);
  }, 90_000);
});
