/**
 * Mailbox health against a real store: the bounce rate over recent sends pauses a mailbox, failed
 * credentials pause it at once, a paused mailbox sends nothing, and a resume plans it again.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { mailboxesToPlan } from './dispatcher.ts';
import { evaluateHealth } from '../../mailbox/health/evaluate.ts';
import { pauseMailbox, resumeMailbox } from '../../mailbox/health/pause.ts';
import { recordSendOutcome } from './health.ts';
import { planMailboxes } from './plan.ts';
import { reserveSlot } from './reserve.ts';
import { allDay, markSent, seed } from '../../../test/dispatch/seed.ts';

const MIN = 60_000;
const T = Date.UTC(2026, 5, 1, 14, 0); // Monday 10:00 in New York

describe.each(testBackends())('mailbox health on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });
  beforeEach(async () => {
    await sql`truncate table workspace cascade`.execute(store.db);
  });

  const mailbox = (id: string) => store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', id).executeTakeFirstOrThrow();

  it('judges no rate on too small a sample, but pauses once the bounces alone reach the threshold of the window', async () => {
    const s = await seed(store, {
      now: T,
      mailboxes: [{ dailyCap: 500, pacing: allDay }],
      sequences: [{ window: 'any', pool: [0] }],
      requests: Array.from({ length: 12 }, () => ({ mailbox: 0, dueAt: T - 600 * MIN })),
    });
    const sent = s.requestIds.slice(0, 10);
    await markSent(store, sent, sent.map((_, i) => T - (100 - i * 9) * MIN));
    let r = await recordSendOutcome(store.db, { kind: 'bounce', requestId: sent[0]!, hard: true, at: T });
    expect(r).toMatchObject({ verdict: 'ok', health: 'ok' });
    expect(r.reason).toBe('1 bounce in the last 10 sends (10.0%): fewer than 20 sends, too few to judge the rate');
    expect(r.confidence).toBeCloseTo(0.1);
    r = await recordSendOutcome(store.db, { kind: 'bounce', requestId: sent[1]!, hard: false, at: T });
    expect(r.reason).toMatch(/^1 bounce in/); // a soft bounce is kept, not counted
    for (const id of sent.slice(2, 5)) r = await recordSendOutcome(store.db, { kind: 'bounce', requestId: id, hard: true, at: T });
    expect(r).toMatchObject({ verdict: 'ok', health: 'ok' }); // 4 of 10
    r = await recordSendOutcome(store.db, { kind: 'bounce', requestId: sent[5]!, hard: true, at: T });
    expect(r).toMatchObject({ verdict: 'pause', health: 'paused' }); // 5: whatever the next 90 do, the window is at 5%
    const row = await store.db.selectFrom('send_request').select(['bounce_kind', 'bounced_at']).where('id', '=', sent[1]!).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ bounce_kind: 'soft' });
  });

  it('pauses at 5% of the last 100 sends, and a paused mailbox sends nothing until resumed', async () => {
    const s = await seed(store, {
      now: T,
      mailboxes: [{ dailyCap: 500, pacing: allDay }],
      sequences: [{ window: 'any', pool: [0] }],
      requests: Array.from({ length: 130 }, () => ({ mailbox: 0, dueAt: T - 2000 * MIN })),
    });
    const [mb] = s.mailboxIds as [string];
    const sent = s.requestIds.slice(0, 120);
    await markSent(store, sent, sent.map((_, i) => T - (1500 - i * 12) * MIN));
    // Old bounces fall out of the window: 4 among the 20 oldest sends do not count.
    for (const id of sent.slice(0, 4)) await recordSendOutcome(store.db, { kind: 'bounce', requestId: id, hard: true, at: T });
    expect((await evaluateHealth(store.db, mb, T)).verdict).toBe('ok');
    for (const id of sent.slice(60, 63)) await recordSendOutcome(store.db, { kind: 'bounce', requestId: id, hard: true, at: T });
    expect(await mailbox(mb)).toMatchObject({ health: 'warning' }); // 3 of the last 100
    await recordSendOutcome(store.db, { kind: 'bounce', requestId: sent[70]!, hard: true, at: T });
    // Reported twice (a second DSN for the same message): counted once.
    await recordSendOutcome(store.db, { kind: 'bounce', requestId: sent[70]!, hard: true, at: T });
    expect(await mailbox(mb)).toMatchObject({ health: 'warning' }); // 4 of 100
    const r = await recordSendOutcome(store.db, { kind: 'bounce', requestId: sent[80]!, hard: true, at: T });
    expect(r).toMatchObject({ verdict: 'pause', health: 'paused', confidence: 1 });
    const after = await mailbox(mb);
    expect(after.health).toBe('paused');
    expect(after.health_reason).toBe('5 bounces in the last 100 sends (5.0%), at or above the 5.0% pause threshold');

    // Paused: the planner gives nothing a slot, the claim refuses, and the dispatcher does not spin.
    const clock = new SimClock(T);
    const report = await planMailboxes({ store, clock }, [mb]);
    expect(report).toMatchObject({ planned: 0, unplaced: 10 });
    const queued = await store.db.selectFrom('send_request').selectAll().where('state', '=', 'queued').execute();
    for (const q of queued) {
      expect(q.send_at).toBeNull();
      expect(q.plan_note).toMatch(/^mailbox paused: 5 bounces/);
    }
    const res = await store.db.transaction().execute((tx) => reserveSlot(tx, queued[0]!.id, T));
    expect(res).toMatchObject({ granted: false });
    expect(res.granted ? '' : res.reason).toMatch(/mailbox paused/);
    expect(await mailboxesToPlan(store.db, T)).toEqual([]);
    // A later good run does not lift a pause: a person does.
    expect((await evaluateHealth(store.db, mb, T)).health).toBe('paused');
    expect(await resumeMailbox(store.db, mb)).toBe(true);
    expect(await mailbox(mb)).toEqual({ health: 'ok', health_reason: null });
    expect(await mailboxesToPlan(store.db, T)).toEqual([mb]);
    expect(await planMailboxes({ store, clock }, [mb])).toMatchObject({ planned: 10, unplaced: 0 });
  });

  it('pauses a mailbox whose credentials fail, at once, and keeps the first reason', async () => {
    const s = await seed(store, {
      now: T,
      mailboxes: [{}],
      sequences: [{ window: 'any', pool: [0] }],
      requests: [{ mailbox: 0, dueAt: T }],
    });
    const [mb] = s.mailboxIds as [string];
    const clock = new SimClock(T);
    await planMailboxes({ store, clock }, [mb]);
    const r = await recordSendOutcome(store.db, { kind: 'credentials_failed', mailboxId: mb, detail: '535 5.7.8 Authentication credentials invalid', at: T });
    expect(r).toMatchObject({ verdict: 'pause', health: 'paused' });
    expect((await mailbox(mb)).health_reason).toBe("the server refused the mailbox's credentials: 535 5.7.8 Authentication credentials invalid");
    const q = await store.db.selectFrom('send_request').selectAll().executeTakeFirstOrThrow();
    expect(q).toMatchObject({ send_at: null });
    expect(await pauseMailbox(store.db, mb, 'something else', T)).toBe(false);
    expect((await mailbox(mb)).health_reason).toMatch(/credentials/);
  });

  it('answers bad input with stable errors', async () => {
    await expect(recordSendOutcome(store.db, { kind: 'bounce', requestId: '00000000-0000-7000-8000-000000000000', hard: true, at: T })).rejects.toSatisfy(
      (e: unknown) => isCadenzaError(e, 'NOT_FOUND'),
    );
    await expect(pauseMailbox(store.db, '00000000-0000-7000-8000-000000000000', 'x', T)).rejects.toSatisfy((e: unknown) => isCadenzaError(e, 'NOT_FOUND'));
    await expect(pauseMailbox(store.db, '00000000-0000-7000-8000-000000000000', '  ', T)).rejects.toSatisfy((e: unknown) => isCadenzaError(e, 'INVALID_INPUT'));
  });
});
