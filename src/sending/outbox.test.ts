import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { CrashPlugin, crashingStore, insertInto, isSimCrash } from '../sim/faults.ts';
import { openStore, type Store } from '../store/store.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { makeWorld, type World } from '../../test/fixtures/world.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { twoEmailsDefinition } from '../../test/fixtures/two-emails.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import {
  claimNext,
  defaultRetryPolicy,
  lastLook,
  listUnknown,
  markUnknown,
  recordBounce,
  recordFailure,
  recordSent,
  recordSentBatch,
  recordSentWithBounces,
  recoverInFlight,
  resendByHand,
  resolveUnknown,
  retryDelay,
  type Claim,
  type OutboxDeps,
} from './outbox.ts';
import { SentRecorder } from './sent-recorder.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0); // Monday 1 June 2026
const MIN = 60_000;

const def = twoEmailsDefinition();

describe('retryDelay', () => {
  it('grows exponentially with the attempts, is capped, and jitters within [half, full)', () => {
    const r = seededRandom(3);
    const p = { ...defaultRetryPolicy, baseMs: 1000, maxMs: 60_000 };
    for (let attempts = 1; attempts <= 12; attempts++) {
      const full = Math.min(60_000, 1000 * 2 ** (attempts - 1));
      for (let i = 0; i < 50; i++) {
        const d = retryDelay(attempts, r, p);
        expect(d).toBeGreaterThanOrEqual(full / 2);
        expect(d).toBeLessThan(full);
      }
    }
    // The same seed gives the same delays (replayable).
    expect(retryDelay(4, seededRandom(9), p)).toBe(retryDelay(4, seededRandom(9), p));
  });
});

