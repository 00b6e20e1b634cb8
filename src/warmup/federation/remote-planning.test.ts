import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { checkWarmupPlan } from '../plan/check.ts';
import { planWarmupDay } from '../plan/planner.ts';
import type { WarmupMember } from '../plan/types.ts';

const DAY0 = Date.UTC(2026, 11, 2, 8);
const HOUR = 3_600_000;
const providers = ['google', 'microsoft', 'other'];

/** Local senders of one small installation (one workspace, three domains), as plan-role assembles them. */
const local = (i: number): WarmupMember => ({
  id: `local-${i}`, provider: providers[i % 3]!, domain: `team${i % 3}.test`, workspace: 'ws-1', canSend: true, rampDay: 40, target: 20,
  remainingCap: 50, window: { start: DAY0, end: DAY0 + 9 * HOUR }, busy: [], minGapMs: 60_000,
});
/** A peer's member as plan-role's remoteMembers builds it: a receiver up to its offered capacity, labelled with its peer. */
const remote = (peer: string, i: number, capacity: number): WarmupMember => ({
  id: `m${i}@${peer}-d${i % 4}.test`, provider: providers[(i + 1) % 3]!, domain: `${peer}-d${i % 4}.test`, workspace: `peer:${peer}`, canSend: false,
  rampDay: 0, target: Math.max(1, capacity), remainingCap: 0, window: { start: DAY0, end: DAY0 }, busy: [], minGapMs: 0, receiveLimit: capacity,
});

describe('planning with a peer installation’s members', () => {
  it('a lone installation (one workspace) plans nothing; with a peer, its members receive within their capacity and never send', () => {
    const mine = Array.from({ length: 6 }, (_, i) => local(i));
    // Every local pair shares the workspace: nothing passes without a peer.
    expect(planWarmupDay({ members: mine, recentPairs: [] }, seededRandom(1)).sends).toHaveLength(0);

    const theirs = [...Array.from({ length: 8 }, (_, i) => remote('p1', i, 3)), ...Array.from({ length: 4 }, (_, i) => remote('p2', i, i === 0 ? 0 : 5))];
    const input = { members: [...mine, ...theirs], recentPairs: [] };
    for (let seed = 0; seed < 20; seed++) {
      const plan = planWarmupDay(input, seededRandom(seed));
      expect(plan.sends.length).toBeGreaterThan(0);
      expect(checkWarmupPlan(input, plan)).toEqual([]);
      const got = new Map<string, number>();
      for (const s of plan.sends) {
        expect(s.sender.startsWith('local-')).toBe(true); // a remote member never sends from our plan
        got.set(s.receiver, (got.get(s.receiver) ?? 0) + 1);
      }
      for (const m of theirs) expect(got.get(m.id) ?? 0).toBeLessThanOrEqual(m.receiveLimit!);
      // Domain spread holds across installations: one sender writes to a domain at most once a day.
      const perSenderDomain = new Set<string>();
      for (const s of plan.sends) {
        const k = `${s.sender} ${s.receiver.split('@')[1]}`;
        expect(perSenderDomain.has(k)).toBe(false);
        perSenderDomain.add(k);
      }
    }
  });

  it('a pair that wrote to each other in the cooldown is not paired again across installations either', () => {
    const mine = [local(0)];
    const theirs = [remote('p1', 0, 5), remote('p1', 1, 5)];
    const plan = planWarmupDay({ members: [...mine, ...theirs], recentPairs: [{ a: 'local-0', b: theirs[0]!.id, daysAgo: 2 }] }, seededRandom(3));
    expect(plan.sends.map((s) => s.receiver)).toEqual([theirs[1]!.id]);
  });
});
