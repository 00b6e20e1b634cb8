import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, mailBed, resetMailBed } from '../../../test/mail/mailbed.ts';
import { replyMail, seedSentSequence, type Seeded } from '../../../test/ingest/seed-sent-sequence.ts';
import { SyncPool } from './sync-pool.ts';

/**
 * Two sync processes (two pools on one PostgreSQL): one owner per mailbox; when the owner stops
 * (SIGTERM), it releases the lease and the other takes the mailbox over at its next balance and
 * continues from the stored cursor, so every reply acts exactly once.
 */
const USER = 'sync13@inbox.test';

describeMailBed('sync pools share mailboxes by lease', () => {
  let store: TestStore;
  let s: Seeded;
  let vault: Vault;
  const tag = randomBytes(4).toString('hex');
  const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
  const pools: SyncPool[] = [];
  const pool = (name: string) => {
    const p = new SyncPool({ store, service: new EnrollmentService({ store, clock: systemClock, random: seededRandom(name) }), clock: systemClock, random: seededRandom(`${name}-${tag}`), vault, owner: name, mailboxIds: [s.mailboxId], leaseTtlMs: 3_000, reconcileMs: 60_000 });
    pools.push(p);
    return p;
  };
  const until = async (what: () => Promise<boolean>, ms = 15_000) => {
    const end = Date.now() + ms;
    while (!(await what())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const replied = (id: string) => async () => (await store.db.selectFrom('enrollment').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state === 'replied';

  beforeAll(async () => {
    await resetMailBed([USER]);
    store = await freshStore('postgres');
    vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    s = await seedSentSequence(store, { clock: systemClock, random: seededRandom(`seed-${tag}`), service: new EnrollmentService({ store, clock: systemClock, random: seededRandom(1) }) }, {
      mailboxEmail: USER,
      leads: [`a.${tag}@prospects.test`, `b.${tag}@prospects.test`],
      tag,
      settings: { imap: bedEndpoint('imap') },
      credential: { vault, username: USER, password: 'pass' },
    });
  }, 60_000);
  afterAll(async () => {
    for (const p of pools) await p.stop();
    smtp.close();
    await store?.destroy();
  });

  it('one owner at a time; a stopped owner hands over and the next one continues from the cursor', async () => {
    const one = pool('one');
    const two = pool('two');
    await one.start();
    await two.start();
    expect([one.mailboxes, two.mailboxes]).toEqual([[s.mailboxId], []]);
    const lease = await store.db.selectFrom('lease').select(['owner', 'token']).where('resource', '=', `sync:${s.mailboxId}`).executeTakeFirstOrThrow();
    expect(lease.owner).toBe('one');

    const [a, b] = s.sends;
    await smtp.sendMail({ envelope: { from: a!.leadEmail, to: [USER] }, raw: replyMail({ from: a!.leadEmail, to: USER, inReplyTo: a!.messageId, subject: `Re: ${a!.subject}`, body: 'Yes', messageId: `<ha-${tag}@p.test>` }) });
    await until(replied(a!.enrollmentId));

    await one.stop();
    expect(await store.db.selectFrom('lease').select('owner').where('resource', '=', `sync:${s.mailboxId}`).execute()).toEqual([]);
    // While nobody holds it, a reply arrives; the next owner's first pull (from the stored cursor) finds it.
    await smtp.sendMail({ envelope: { from: b!.leadEmail, to: [USER] }, raw: replyMail({ from: b!.leadEmail, to: USER, inReplyTo: b!.messageId, subject: `Re: ${b!.subject}`, body: 'Sure', messageId: `<hb-${tag}@p.test>` }) });
    await until(async () => two.mailboxes.length === 1);
    await until(replied(b!.enrollmentId));
    const next = await store.db.selectFrom('lease').select(['owner', 'token']).where('resource', '=', `sync:${s.mailboxId}`).executeTakeFirstOrThrow();
    expect(next.owner).toBe('two');
    expect(Number(next.token)).toBeGreaterThan(Number(lease.token));
    // Each reply stored and acted on once, whoever pulled it.
    const rows = await store.db.selectFrom('message').select('message_id').where('direction', '=', 'inbound').orderBy('message_id').execute();
    expect(rows.map((r) => r.message_id)).toEqual([`<ha-${tag}@p.test>`, `<hb-${tag}@p.test>`]);
    const events = await store.db.selectFrom('event').select('type').where('type', 'like', 'reply%').execute();
    expect(events.map((e) => e.type)).toEqual(['reply', 'reply']);
  }, 90_000);
});