describe.each(testBackends())('outbox on %s', (backend) => {
  let store: TestStore;
  let clock: SimClock;
  let world: World;
  let service: EnrollmentService;
  let deps: OutboxDeps;
  const random = seededRandom(21);

  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  /** n leads enrolled, their first step fired: n queued requests due now in rep0's queue. */
  async function setup(n: number, over: Store = store) {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    clock = new SimClock(T0);
    world = await makeWorld(store, { leads: n, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    const seq = await applyDefinition(store, { clock, random }, world.workspaceId, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seq.sequenceId, leadIds: world.leadIds });
    service = new EnrollmentService({ store: over, clock, random });
    while ((await service.fireDue(100)).length) {
      /* drain */
    }
    deps = { store: over, service, clock, random, proof: 'provider_copy', policy: { baseMs: MIN, maxMs: 60 * MIN, maxAttempts: 4, unknownGraceMs: 10 * MIN } };
    return { mailboxId: world.mailboxIds[0]!, sequenceId: seq.sequenceId };
  }

  const request = (id: string) => store.db.selectFrom('send_request').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const enrollment = (id: string) => store.db.selectFrom('enrollment').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  async function claim(mailboxId: string): Promise<Claim> {
    const r = await claimNext(deps, mailboxId);
    if (r.kind !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(r)}`);
    return r.claim;
  }

  it('claims the oldest due request once, in flight with a Message-ID of the mailbox domain', async () => {
    const { mailboxId } = await setup(3);
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const c = await claim(mailboxId);
      expect(seen.has(c.requestId)).toBe(false);
      seen.add(c.requestId);
      expect(c.messageId).toMatch(/^<[0-9a-f-]{36}@acme\.test>$/);
      expect(c.attempts).toBe(1);
      expect(c.from).toBe('rep0@acme.test');
      expect(c.dueAt).toBeLessThanOrEqual(c.claimedAt);
      const row = await request(c.requestId);
      expect(row.state).toBe('in_flight');
      expect(row.message_id).toBe(c.messageId);
    }
    expect((await claimNext(deps, mailboxId)).kind).toBe('empty');
  });

  it('does not claim a request before it is due', async () => {
    const { mailboxId } = await setup(1);
    await store.db.updateTable('send_request').set({ due_at: new Date(T0 + 5 * MIN) }).execute();
    expect((await claimNext(deps, mailboxId)).kind).toBe('empty');
    clock.advance(5 * MIN);
    expect((await claimNext(deps, mailboxId)).kind).toBe('claimed');
  });

  it('records a send atomically: request sent, outbound message, next step planned; a second report changes nothing', async () => {
    const { mailboxId } = await setup(1);
    const c = await claim(mailboxId);
    clock.advance(1000);
    expect(await recordSent(deps, c, clock.now(), { subject: 'Hi' })).toBe(true);
    expect((await request(c.requestId)).state).toBe('sent');
    const msgs = await store.db.selectFrom('message').selectAll().execute();
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatchObject({ direction: 'outbound', message_id: c.messageId, enrollment_id: c.enrollmentId, send_request_id: c.requestId, to_addrs: [c.to] });
    const e = await enrollment(c.enrollmentId);
    expect(e.waiting_for).toBe('timer');
    expect(e.done_step_ids).toEqual([c.stepId]);
    expect(e.due_at!.getTime()).toBeGreaterThanOrEqual(clock.now() + 2 * 86_400_000);

    expect(await recordSent(deps, c, clock.now())).toBe(false);
    const journal = await store.db.selectFrom('event').select('type').where('enrollment_id', '=', c.enrollmentId).execute();
    expect(journal.filter((j) => j.type === 'step_sent')).toHaveLength(1);
    expect(await store.db.selectFrom('message').selectAll().execute()).toHaveLength(1);
  });

  it('records many sends in one transaction (recordSentBatch): each once, with its row and step_sent; a repeat changes nothing', async () => {
    const { mailboxId } = await setup(4);
    const claims = [await claim(mailboxId), await claim(mailboxId), await claim(mailboxId), await claim(mailboxId)];
    clock.advance(1000);
    expect(await recordSent(deps, claims[0]!, clock.now())).toBe(true);
    expect(await recordSentBatch(deps, claims.map((c) => ({ claim: c, sentAt: clock.now(), details: { subject: 'Hi', refs: ['<a@x>', '<b@x>'] } })))).toEqual([false, true, true, true]);
    for (const c of claims) {
      expect((await request(c.requestId)).state).toBe('sent');
      expect((await enrollment(c.enrollmentId)).waiting_for).toBe('timer');
    }
    const msgs = await store.db.selectFrom('message').selectAll().orderBy('send_request_id').execute();
    expect(msgs.map((m) => m.send_request_id).sort()).toEqual(claims.map((c) => c.requestId).sort());
    expect(msgs.find((m) => m.send_request_id === claims[1]!.requestId)).toMatchObject({ message_id: claims[1]!.messageId, to_addrs: [claims[1]!.to], refs: ['<a@x>', '<b@x>'], subject: 'Hi', direction: 'outbound' });
    expect(await recordSentBatch(deps, claims.map((c) => ({ claim: c, sentAt: clock.now() })))).toEqual([false, false, false, false]);
    const journal = await store.db.selectFrom('event').select('type').where('type', '=', 'step_sent').execute();
    expect(journal).toHaveLength(4);
  });

  it('the group commit (SentRecorder) records concurrent sends together, and a failing batch send by send', async () => {
    const plugin = new CrashPlugin();
    const { mailboxId } = await setup(6);
    const claims: Claim[] = [];
    for (let i = 0; i < 6; i++) claims.push(await claim(mailboxId));
    const over = crashingStore(store, plugin);
    const recorder = new SentRecorder({ ...deps, store: over, service: new EnrollmentService({ store: over, clock, random }) });
    // The first send commits alone; the five that came while it committed go in one transaction,
    // which crashes once at its journal: each is then recorded on its own.
    const first = recorder.record({ claim: claims[0]!, sentAt: clock.now() });
    plugin.armWhen(insertInto('event'), 'journal of the batch');
    const rest = claims.slice(1).map((c) => recorder.record({ claim: c, sentAt: clock.now() }));
    expect(await Promise.all([first, ...rest])).toEqual([true, true, true, true, true, true]);
    expect(plugin.armed).toBe(false); // the crash did happen
    for (const c of claims) expect((await request(c.requestId)).state).toBe('sent');
    expect(await store.db.selectFrom('message').selectAll().execute()).toHaveLength(6);
    expect(await store.db.selectFrom('event').select('type').where('type', '=', 'step_sent').execute()).toHaveLength(6);
  });

  it('leaves nothing of a send record that crashed half-way (request still in flight, no message, no step_sent)', async () => {
    const plugin = new CrashPlugin();
    await setup(1);
    const over = crashingStore(store, plugin);
    deps = { ...deps, store: over, service: new EnrollmentService({ store: over, clock, random }) };
    const c = await claim(world.mailboxIds[0]!);
    plugin.armWhen(insertInto('event'), 'journal of step_sent');
    await expect(recordSent(deps, c, clock.now())).rejects.toSatisfy(isSimCrash);
    expect((await request(c.requestId)).state).toBe('in_flight');
    expect(await store.db.selectFrom('message').selectAll().execute()).toHaveLength(0);
    expect((await enrollment(c.enrollmentId)).waiting_for).toBe('send');
    // After the restart the request is unknown, found in the Sent folder, and recorded once.
    expect(await recoverInFlight(deps, c.mailboxId)).toBe(1);
    const [u] = await listUnknown(deps, c.mailboxId);
    expect(await resolveUnknown(deps, u!, { sentAt: clock.now() })).toBe('sent');
    expect((await request(c.requestId)).state).toBe('sent');
    expect((await enrollment(c.enrollmentId)).waiting_for).toBe('timer');
  });

  it('refuses a request whose enrollment stopped between queueing and claiming, and cancels it with the reason', async () => {
    const { mailboxId } = await setup(2);
    const [a, b] = await store.db.selectFrom('send_request').select(['id', 'enrollment_id']).orderBy('due_at').orderBy('id').execute();
    // The row changed under the queue (another writer, an older version): the re-check must see it.
    await store.db.updateTable('enrollment').set({ state: 'stopped', waiting_for: null }).where('id', '=', a!.enrollment_id).execute();
    const r = await claimNext(deps, mailboxId);
    expect(r).toMatchObject({ kind: 'refused', requestId: a!.id, reason: 'enrollment stopped' });
    const row = await request(a!.id);
    expect(row.state).toBe('cancelled');
    expect(row.last_error).toBe('enrollment stopped');
    expect(row.attempts).toBe(0);
    // The next call goes on with the next request.
    expect((await claim(mailboxId)).requestId).toBe(b!.id);
  });

  it('refuses a request requeued after an unknown outcome when a reply stopped the enrollment meanwhile', async () => {
    const { mailboxId } = await setup(1);
    const c = await claim(mailboxId);
    await markUnknown(deps, c, 'timeout after DATA');
    await service.apply(c.enrollmentId, { type: 'reply', messageId: '<r@prospect.test>' });
    // The unknown request is not touched by the stop: it may have been sent.
    expect((await request(c.requestId)).state).toBe('unknown');
    clock.advance(11 * MIN);
    const [u] = await listUnknown(deps, mailboxId);
    expect(await resolveUnknown(deps, u!, null)).toBe('requeued');
    const r = await claimNext(deps, mailboxId);
    expect(r).toMatchObject({ kind: 'refused', reason: 'enrollment replied' });
    expect((await request(c.requestId)).state).toBe('cancelled');
  });

  it('refuses a request whose address was suppressed after queueing, and stops the enrollment in the same transaction', async () => {
    const { mailboxId } = await setup(1);
    const [req] = await store.db.selectFrom('send_request').innerJoin('enrollment as e', 'e.id', 'send_request.enrollment_id').innerJoin('lead as l', 'l.id', 'e.lead_id').select(['send_request.id', 'e.id as enrollment_id', 'l.email_norm']).execute();
    await store.db.insertInto('suppression').values({ workspace_id: world.workspaceId, email_norm: req!.email_norm, reason: 'manual', source: 'do-not-contact list' }).execute();
    const r = await claimNext(deps, mailboxId);
    expect(r).toMatchObject({ kind: 'refused', reason: 'address suppressed (manual)' });
    expect(await request(req!.id)).toMatchObject({ state: 'cancelled', last_error: 'address suppressed (manual)' });
    const e = await enrollment(req!.enrollment_id);
    expect(e.state).toBe('stopped');
    expect(e.state_reason).toBe('address suppressed');
  });

  it('the last look before the transport refuses a claim whose enrollment got a reply after the claim', async () => {
    const { mailboxId } = await setup(1);
    const c = await claim(mailboxId);
    expect(await lastLook(deps, c)).toEqual({ ok: true });
    await service.apply(c.enrollmentId, { type: 'reply' });
    const look = await lastLook(deps, c);
    expect(look).toEqual({ ok: false, reason: 'enrollment replied' });
    expect((await request(c.requestId)).state).toBe('cancelled');
  });

  it('resolves an unknown request from the Sent folder: found -> sent; not found -> waits, then requeued with the same Message-ID', async () => {
    const { mailboxId } = await setup(2);
    const c1 = await claim(mailboxId);
    const c2 = await claim(mailboxId);
    await markUnknown(deps, c1, 'connection dropped after DATA');
    await markUnknown(deps, c2, 'connection dropped after DATA');
    const unknown = await listUnknown(deps, mailboxId);
    expect(unknown.map((u) => u.requestId).sort()).toEqual([c1.requestId, c2.requestId].sort());
    const u1 = unknown.find((u) => u.requestId === c1.requestId)!;
    const u2 = unknown.find((u) => u.requestId === c2.requestId)!;
    expect(await resolveUnknown(deps, u1, { sentAt: T0 })).toBe('sent');
    expect((await request(c1.requestId)).state).toBe('sent');
    expect(await resolveUnknown(deps, u2, null)).toBe('waiting');
    expect((await request(c2.requestId)).state).toBe('unknown');
    clock.advance(10 * MIN);
    expect(await resolveUnknown(deps, u2, null)).toBe('requeued');
    const again = await claim(mailboxId);
    expect(again.requestId).toBe(c2.requestId);
    expect(again.messageId).toBe(c2.messageId);
    expect(again.attempts).toBe(2);
  });

  it('copy_first (Cadenza writes Sent before the handover): no copy -> requeued; a pending copy -> possibly_sent after the grace period, never requeued', async () => {
    const { mailboxId } = await setup(2);
    deps = { ...deps, proof: 'copy_first' };
    const c1 = await claim(mailboxId);
    const c2 = await claim(mailboxId);
    expect((await request(c1.requestId)).proof).toBe('copy_first');
    expect(await recoverInFlight(deps, mailboxId)).toBe(2);
    const unknown = await listUnknown(deps, mailboxId);
    const u1 = unknown.find((u) => u.requestId === c1.requestId)!;
    const u2 = unknown.find((u) => u.requestId === c2.requestId)!;
    expect(await resolveUnknown(deps, u2, { sentAt: T0, pending: true })).toBe('waiting');
    clock.advance(10 * MIN);
    expect(await resolveUnknown(deps, u1, null)).toBe('requeued');
    expect(await resolveUnknown(deps, u2, { sentAt: T0, pending: true })).toBe('possibly_sent');
    const row = await request(c2.requestId);
    expect(row.state).toBe('possibly_sent');
    expect(row.last_error).toMatch(/^possibly sent: /);
    // The sequence continues as if it were sent: the next step waits on its timer, threaded on the Message-ID.
    expect((await enrollment(c2.enrollmentId)).waiting_for).toBe('timer');
    const out = await store.db.selectFrom('message').selectAll().where('send_request_id', '=', c2.requestId).execute();
    expect(out.map((m) => m.message_id)).toEqual([c2.messageId]);
    // Never claimed again automatically: the requeued one is, the possibly-sent one is not.
    expect((await claim(mailboxId)).requestId).toBe(c1.requestId);
    expect((await claimNext(deps, mailboxId)).kind).toBe('empty');
  });

  it('absence that proves nothing (claimed before 0019, or an SMTP server not yet seen filing copies) -> possibly_sent, never requeued', async () => {
    const { mailboxId } = await setup(2);
    deps = { ...deps, proof: undefined };
    const c1 = await claim(mailboxId);
    deps = { ...deps, proof: 'provider_copy', providerCopyTrusted: async () => false };
    const c2 = await claim(mailboxId);
    expect((await request(c1.requestId)).proof).toBeNull();
    await markUnknown(deps, c1, 'sender stopped');
    await markUnknown(deps, c2, 'sender stopped');
    clock.advance(10 * MIN);
    for (const u of await listUnknown(deps, mailboxId)) expect(await resolveUnknown(deps, u, null)).toBe('possibly_sent');
    expect((await request(c1.requestId)).state).toBe('possibly_sent');
    expect((await request(c2.requestId)).last_error).toContain('has not yet been seen filing');
    expect((await claimNext(deps, mailboxId)).kind).toBe('empty');
  });

  it('a resend by hand of a possibly-sent step: queued again under the same Message-ID, claimed although the enrollment moved on, recorded without advancing it; refused once the enrollment stopped', async () => {
    const { mailboxId } = await setup(2);
    deps = { ...deps, proof: undefined };
    const c1 = await claim(mailboxId);
    const c2 = await claim(mailboxId);
    await markUnknown(deps, c1, 'x');
    await markUnknown(deps, c2, 'x');
    clock.advance(10 * MIN);
    for (const u of await listUnknown(deps, mailboxId)) await resolveUnknown(deps, u, null);
    expect(await resendByHand(deps, world.workspaceId, c2.requestId)).toEqual({ ok: true, mailboxId });
    expect(await resendByHand(deps, world.workspaceId, c2.requestId)).toEqual({ ok: false, reason: 'not_possibly_sent' });
    const again = await claim(mailboxId);
    expect(again).toMatchObject({ requestId: c2.requestId, messageId: c2.messageId, manualResend: true });
    expect(await lastLook(deps, again)).toEqual({ ok: true });
    const before = await enrollment(c2.enrollmentId);
    expect(await recordSent(deps, again, clock.now())).toBe(true);
    const after = await enrollment(c2.enrollmentId);
    expect(after.next_step_id).toBe(before.next_step_id);
    expect(after.due_at?.getTime()).toBe(before.due_at?.getTime());
    // A reply stops the other enrollment: its possibly-sent step may not be sent again.
    await service.apply(c1.enrollmentId, { type: 'reply' });
    expect(await resendByHand(deps, world.workspaceId, c1.requestId)).toEqual({ ok: false, reason: 'enrollment_stopped' });
    expect(await resendByHand(deps, world.workspaceId, '00000000-0000-7000-8000-000000000000')).toEqual({ ok: false, reason: 'not_found' });
  });

  it('a bounce at RCPT is one transaction: a crash inside it leaves the request in flight and the enrollment untouched; replayed, it fails the request, bounces the enrollment and counts the bounce', async () => {
    const plugin = new CrashPlugin();
    await setup(1);
    const over = crashingStore(store, plugin);
    deps = { ...deps, store: over, service: new EnrollmentService({ store: over, clock, random }) };
    const c = await claim(world.mailboxIds[0]!);
    const b = { recipient: c.to, responseCode: 550, enhancedStatus: '5.1.1', diagnostic: '550 5.1.1 unknown user' };
    plugin.armWhen(insertInto('event'), 'journal of the bounce');
    await expect(recordBounce(deps, c, b)).rejects.toSatisfy(isSimCrash);
    expect((await request(c.requestId)).state).toBe('in_flight');
    expect((await enrollment(c.enrollmentId)).state).toBe('active');
    await recordBounce(deps, c, b);
    expect(await request(c.requestId)).toMatchObject({ state: 'failed', bounce_kind: 'hard' });
    expect((await enrollment(c.enrollmentId)).state).toBe('bounced');
    // A second report changes nothing (the request is no longer in flight).
    await recordBounce(deps, c, b);
    expect(await store.db.selectFrom('event').select('type').where('enrollment_id', '=', c.enrollmentId).where('type', '=', 'bounce').execute()).toHaveLength(1);
  });

  it('accepted with a recipient refused beside it: the send and the bounce commit together', async () => {
    const plugin = new CrashPlugin();
    await setup(1);
    const over = crashingStore(store, plugin);
    deps = { ...deps, store: over, service: new EnrollmentService({ store: over, clock, random }) };
    const c = await claim(world.mailboxIds[0]!);
    const b = [{ recipient: 'cc@x.test', responseCode: 550, enhancedStatus: '5.1.1', diagnostic: 'unknown' }];
    // Crash on the bounce's mark, after the mark-sent of the same transaction ran.
    let seen = 0;
    plugin.armWhen((n) => /bounced_at = coalesce/i.test(((n as { sqlFragments?: string[] }).sqlFragments ?? []).join('')) && ++seen === 1, 'marking the bounce');
    await expect(recordSentWithBounces(deps, c, clock.now(), {}, b)).rejects.toSatisfy(isSimCrash);
    expect((await request(c.requestId)).state).toBe('in_flight');
    expect(await store.db.selectFrom('message').selectAll().execute()).toHaveLength(0);
    expect(await recordSentWithBounces(deps, c, clock.now(), {}, b)).toBe(true);
    expect(await request(c.requestId)).toMatchObject({ state: 'sent', bounce_kind: 'hard' });
  });

  it('retries a transient failure later with backoff, fails a permanent one and stops the enrollment as failed', async () => {
    const { mailboxId } = await setup(2);
    let c = await claim(mailboxId);
    const out = await recordFailure(deps, c, { permanent: false, reason: '451 try again later' });
    expect(out.kind).toBe('retry');
    const at = (out as { at: number }).at;
    expect(at - clock.now()).toBeGreaterThanOrEqual(MIN / 2);
    expect(at - clock.now()).toBeLessThan(MIN);
    let row = await request(c.requestId);
    expect(row.state).toBe('queued');
    expect(row.due_at.getTime()).toBe(at);
    expect(row.last_error).toBe('transient: 451 try again later');
    // Up to maxAttempts claims; the transient failure of the last one fails the request.
    for (let attempt = 2; attempt <= 4; attempt++) {
      clock.advanceTo(row.due_at.getTime());
      const next = await claimNext(deps, mailboxId);
      // the other request is due first on the first round
      c = next.kind === 'claimed' && next.claim.requestId === c.requestId ? next.claim : await claim(mailboxId);
      expect(c.attempts).toBe(attempt);
      const o = await recordFailure(deps, c, { permanent: false, reason: '451 try again later' });
      expect(o.kind).toBe(attempt < 4 ? 'retry' : 'failed');
      row = await request(c.requestId);
    }
    expect(row.state).toBe('failed');
    expect((await enrollment(c.enrollmentId)).state).toBe('failed');

    // A permanent failure fails at once.
    const other = await store.db.selectFrom('send_request').select(['id', 'state', 'enrollment_id']).where('id', '<>', c.requestId).executeTakeFirstOrThrow();
    if (other.state === 'in_flight') await store.db.updateTable('send_request').set({ state: 'queued' }).where('id', '=', other.id).execute();
    const p = await claim(mailboxId);
    expect(p.requestId).toBe(other.id);
    expect(await recordFailure(deps, p, { permanent: true, reason: '550 5.1.1 no such user' })).toEqual({ kind: 'failed' });
    expect((await request(p.requestId)).last_error).toBe('550 5.1.1 no such user');
    const e = await enrollment(p.enrollmentId);
    expect(e.state).toBe('failed');
    expect(e.state_reason).toBe('send failed: 550 5.1.1 no such user');
  });

  it('recovers the in-flight requests of a mailbox as unknown after a restart', async () => {
    const { mailboxId } = await setup(2);
    const c = await claim(mailboxId);
    expect(await recoverInFlight(deps, '00000000-0000-7000-8000-000000000000')).toBe(0);
    expect(await recoverInFlight(deps, mailboxId)).toBe(1);
    expect((await request(c.requestId)).state).toBe('unknown');
    // A late report from the dead owner's claim still records the send (it was found sent).
    expect(await recordSent(deps, c, clock.now())).toBe(true);
  });

  it.runIf(backend === 'postgres')('two senders on one PostgreSQL never claim the same request', async () => {
    const { mailboxId } = await setup(120);
    const second = await openStore({ databaseUrl: store.url!, poolSize: 4 });
    try {
      const depsB: OutboxDeps = { ...deps, store: second, service: new EnrollmentService({ store: second, clock, random: seededRandom(99) }), random: seededRandom(98) };
      const drain = async (d: OutboxDeps) => {
        const got: string[] = [];
        for (;;) {
          const r = await claimNext(d, mailboxId);
          if (r.kind === 'empty') return got;
          if (r.kind === 'claimed') got.push(r.claim.requestId);
        }
      };
      const results = await Promise.all([drain(deps), drain(depsB), drain(deps), drain(depsB)]);
      const all = results.flat();
      expect(all).toHaveLength(120);
      expect(new Set(all).size).toBe(120);
      expect(results.filter((r) => r.length > 0).length).toBeGreaterThan(1);
      const states = await store.db.selectFrom('send_request').select(['state', 'attempts']).execute();
      expect(states.every((s) => s.state === 'in_flight' && s.attempts === 1)).toBe(true);
    } finally {
      await second.close();
    }
  });

  it.runIf(backend === 'postgres')('claims racing replies on PostgreSQL neither deadlock nor claim a stopped enrollment', async () => {
    const { mailboxId } = await setup(80);
    const second = await openStore({ databaseUrl: store.url!, poolSize: 4 });
    try {
      const depsB: OutboxDeps = { ...deps, store: second, service: new EnrollmentService({ store: second, clock, random: seededRandom(97) }), random: seededRandom(96) };
      const enrollments = (await store.db.selectFrom('send_request').select('enrollment_id').orderBy('id').execute()).map((r) => r.enrollment_id);
      // The engine locks the enrollment then the request; the claim takes both without waiting.
      const replies = (async () => {
        for (const id of enrollments.filter((_, i) => i % 2 === 0)) await service.apply(id, { type: 'reply' });
      })();
      const claimed: Claim[] = [];
      const drain = async (d: OutboxDeps) => {
        for (let idle = 0; idle < 3; ) {
          const r = await claimNext(d, mailboxId);
          if (r.kind === 'claimed') claimed.push(r.claim);
          if (r.kind === 'empty') idle++;
        }
      };
      await Promise.all([replies, drain(deps), drain(depsB)]);
      await drain(deps);
      const rows = await store.db
        .selectFrom('send_request as r')
        .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
        .select(['r.id', 'r.state as request', 'e.state as enrollment', 'e.updated_at', 'r.updated_at as claimed_at'])
        .execute();
      expect(new Set(claimed.map((c) => c.requestId)).size).toBe(claimed.length);
      for (const r of rows) {
        // Every request ends claimed or cancelled; an active enrollment's request is claimed.
        expect(['in_flight', 'cancelled']).toContain(r.request);
        if (r.enrollment === 'active') expect(r.request).toBe('in_flight');
        // A cancelled request belongs to a replied enrollment: it was refused or cancelled by the stop.
        if (r.request === 'cancelled') expect(r.enrollment).toBe('replied');
      }
    } finally {
      await second.close();
    }
  });
});
