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
 * Sync processes (pools on one PostgreSQL): one owner per mailbox; when the owner stops (SIGTERM),
 * it releases the lease and another takes the mailbox over at its next balance; an owner that
 * comes after a gap continues from the stored cursor; so every reply acts exactly once.
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
      leads: [`a.${tag}@prospects.test`, `b.${tag}@prospects.test`, `c.${tag}@prospects.test`],
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

  it('one owner at a time; a stopped owner hands over, and an owner after a gap continues from the cursor', async () => {
    const one = pool('one');
    const two = pool('two');
    await one.start();
    await two.start();
    expect([one.mailboxes, two.mailboxes]).toEqual([[s.mailboxId], []]);
    const owner = () => store.db.selectFrom('lease').select(['owner', 'token']).where('resource', '=', `sync:${s.mailboxId}`).executeTakeFirst();
    const first = (await owner())!;
    expect(first.owner).toBe('one');
    const reply = (to: Seeded['sends'][number], id: string) =>
      smtp.sendMail({ envelope: { from: to.leadEmail, to: [USER] }, raw: replyMail({ from: to.leadEmail, to: USER, inReplyTo: to.messageId, subject: `Re: ${to.subject}`, body: 'Yes', messageId: `<${id}-${tag}@p.test>` }) });

    const [a, b, c] = s.sends;
    await reply(a!, 'ha');
    await until(replied(a!.enrollmentId));

    // The owner stops: it releases the lease and leaves, which nudges the other to take it over
    // (at once: whether it already has by the next query is a race, so only "not one" is certain).
    await one.stop();
    expect((await owner())?.owner).not.toBe('one');
    await until(async () => two.mailboxes.length === 1);
    const second = (await owner())!;
    expect(second.owner).toBe('two');
    expect(Number(second.token)).toBeGreaterThan(Number(first.token));
    await reply(b!, 'hb');
    await until(replied(b!.enrollmentId));

    // The last owner stops, and nobody holds the mailbox while a reply arrives; the owner after
    // the gap finds it on its first pull, from the stored cursor.
    await two.stop();
    expect(await owner()).toBeUndefined();
    await reply(c!, 'hc');
    const three = pool('three');
    await three.start();
    expect(three.mailboxes).toEqual([s.mailboxId]);
    await until(replied(c!.enrollmentId));
    expect(Number((await owner())!.token)).toBeGreaterThan(Number(second.token));

    // Each reply stored and acted on once, whoever pulled it.
    const rows = await store.db.selectFrom('message').select('message_id').where('direction', '=', 'inbound').orderBy('message_id').execute();
    expect(rows.map((r) => r.message_id)).toEqual([`<ha-${tag}@p.test>`, `<hb-${tag}@p.test>`, `<hc-${tag}@p.test>`]);
    const events = await store.db.selectFrom('event').select('type').where('type', 'like', 'reply%').execute();
    expect(events.map((e) => e.type)).toEqual(['reply', 'reply', 'reply']);
  }, 90_000);
});
