/**
 * The recogniser plans a warmup reply in the receiving mailbox's own working hours, as pacing
 * reads them (its zone, working days, day start and end, lunch): mail that lands at 23:00 in the
 * receiver's zone is answered the next working morning, mail of a Friday night on Monday, and a
 * mailbox whose pacing settings cannot be read records the mail but plans no reply.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { seed } from '../../../test/dispatch/seed.ts';
import { setWarmup } from '../membership.ts';
import { warmupPoolKey, writeWarmup } from '../text/marker.ts';
import { warmupRecogniser } from './recogniser.ts';

const MIN = 60_000;
const MASTER = Buffer.alloc(32, 5);
const KEY = warmupPoolKey(MASTER, 'default');
const PEER = 'anna@peer.test';
const REP = 'rep0@acme.test';
/** Berlin is UTC+1 in December: 23:00 there is 22:00 UTC. */
const TUE_2300_BERLIN = Date.UTC(2026, 11, 1, 22, 0);
const WED_0900_BERLIN = Date.UTC(2026, 11, 2, 8, 0);
const FRI_2300_BERLIN = Date.UTC(2026, 11, 4, 22, 0);
const MON_0900_BERLIN = Date.UTC(2026, 11, 7, 8, 0);
/** Mon-Fri 09:00-17:00, exactly (no jitter), no lunch. */
const OFFICE = { dayStart: '09:00', dayEnd: '17:00', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5], lunch: null };

describe.each(testBackends())('warmup replies in the receiver working hours on %s', (backend) => {
  let store: TestStore;
  let receiver: { workspaceId: string; id: string };
  const clock = new SimClock(TUE_2300_BERLIN);
  let n = 0;

  beforeAll(async () => {
    store = await freshStore(backend);
    const now = TUE_2300_BERLIN - 30 * 86_400_000;
    // The receiver's zone is its own; its workspace's (New York) must not be the one used.
    const r = await seed(store, { now, workspaceZone: 'America/New_York', mailboxes: [{ zone: 'Europe/Berlin', pacing: OFFICE }], sequences: [], requests: [] });
    const p = await seed(store, { now, seed: 9, workspaceZone: 'UTC', mailboxes: [{ zone: 'UTC' }], sequences: [], requests: [] });
    await sql`update mailbox set email = ${PEER} where id = ${p.mailboxIds[0]}`.execute(store.db);
    receiver = { workspaceId: r.workspaceId, id: r.mailboxIds[0]! };
    await setWarmup(store.db, p.workspaceId, p.mailboxIds[0]!, { enabled: true }, now);
    await setWarmup(store.db, r.workspaceId, receiver.id, { enabled: true }, now);
  });
  afterAll(async () => {
    await store.destroy();
  });

  /** A warmup mail from the peer received now; the instant its reply is planned for (null: none). */
  async function receive(at: number): Promise<number | null> {
    clock.advanceTo(at);
    const messageId = `<w${++n}@peer.test>`;
    const t = writeWarmup(KEY, 'en', { from: PEER, to: REP, messageId, fromName: 'Anna', toName: 'Pat' });
    const raw = [`From: Anna Berg <${PEER}>`, `To: Pat Rep <${REP}>`, `Subject: ${t.subject}`, `Message-ID: ${messageId}`, `Date: ${new Date(at).toUTCString()}`, 'Content-Type: text/plain; charset=utf-8', '', t.body].join('\r\n');
    const recogniser = warmupRecogniser({ db: store.db, master: MASTER, clock, random: seededRandom(`reply-${n}`), reply: { share: 1 } });
    const took = await recogniser.take(
      receiver,
      [{ fetched: { key: `INBOX:${n}`, folder: 'inbox', raw: new TextEncoder().encode(raw), threadId: null, receivedAt: at }, from: PEER }],
      null,
    );
    expect(took).toEqual(new Set([0]));
    const reply = await store.db.selectFrom('warmup_mail').select('planned_at').where('in_reply_to', '=', messageId).executeTakeFirst();
    return reply ? reply.planned_at.getTime() : null;
  }

  it('a mail received at 23:00 in the receiver zone is answered the next working morning', async () => {
    const at = await receive(TUE_2300_BERLIN);
    expect(at).not.toBeNull();
    expect(at!).toBeGreaterThanOrEqual(WED_0900_BERLIN);
    expect(at!).toBeLessThan(WED_0900_BERLIN + 10 * MIN);
  });

  it('a mail of Friday night waits for Monday morning; one at 10:00 is answered within the delay', async () => {
    const at = await receive(FRI_2300_BERLIN);
    expect(at!).toBeGreaterThanOrEqual(MON_0900_BERLIN);
    expect(at!).toBeLessThan(MON_0900_BERLIN + 10 * MIN);
    const mon10 = MON_0900_BERLIN + 60 * MIN;
    const soon = await receive(mon10);
    expect(soon! - mon10).toBeGreaterThanOrEqual(20 * MIN);
    expect(soon! - mon10).toBeLessThan(3 * 60 * MIN);
  });

  it('a receiver whose pacing settings cannot be read records the mail and plans no reply', async () => {
    await sql`update mailbox set settings = ${JSON.stringify({ pacing: { dayStart: 'noon' } })} where id = ${receiver.id}`.execute(store.db);
    try {
      expect(await receive(MON_0900_BERLIN + 2 * 60 * MIN)).toBeNull();
      expect(await store.db.selectFrom('warmup_mail').select('id').where('message_id', '=', `<w${n}@peer.test>`).where('received_folder', '=', 'inbox').execute()).toHaveLength(1);
    } finally {
      await sql`update mailbox set settings = ${JSON.stringify({ pacing: OFFICE })} where id = ${receiver.id}`.execute(store.db);
    }
  });
});
