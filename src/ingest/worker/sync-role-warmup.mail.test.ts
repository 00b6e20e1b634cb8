import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { createLogger } from '../../common/logger.ts';
import { seededRandom } from '../../common/random.ts';
import { openMasterKey } from '../../mailbox/master-key.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { startApp } from '../../app/app.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { setWarmup } from '../../warmup/membership.ts';
import { warmupPoolKey, writeWarmup } from '../../warmup/text/marker.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { mailBed, bedEndpoint, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import { replyMail, seedSentSequence } from '../../../test/ingest/seed-sent-sequence.ts';

/**
 * End to end on the bed: `cadenza start` with the sync role, as the composition root wires it
 * (the warmup recogniser under the master key). A pool member's warmup mail and a prospect's reply
 * arrive through Postfix; the reply stops its enrollment, the warmup mail is recorded, flagged and
 * read on the server, and never becomes an inbound message. Mail-bed user: sync64.
 */
const USER = 'sync64@inbox.test';
const PEER = 'robin@warmup-peer.test';

describeMailBed('warmup mail through the sync role', () => {
  let store: TestStore;
  let dir: string;
  beforeAll(async () => {
    await resetMailBed([USER]);
    store = await freshStore('postgres');
    dir = mkdtempSync(join(tmpdir(), 'cadenza-sync-warmup-'));
  }, 60_000);
  afterAll(async () => {
    await store?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes warmup mail aside (recorded, flagged, read) while a reply beside it stops its enrollment', async () => {
    const tag = randomBytes(4).toString('hex');
    const random = seededRandom(tag);
    const master = await openMasterKey(store, { dataDir: dir, env: {} });
    const vault = new Vault(store, localKeyWrapper(master));
    const s = await seedSentSequence(store, { clock: systemClock, random, service: new EnrollmentService({ store, clock: systemClock, random: seededRandom(1) }) }, {
      mailboxEmail: USER,
      leads: [`a.${tag}@prospects.test`],
      tag,
      settings: { imap: bedEndpoint('imap') },
      credential: { vault, username: USER, password: 'pass' },
    });
    const ws = newId(Date.now(), random);
    await store.db.insertInto('workspace').values({ id: ws, name: 'peer', time_zone: 'UTC' }).execute();
    const peerId = newId(Date.now(), random);
    await store.db.insertInto('mailbox').values({ id: peerId, workspace_id: ws, email: PEER, provider: 'smtp_imap', settings: JSON.stringify({}), time_zone: 'UTC' }).execute();
    await setWarmup(store.db, ws, peerId, { enabled: true }, Date.now());
    await setWarmup(store.db, s.workspaceId, s.mailboxId, { enabled: true }, Date.now());

    const app = await startApp({ databaseUrl: store.url, dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api', 'sync'], log: createLogger({ level: 'silent' }) });
    const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
    try {
      for (let i = 0; i < 100 && !(await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).where('cursor', 'is not', null).executeTakeFirst()); i++) await new Promise((r) => setTimeout(r, 50));
      const wid = `<warmup-${tag}@warmup-peer.test>`;
      const t = writeWarmup(warmupPoolKey(master, 'default'), 'fr', { from: PEER, to: USER, messageId: wid, fromName: 'Robin', toName: 'Sam' });
      await smtp.sendMail({ from: { name: 'Robin Peer', address: PEER }, to: { name: 'Sam Rep', address: USER }, subject: t.subject!, text: t.body, messageId: wid });
      const x = s.sends[0]!;
      await smtp.sendMail({ envelope: { from: x.leadEmail, to: [USER] }, raw: replyMail({ from: x.leadEmail, to: USER, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Yes please', messageId: `<warm-role-${tag}@p.test>` }) });

      let state = '';
      let folder: string | null = null;
      for (let i = 0; i < 300 && (state !== 'replied' || folder === null); i++) {
        await new Promise((r) => setTimeout(r, 50));
        state = (await store.db.selectFrom('enrollment').select('state').where('id', '=', x.enrollmentId).executeTakeFirstOrThrow()).state;
        folder = (await store.db.selectFrom('warmup_mail').select('received_folder').where('message_id', '=', wid).executeTakeFirst())?.received_folder ?? null;
      }
      expect(state).toBe('replied');
      expect(folder).toBe('inbox');
      expect(await store.db.selectFrom('message').select('id').where('message_id', '=', wid).execute()).toEqual([]);
      expect(await store.db.selectFrom('message').select('id').where('message_id', '=', `<warm-role-${tag}@p.test>`).execute()).toHaveLength(1);
      // The folder actions ran through the sync connector: flagged and read on the server.
      let flags: string[] = [];
      for (let i = 0; i < 100 && !(flags.includes('\\Flagged') && flags.includes('\\Seen')); i++) {
        flags = (await readInbox(USER, 'pass', wid, { waitMs: 0 }))[0]?.flags ?? [];
        if (!(flags.includes('\\Flagged') && flags.includes('\\Seen'))) await new Promise((r) => setTimeout(r, 50));
      }
      expect(flags).toEqual(expect.arrayContaining(['\\Flagged', '\\Seen']));
    } finally {
      smtp.close();
      await app.stop();
    }
  }, 90_000);
});
