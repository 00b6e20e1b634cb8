/**
 * Rotation against a real store: new enrollments go to the pool mailbox with the most room
 * (load relative to capacity), paused mailboxes are skipped, and the set-based version hands out
 * 100k assignments from one read.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { assignMailboxes, chooseMailbox } from './assign-mailboxes.ts';
import { seed } from '../../../test/dispatch/seed.ts';

const T = Date.UTC(2026, 5, 1, 14, 0); // Monday 10:00 in New York
const DAY = 86_400_000;

describe.each(testBackends())('rotation on %s', (backend) => {
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

  it('gives a new enrollment the eligible mailbox with the most room, skipping a paused one', async () => {
    const s = await seed(store, {
      now: T,
      mailboxes: [{ dailyCap: 30 }, { dailyCap: 30 }, { dailyCap: 60, health: 'paused' }],
      sequences: [{ window: 'any', pool: [0, 1, 2] }],
      // Mailbox 0 already carries 20 live enrollments, mailbox 1 carries 5.
      requests: [...Array.from({ length: 20 }, () => ({ mailbox: 0, dueAt: T })), ...Array.from({ length: 5 }, () => ({ mailbox: 1, dueAt: T }))],
    });
    const [sequenceId] = s.sequenceIds as [string];
    expect(await chooseMailbox(store.db, { sequenceId, now: T })).toEqual({ id: s.mailboxIds[1], time_zone: 'America/New_York', eligible: true });
    // 35 more: mailbox 1 catches up to 20, then they alternate (ties by id); the paused one gets none.
    const out = await assignMailboxes(store.db, { sequenceId, count: 35, now: T });
    const count = (id: string) => out.filter((c) => c.id === id).length;
    expect(count(s.mailboxIds[0]!) + 20).toBe(count(s.mailboxIds[1]!) + 5);
    expect(count(s.mailboxIds[2]!)).toBe(0);
    expect(out.slice(0, 15).every((c) => c.id === s.mailboxIds[1])).toBe(true);
  });

  it('shares in proportion to capacity: a ramping mailbox takes a small share that grows with its ramp', async () => {
    const s = await seed(store, {
      now: T,
      mailboxes: [{ dailyCap: 40 }, { dailyCap: 40, ramp: { start: 4, step: 2 }, rampStartedAt: T }, { dailyCap: 20, pacing: { workDays: [1, 2, 3] } }],
      sequences: [{ window: 'any', pool: [0, 1, 2] }],
      requests: [],
    });
    const [sequenceId] = s.sequenceIds as [string];
    const out = await assignMailboxes(store.db, { sequenceId, count: 100_000, now: T });
    expect(out).toHaveLength(100_000);
    const share = (i: number) => out.filter((c) => c.id === s.mailboxIds[i]).length / out.length;
    // Over the next 14 days (Monday 1 to Sunday 14 June): 10 working days at 40 = 400; the ramp
    // grows by calendar day, 4 + 2n, on the working days n = 0-4 and 7-11: 150; Monday to
    // Wednesday at 20: 6 days, 120. Shares follow those capacities.
    expect(share(0)).toBeCloseTo(400 / 670, 2);
    expect(share(1)).toBeCloseTo(150 / 670, 2);
    expect(share(2)).toBeCloseTo(120 / 670, 2);
    // Any prefix is balanced too (bulk enrollment may stop short of count).
    const prefix = out.slice(0, 737);
    expect(Math.abs(prefix.filter((c) => c.id === s.mailboxIds[0]).length - 440)).toBeLessThanOrEqual(2);
    // A week later the ramp has grown: the same pool gives the ramping mailbox more.
    const later = await assignMailboxes(store.db, { sequenceId, count: 10_000, now: T + 14 * DAY });
    expect(later.filter((c) => c.id === s.mailboxIds[1]).length / later.length).toBeGreaterThan(share(1));
  });

  it('with no eligible mailbox, still assigns one (it waits for a resume) and says so; [] without a pool', async () => {
    const s = await seed(store, {
      now: T,
      mailboxes: [{ health: 'paused' }, { health: 'error' }],
      sequences: [{ window: 'any', pool: [0, 1] }, { window: 'any', pool: [] }],
      requests: [],
    });
    const out = await assignMailboxes(store.db, { sequenceId: s.sequenceIds[0]!, count: 4, now: T });
    expect(out.map((c) => c.eligible)).toEqual([false, false, false, false]);
    expect(new Set(out.map((c) => c.id)).size).toBe(2);
    expect(await assignMailboxes(store.db, { sequenceId: s.sequenceIds[1]!, count: 4, now: T })).toEqual([]);
    expect(await chooseMailbox(store.db, { sequenceId: s.sequenceIds[1]!, now: T })).toBeNull();
  });
});
