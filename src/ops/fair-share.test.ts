import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planShare } from './fair-share.ts';

/**
 * The share rule against a model of the lease table: members run their passes in any order, a
 * hand-over ends (the lease is released) at any later step, a take succeeds only on a free
 * mailbox (the upsert's WHERE). Whatever the start, the order and the joins and leaves, a mailbox
 * never has two owners, and once the membership is still the holdings settle where every member
 * holds its quota (the ceil for the first N mod M, the floor for the rest) and nothing is free.
 */
interface Member {
  held: Set<string>;
  leaving: Set<string>;
}

function pass(world: Map<string, Member>, me: string, eligible: string[], owner: Map<string, string>): void {
  const m = world.get(me)!;
  const others = new Map([...owner].filter(([, o]) => o !== me));
  const plan = planShare({ me, members: [...world.keys()], eligible, held: [...m.held], leaving: [...m.leaving], others });
  for (const id of plan.giveBack) {
    expect(m.held.has(id)).toBe(true);
    expect(m.leaving.has(id)).toBe(false);
    m.leaving.add(id);
  }
  for (const id of plan.take) {
    if (m.held.size - m.leaving.size >= plan.quota) break;
    if (owner.has(id)) continue; // lost the race
    owner.set(id, me);
    m.held.add(id);
  }
}

function finishHandOvers(world: Map<string, Member>, owner: Map<string, string>, pick: (n: number) => boolean): void {
  for (const [name, m] of world)
    for (const id of [...m.leaving])
      if (pick(id.length)) {
        m.leaving.delete(id);
        m.held.delete(id);
        expect(owner.get(id)).toBe(name);
        owner.delete(id);
      }
}

describe('planShare', () => {
  it('gives a joining member its share and settles at ceil/floor quotas, one owner per mailbox, from any start and any order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(), { minLength: 0, maxLength: 30 }),
        fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 1, maxLength: 60 }),
        (n, m, initial, schedule) => {
          const eligible = Array.from({ length: n }, (_, i) => `mb${String(i).padStart(2, '0')}`);
          const names = Array.from({ length: m }, (_, i) => `p${i}`);
          const world = new Map<string, Member>(names.map((p) => [p, { held: new Set(), leaving: new Set() }]));
          const owner = new Map<string, string>();
          // Any starting holdings (one member had them all, or they were scattered).
          eligible.forEach((id, i) => {
            const who = names[(initial[i] ?? 0) % m]!;
            owner.set(id, who);
            world.get(who)!.held.add(id);
          });
          // An arbitrary interleaving of passes and hand-overs ending.
          for (const [k, finish] of schedule) {
            pass(world, names[k % m]!, eligible, owner);
            if (finish) finishHandOvers(world, owner, () => true);
          }
          // Then the membership is still: rounds of every member's pass settle it.
          for (let round = 0; round < 4; round++) {
            for (const p of names) pass(world, p, eligible, owner);
            finishHandOvers(world, owner, () => true);
          }
          const counts = names.map((p) => world.get(p)!.held.size).sort((a, b) => b - a);
          const expected = names.map((_, i) => Math.floor(n / m) + (i < n % m ? 1 : 0));
          expect(counts).toEqual(expected);
          expect(owner.size).toBe(n);
          const all = names.flatMap((p) => [...world.get(p)!.held]);
          expect(new Set(all).size).toBe(all.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('moves only what the newcomer needs: 3 held by one, a second joins, exactly one is handed over', () => {
    const plan = planShare({ me: 'a', members: ['a', 'b'], eligible: ['m1', 'm2', 'm3'], held: ['m1', 'm2', 'm3'], leaving: [], others: new Map() });
    expect(plan).toEqual({ quota: 2, giveBack: ['m3'], take: [] });
    const joiner = planShare({ me: 'b', members: ['a', 'b'], eligible: ['m1', 'm2', 'm3'], held: [], leaving: [], others: new Map([['m1', 'a'], ['m2', 'a']]) });
    expect(joiner).toEqual({ quota: 2, giveBack: [], take: ['m3'] });
  });

  it('does not take back what it just handed over while the newcomer has not taken it yet (two rebalancing processes churned on it)', () => {
    const giver = planShare({ me: 'a', members: ['a', 'b'], eligible: ['m1', 'm2', 'm3'], held: ['m1', 'm2'], leaving: [], others: new Map() });
    expect(giver).toEqual({ quota: 2, giveBack: [], take: [] });
    // Nor a tie-broken ranking with 2 mailboxes left to 1 each: the one below the floor takes.
    const even = planShare({ me: 'a', members: ['a', 'b'], eligible: ['m1', 'm2'], held: ['m1'], leaving: [], others: new Map() });
    expect(even).toEqual({ quota: 1, giveBack: [], take: [] });
  });

  it('takes nothing while a hand-over is pending, and never gives the same mailbox back twice', () => {
    const plan = planShare({ me: 'a', members: ['a', 'b'], eligible: ['m1', 'm2', 'm3', 'm4'], held: ['m1', 'm2', 'm3'], leaving: ['m3'], others: new Map() });
    expect(plan).toEqual({ quota: 2, giveBack: [], take: [] });
  });

  it('alone, takes everything free up to its cap', () => {
    expect(planShare({ me: 'a', members: ['a'], eligible: ['m1', 'm2', 'm3'], held: [], leaving: [], others: new Map(), max: 2 })).toEqual({ quota: 2, giveBack: [], take: ['m1', 'm2', 'm3'] });
  });
});
