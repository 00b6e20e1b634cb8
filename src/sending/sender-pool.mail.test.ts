import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, countByMessageId, mailBed, readInbox } from '../../test/mail/mailbed.ts';
import { trackingKey } from './compose/tracking.ts';
import { SenderPool } from './sender-pool.ts';

/**
 * The sender role as `cadenza start` runs it: the dispatcher plans the mailbox's day, the pool
 * holds the mailbox's lease and sends at the planned instants through Postfix. Simulated time
 * (a working day passes in seconds); the mail itself really travels.
 */
const T0 = Date.UTC(2026, 5, 1, 7, 0); // Monday 07:00 UTC

describeMailBed('the sender role, paced', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore('postgres');
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('sends a day of a paced mailbox at human gaps inside its working day, each message once, and releases its lease on stop', async () => {
    const clock = new SimClock(T0);
    const random = seededRandom(77);
    const master = randomBytes(32);
    const tag = randomBytes(4).toString('hex');
    const ws = '00000000-0000-7000-8000-' + randomBytes(6).toString('hex');
    const mb = '00000000-0000-7000-8001-' + randomBytes(6).toString('hex');
    await store.db.insertInto('workspace').values({ id: ws, name: 'Acme', time_zone: 'UTC' }).execute();
    const settings = { smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), serverSavesSent: true };
    await store.db.insertInto('mailbox').values({ id: mb, workspace_id: ws, email: mailBed.alice.user, provider: 'smtp_imap', daily_cap: 30, settings: JSON.stringify(settings), time_zone: 'UTC' }).execute();
    await new Vault(store, localKeyWrapper(master)).put(ws, mb, { kind: 'password', username: mailBed.alice.user, password: mailBed.alice.pass });
    const leads: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = '00000000-0000-7000-8002-' + randomBytes(6).toString('hex');
      const p = mailBed.prospects[i % 5]!;
      const email = p.user.replace('@', `+pool${i}${tag}@`);
      leads.push(id);
      await store.db.insertInto('lead').values({ id, workspace_id: ws, email, email_norm: email, first_name: `Lee${i}`, time_zone: 'UTC' }).execute();
    }
    const def = validateDefinition({ key: 'paced', name: 'Paced', window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [mailBed.alice.user], steps: [{ key: 'intro', type: 'email', subject: `Hello {{first_name}} ${tag}`, body: 'Hi {{first_name}}' }] });
    const service = new EnrollmentService({ store, clock, random });
    const seq = await applyDefinition(store, { clock, random }, ws, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads });
    await service.fireDue(100);

    const pool = new SenderPool({ store, service, clock, random, vault: new Vault(store, localKeyWrapper(master)), trackingKey: trackingKey(master), publicUrl: 'https://cadenza.example.test', idlePollMs: 60_000, leaseTtlMs: 10 * 60_000,
      // Simulated minutes pass while a real SMTP exchange takes real milliseconds: the transport's
      // deadlines (on the injected clock) must not read that as a timeout.
      connectors: { smtpTimeouts: { totalMs: 24 * 3_600_000 } },
    });
    await pool.start();
    expect(pool.mailboxes).toEqual([mb]);
    const sentCount = async () => Number((await store.db.selectFrom('send_request').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'sent').executeTakeFirstOrThrow()).n);
    for (let i = 0; i < 14 * 60 && (await sentCount()) < 6; i++) {
      clock.advance(60_000);
      await new Promise((r) => setTimeout(r, 15));
    }
    // A loop idling in its (simulated) sleep ends at its next wake-up: keep time moving until stop returns.
    let stopped = false;
    const stopping = pool.stop().then(() => void (stopped = true));
    while (!stopped) {
      clock.advance(60_000);
      await new Promise((r) => setTimeout(r, 10));
    }
    await stopping;
    expect(await sentCount()).toBe(6);
    expect(await store.db.selectFrom('lease').selectAll().execute()).toEqual([]);

    const msgs = await store.db.selectFrom('message').select(['message_id', 'at']).where('direction', '=', 'outbound').orderBy('at').execute();
    const times = msgs.map((m) => m.at.getTime());
    // The gap is the claim's guard (dispatch/reserve.ts), so it is read on the claims: a message's
    // recorded time is when its SMTP exchange ended, and this clock moves a minute per 15 real ms,
    // so a slow exchange on a loaded machine shifts one record by minutes (CI read 7 minutes
    // between two records whose claims were 8 or more apart).
    const claims = (await store.db.selectFrom('send_request').select('claimed_at').where('state', '=', 'sent').orderBy('claimed_at').execute()).map((r) => r.claimed_at!.getTime());
    expect(claims).toHaveLength(6);
    for (let i = 1; i < claims.length; i++) expect(claims[i]! - claims[i - 1]!).toBeGreaterThanOrEqual(8 * 60_000);
    // Inside a human working day (about 08:40-17:20 local, jittered), never on an exact minute.
    for (const t of times) {
      const h = new Date(t).getUTCHours();
      expect(h).toBeGreaterThanOrEqual(8);
      expect(h).toBeLessThan(18);
    }
    // The planned instants are not on exact minutes (the test's clock moves in whole minutes, so the
    // recorded send times are).
    const planned = await store.db.selectFrom('send_request').select('send_at').execute();
    expect(planned.every((p) => p.send_at !== null && p.send_at.getTime() % 60_000 !== 0)).toBe(true);
    for (const m of msgs) {
      const row = await store.db.selectFrom('send_request as r').innerJoin('enrollment as e', 'e.id', 'r.enrollment_id').innerJoin('lead as l', 'l.id', 'e.lead_id').select('l.email').where('r.message_id', '=', m.message_id).executeTakeFirstOrThrow();
      const who = mailBed.prospects.find((p) => p.user === row.email.replace(/\+[^@]*/, ''))!;
      await readInbox(who.user, who.pass, m.message_id);
      expect(await countByMessageId(who.user, who.pass, m.message_id)).toBe(1);
    }
  }, 240_000);
});
