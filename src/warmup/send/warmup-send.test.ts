/**
 * The warmup network's sending side on the store: the day's plan made by the planning role from
 * the members' pacing (around the campaign sends the dispatcher planned), then a simulated day in
 * which each mailbox's campaign claims (reserveSlot) and warmup claims (sendDueWarmup) share one
 * bucket. The transport here records what it is handed and accepts it (the real SMTP path is the
 * mail-bed test beside this one); every recorded message is read back by the receiving side's own
 * verifier.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { Leases } from '../../ops/leases.ts';
import { Dispatcher } from '../../sending/dispatch/dispatcher.ts';
import type { Transport } from '../../mailbox/connectors/connector.ts';
import type { SendOutcome } from '../../mailbox/connectors/outcomes.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { allDay, claimAndSend, markSent, seed } from '../../../test/dispatch/seed.ts';
import { setWarmup } from '../membership.ts';
import { writeDayPlan } from '../plan-store.ts';
import { planWarmupPools, WARMUP_PLAN_LEASE, WarmupPlanRole } from '../plan-role.ts';
import { warmupFieldsOf } from '../receive/receive.ts';
import { verifyWarmup } from '../text/marker.ts';
import { scheduleWarmupReply } from './replies.ts';
import { sendDueWarmup, warmupDueAt } from './warmup-sender.ts';

const MIN = 60_000;
const DAY = 86_400_000;
const TUE_0500_UTC = Date.UTC(2026, 5, 2, 5, 0);
const KEY = Buffer.alloc(32, 7);
const CAP = 14;
const GAP_MIN = 5 * MIN;
/** The last mailbox's cap is halved by its warmup cap factor. */
const capOf = (i: number) => (i === 3 ? CAP / 2 : CAP);

class Recorder implements Pick<Transport, 'send'> {
  readonly sent: Array<{ raw: Buffer; to: string[]; messageId: string }> = [];
  answer: SendOutcome['kind'] = 'accepted';
  async send(raw: Buffer, envelope: { from: string; to: string[] }, ctx: { messageId: string }): Promise<SendOutcome> {
    this.sent.push({ raw, to: envelope.to, messageId: ctx.messageId });
    if (this.answer === 'transient') return { kind: 'transient', phase: 'data', reason: '451 try later', responseCode: 451, retryAfterMs: null } as SendOutcome;
    return { kind: 'accepted', response: '250 ok', providerId: null, bounced: [], sentCopy: 'none' } as unknown as SendOutcome;
  }
}

