/**
 * The day plan through the store (PGlite and PostgreSQL), on a simulated clock: a day planned and
 * written as planned warmup mail becomes the next days' recent pairs, so the planner does not pair
 * them again within the cooldown, and the independent checker agrees.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { checkWarmupPlan } from './plan/check.ts';
import { planWarmupDay } from './plan/planner.ts';
import type { WarmupMember } from './plan/types.ts';
import { recentPairs, writeDayPlan } from './plan-store.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const DAY1 = Date.UTC(2026, 11, 1);
const PROVIDERS = ['google', 'microsoft', 'other'];

describe.each(testBackends())('the warmup plan in the store on %s', (backend) => {
  let store: TestStore;
  const ids = Array.from({ length: 12 }, (_, i) => `00000000-0000-4000-8000-0000000001${String(i).padStart(2, '0')}`);
  const address = (i: number) => `rep${i}@d${i}.example`;
  beforeAll(async () => {
    store = await freshStore(backend);
    await sql`truncate table workspace cascade`.execute(store.db);
    for (const [i, id] of ids.entries()) {
      const ws = `00000000-0000-4000-8000-0000000002${String(i).padStart(2, '0')}`;
      await store.db.insertInto('workspace').values({ id: ws, name: `W${i}` } as never).execute();
      await store.db.insertInto('mailbox').values({ id, workspace_id: ws, email: address(i), provider: 'smtp_imap' } as never).execute();
    }
  });
  afterAll(async () => {
    await store.destroy();
  });

  const members = (day: number): WarmupMember[] =>
    ids.map((id, i) => ({
      id,
      provider: PROVIDERS[i % 3]!,
      domain: `d${i}.example`,
      workspace: `w${i}`,
      canSend: true,
      rampDay: 30,
      target: 1,
      remainingCap: 10,
      window: { start: day + 8 * HOUR, end: day + 17 * HOUR },
      busy: [],
      minGapMs: 30 * 60_000,
    }));
  const book = { get: (id: string) => (ids.includes(id) ? { address: address(ids.indexOf(id)), mailboxId: id } : undefined) };

  it('writes a day as planned mail and never pairs those members again within the cooldown', async () => {
    const random = seededRandom(21);
    const seen = new Set<string>();
    for (let d = 0; d < 3; d++) {
      const day = DAY1 + d * DAY;
      const history = await recentPairs(store.db, 'default', day, 7);
      expect(history.every((p) => p.daysAgo >= 1 && p.daysAgo <= d)).toBe(true);
      const input = { members: members(day), recentPairs: history };
      const plan = planWarmupDay(input, random);
      expect(plan.sends.length, `day ${d}: ${JSON.stringify(plan.shortfall)}`).toBeGreaterThan(0);
      expect(checkWarmupPlan(input, plan)).toEqual([]);
      for (const s of plan.sends) {
        const pair = [s.sender, s.receiver].sort().join(' ');
        expect(seen.has(pair)).toBe(false);
        seen.add(pair);
      }
      const written = await writeDayPlan(store.db, 'default', plan.sends, book, random);
      expect(written).toHaveLength(plan.sends.length);
    }
    const rows = await store.db.selectFrom('warmup_mail').select(['message_id', 'sender_address', 'planned_at']).execute();
    expect(rows.length).toBe(seen.size);
    for (const r of rows) expect(r.message_id.endsWith(`@${r.sender_address.split('@')[1]}>`)).toBe(true);
  });
});