describe.each(testBackends())('warmup sending on %s', (backend) => {
  let store: TestStore;
  const ids: string[] = [];
  beforeAll(async () => {
    store = await freshStore(backend);
    const now = TUE_0500_UTC - 30 * DAY;
    const pacing = { ...allDay, gapMinutes: [5, 9] };
    // Two workspaces of two mailboxes, four domains, two providers: the planner has pairs to make.
    // The first mailbox's campaign: 6 sends claimed early today, 6 more due now (the dispatcher plans them).
    const a = await seed(store, {
      now,
      workspaceZone: 'UTC',
      mailboxes: [{ zone: 'UTC', dailyCap: CAP, pacing }, { zone: 'UTC', dailyCap: CAP, pacing }],
      sequences: [{ window: 'mon-sun 00:00-24:00', pool: [0, 1] }],
      requests: Array.from({ length: 12 }, () => ({ mailbox: 0, dueAt: TUE_0500_UTC, leadZone: 'UTC' })),
    });
    await markSent(store, a.requestIds.slice(0, 6), [0, 1, 2, 3, 4, 5].map((i) => TUE_0500_UTC - 4 * 3_600_000 + i * 10 * MIN));
    const b = await seed(store, { now, seed: 8, workspaceZone: 'UTC', mailboxes: [{ zone: 'UTC', dailyCap: CAP, pacing }, { zone: 'UTC', dailyCap: CAP, pacing }], sequences: [], requests: [] });
    ids.push(...a.mailboxIds, ...b.mailboxIds);
    const names = ['Anna Alpha', 'Ben Beta', 'Clara Gamma', 'Dan Delta'];
    const emails = ['anna@alpha.test', 'ben@beta.test', 'clara@gamma.test', 'dan@delta.test'];
    for (const [i, id] of ids.entries()) {
      await sql`update mailbox set email = ${emails[i]}, display_name = ${names[i]}, provider = ${i % 2 ? 'gmail' : 'graph'} where id = ${id}`.execute(store.db);
      await setWarmup(store.db, i < 2 ? a.workspaceId : b.workspaceId, id, { enabled: true, target: 40 }, now);
    }
    // The last mailbox's placement warned: its cap is halved (7), for warmup as for campaign mail.
    await sql`update warmup_member set cap_factor = 0.5, cap_reason = 'warmup placement 70%' where mailbox_id = ${ids[3]}`.execute(store.db);
    const report = await new Dispatcher({ store, clock: new SimClock(TUE_0500_UTC) }).runOnce();
    expect(report).toMatchObject({ planned: 6 });
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('plans the day once, under the lease, from each mailbox pacing: warmup within what the cap leaves', async () => {
    const clock = new SimClock(TUE_0500_UTC);
    const random = seededRandom(3);
    // Another process holds the lease: nothing is planned here.
    await new Leases(store, clock).acquire(WARMUP_PLAN_LEASE, 'other', 60_000);
    expect(await planWarmupPools({ store, clock, random, owner: 'me' })).toBeNull();
    clock.advanceTo(TUE_0500_UTC + 2 * MIN);
    const days = await planWarmupPools({ store, clock, random, owner: 'me' });
    expect(days).toHaveLength(1);
    const day = days![0]!;
    expect('planned' in day && day.planned).toBeGreaterThan(0);
    const rows = (await sql<{ sender_mailbox_id: string; planned_at: Date; message_id: string }>`select sender_mailbox_id, planned_at, message_id from warmup_mail where kind = 'first' order by planned_at`.execute(store.db)).rows;
    const campaign = (await sql<{ send_at: Date }>`select send_at from send_request where state = 'queued'`.execute(store.db)).rows.map((r) => r.send_at.getTime());
    expect(campaign).toHaveLength(6);
    for (const [i, id] of ids.entries()) {
      const mine = rows.filter((r) => r.sender_mailbox_id === id).map((r) => r.planned_at.getTime());
      // The first mailbox: 6 sent and 6 planned of its 14 leave 2 for warmup, kept apart from the campaign's slots.
      expect(mine.length).toBeLessThanOrEqual(capOf(i) - (i === 0 ? 12 : 0));
      if (i === 0) for (const t of mine) for (const s of campaign) expect(Math.abs(t - s)).toBeGreaterThanOrEqual(GAP_MIN);
      for (let i = 1; i < mine.length; i++) expect(mine[i]! - mine[i - 1]!).toBeGreaterThanOrEqual(GAP_MIN);
      for (const t of mine) expect(t).toBeGreaterThanOrEqual(TUE_0500_UTC);
    }
    const record = await store.db.selectFrom('warmup_plan_day').selectAll().executeTakeFirstOrThrow();
    expect(record).toMatchObject({ pool: 'default', sends: rows.length });
    // A second pass the same day (another tick, a restart) plans nothing more.
    expect(await planWarmupPools({ store, clock, random, owner: 'me' })).toEqual([{ pool: 'default', skipped: 'already planned' }]);
  });

  it('a simulated day: warmup and campaign sends together keep each mailbox cap and gap; each planned mail sent once, and it verifies', async () => {
    const clock = new SimClock(TUE_0500_UTC + 2 * MIN);
    const transport = new Recorder();
    // Three more warmup mails for the first mailbox, planned among its campaign slots: with its 6
    // sent and 6 planned campaign mails they ask for 15 of its 14, and the shared bucket must hold.
    const members = new Map(ids.map((id, i) => [id, { address: ['anna@alpha.test', 'ben@beta.test', 'clara@gamma.test', 'dan@delta.test'][i]!, mailboxId: id }]));
    const extra = [9, 12, 16].map((h) => ({ sender: ids[0]!, receiver: ids[2]!, at: Math.floor(TUE_0500_UTC / DAY) * DAY + h * 3_600_000 }));
    await writeDayPlan(store.db, 'default', extra, members, seededRandom(11));
    // Every mailbox, every 3 minutes of the rest of the day: its campaign claim first, then warmup.
    // The idle send loop's reader (warmupDueAt) must say due whenever a warmup mail goes out: a
    // loop that trusted a later instant would leave it unsent.
    const end = Math.floor(TUE_0500_UTC / DAY) * DAY + DAY;
    const dueAt = warmupDueAt({ store, clock });
    const sentWhenDue: boolean[] = [];
    for (let now = clock.now(); now < end; now += 3 * MIN) {
      clock.advanceTo(now);
      for (const id of ids) {
        await claimAndSend(store, id, now);
        const due = await dueAt(id);
        const step = await sendDueWarmup({ store, clock, transport, keyFor: () => KEY }, id);
        if (step.kind === 'sent' || step.kind === 'failed') sentWhenDue.push(due !== null && due <= now);
      }
    }
    expect(sentWhenDue.length).toBeGreaterThan(0);
    expect(sentWhenDue.every(Boolean)).toBe(true);
    // Once the day's mail is out (or stale), nothing is due for anyone.
    for (const id of ids) expect(await dueAt(id)).toBeNull();
    const claims = (await sql<{ mailbox_id: string; at: Date }>`
      select mailbox_id, claimed_at as at from send_request where claimed_at is not null
      union all select sender_mailbox_id, claimed_at from warmup_mail where claimed_at is not null`.execute(store.db)).rows;
    for (const [i, id] of ids.entries()) {
      const mine = claims.filter((c) => c.mailbox_id === id).map((c) => c.at.getTime()).sort((x, y) => x - y);
      expect(mine.length).toBeLessThanOrEqual(capOf(i));
      for (let i = 1; i < mine.length; i++) expect(mine[i]! - mine[i - 1]!).toBeGreaterThanOrEqual(GAP_MIN);
    }
    // The first mailbox's cap is filled exactly, campaign and warmup sends together; one waits.
    const first = claims.filter((c) => c.mailbox_id === ids[0] && c.at.getTime() >= Math.floor(TUE_0500_UTC / DAY) * DAY);
    expect(first).toHaveLength(CAP);
    expect((await sql<{ n: number }>`select count(*)::int as n from warmup_mail where sender_mailbox_id = ${ids[0]} and claimed_at is not null`.execute(store.db)).rows[0]!.n).toBeGreaterThan(0);
    const planned = (await sql<{ n: number }>`select count(*)::int as n from warmup_mail where pool = 'default' and sent_at is not null`.execute(store.db)).rows[0]!.n;
    expect(planned).toBeGreaterThan(0);
    expect(transport.sent).toHaveLength(planned);
    expect(new Set(transport.sent.map((s) => s.messageId)).size).toBe(transport.sent.length);
    for (const s of transport.sent) {
      const read = (await warmupFieldsOf(s.raw))!;
      expect(read.fields.fromName).not.toBe('');
      expect(verifyWarmup(KEY, { subject: read.subject, body: read.body }, read.fields).warmup).toBe(true);
    }
  });

  it('a scheduled reply goes out once, in thread, and verifies as a reply; a transient failure is retried later', async () => {
    const first = (await sql<{ message_id: string; sender_address: string; receiver_mailbox_id: string; receiver_address: string }>`
      select message_id, sender_address, receiver_mailbox_id, receiver_address from warmup_mail where pool = 'default' and sent_at is not null limit 1`.execute(store.db)).rows[0]!;
    const at = Date.UTC(2026, 5, 3, 9, 0);
    const plan = { pool: 'default', senderMailboxId: first.receiver_mailbox_id, senderAddress: first.receiver_address, to: first.sender_address, toName: 'Anna', inReplyTo: first.message_id, subject: 'Quick hello', language: 'de' as const, at };
    const random = seededRandom(4);
    expect(await scheduleWarmupReply(store.db, plan, random)).not.toBeNull();
    expect(await scheduleWarmupReply(store.db, plan, random)).toBeNull();
    // Syncs racing on one mail (on PostgreSQL, separate connections): still one reply planned.
    const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => scheduleWarmupReply(store.db, { ...plan, inReplyTo: `<raced-${first.message_id}>` }, seededRandom(100 + i))));
    expect(raced.filter((r) => r !== null)).toHaveLength(1);
    await sql`delete from warmup_mail where in_reply_to = ${`<raced-${first.message_id}>`}`.execute(store.db);
    const clock = new SimClock(at + MIN);
    const transport = new Recorder();
    transport.answer = 'transient';
    expect(await sendDueWarmup({ store, clock, transport, keyFor: () => KEY }, first.receiver_mailbox_id)).toMatchObject({ kind: 'failed', outcome: 'transient' });
    transport.answer = 'accepted';
    expect(await sendDueWarmup({ store, clock, transport, keyFor: () => KEY }, first.receiver_mailbox_id)).toEqual({ kind: 'idle' });
    clock.advanceTo(at + 20 * MIN);
    expect(await sendDueWarmup({ store, clock, transport, keyFor: () => KEY }, first.receiver_mailbox_id)).toMatchObject({ kind: 'sent' });
    expect(await sendDueWarmup({ store, clock, transport, keyFor: () => KEY }, first.receiver_mailbox_id)).toEqual({ kind: 'idle' });
    expect(transport.sent).toHaveLength(2);
    expect(transport.sent[0]!.messageId).toBe(transport.sent[1]!.messageId); // the retry is the same message
    const text = transport.sent[1]!.raw.toString();
    expect(text).toContain(`In-Reply-To: ${first.message_id}`);
    expect(text).toContain(`References: ${first.message_id}`);
    expect(text).toContain('Subject: Re: Quick hello');
    const read = (await warmupFieldsOf(transport.sent[1]!.raw))!;
    expect(verifyWarmup(KEY, { body: read.body }, read.fields)).toEqual({ warmup: true, language: 'de' });
  });

  it('the role plans each new day on its hourly tick, once', async () => {
    const clock = new SimClock(Date.UTC(2026, 5, 4, 5, 0));
    const role = new WarmupPlanRole({ store, clock, random: seededRandom(6), owner: 'me', everyMs: 3_600_000 });
    const firstsOn = async (day: number) =>
      (await sql<{ n: number }>`select count(*)::int as n from warmup_mail where kind = 'first' and pool = 'default' and planned_at >= ${new Date(day)} and planned_at < ${new Date(day + DAY)}`.execute(store.db)).rows[0]!.n;
    const thu = Date.UTC(2026, 5, 4);
    // A fresh history: the pool's four members paired on Tuesday, and a pair waits 7 days.
    await sql`delete from warmup_mail`.execute(store.db);
    await sql`delete from warmup_plan_day`.execute(store.db);
    role.start();
    await vi.waitFor(async () => expect(await firstsOn(thu)).toBeGreaterThan(0));
    const n = await firstsOn(thu);
    const tick = async () => {
      clock.advance(3_600_000);
      await new Promise((r) => setTimeout(r, 30));
    };
    // Hourly ticks the same day add nothing.
    for (let h = 0; h < 10; h++) await tick();
    expect(await firstsOn(thu)).toBe(n);
    // The first tick of Friday plans Friday (Thursday's pairs forgotten here, or the cooldown would leave none).
    await sql`delete from warmup_mail`.execute(store.db);
    clock.advanceTo(thu + DAY + 5 * 3_600_000);
    await vi.waitFor(async () => expect(await firstsOn(thu + DAY)).toBeGreaterThan(0));
    role.stop();
  });
});
