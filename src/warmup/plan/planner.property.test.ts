/**
 * The warmup planner's rules as properties over random pools (providers, domains and workspaces
 * shared by several members, remote members, ramps, caps already spent by campaigns, short and
 * empty windows, campaign sends in the window, recent pairs), each plan checked by the independent
 * checker (check.ts); plus the checker's own tests: a plan broken on purpose is caught, rule by rule.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { checkWarmupPlan, type WarmupRule } from './check.ts';
import { planWarmupDay } from './planner.ts';
import { warmupCeiling } from './ramp.ts';
import type { WarmupMember, WarmupPlan, WarmupPlanInput } from './types.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY0 = Date.UTC(2026, 11, 2, 6, 0);

const memberArb = (i: number) =>
  fc.record({
    provider: fc.constantFrom('google', 'microsoft', 'yahoo'),
    domain: fc.integer({ min: 0, max: 8 }),
    workspace: fc.integer({ min: 0, max: 5 }),
    remote: fc.boolean().map((b) => b && i % 4 === 3),
    rampDay: fc.integer({ min: 0, max: 40 }),
    target: fc.integer({ min: 0, max: 30 }),
    remainingCap: fc.integer({ min: 0, max: 40 }),
    startMin: fc.integer({ min: 0, max: 600 }),
    lengthMin: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 60, max: 720 })),
    busyMin: fc.array(fc.integer({ min: -60, max: 900 }), { maxLength: 6 }),
    gapMin: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 90 })),
    receiveLimit: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
  });

const poolArb = fc
  .integer({ min: 1, max: 40 })
  .chain((n) => fc.tuple(fc.tuple(...Array.from({ length: n }, (_, i) => memberArb(i))), fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1), fc.integer({ min: 1, max: 14 })), { maxLength: 3 * n })))
  .map(([ms, pairs]): WarmupPlanInput => {
    const members: WarmupMember[] = ms.map((m, i) => ({
      id: `m${i}`,
      provider: m.provider,
      domain: `d${m.domain}.example`,
      workspace: m.remote ? 'remote:peer' : `w${m.workspace}`,
      canSend: !m.remote,
      rampDay: m.rampDay,
      target: m.target,
      remainingCap: m.remainingCap,
      window: { start: DAY0 + m.startMin * MIN, end: DAY0 + (m.startMin + m.lengthMin) * MIN },
      busy: m.busyMin.map((b) => DAY0 + (m.startMin + b) * MIN),
      minGapMs: m.gapMin * MIN,
      ...(m.remote && m.receiveLimit !== undefined ? { receiveLimit: m.receiveLimit } : {}),
    }));
    return { members, recentPairs: pairs.map(([a, b, daysAgo]) => ({ a: `m${a}`, b: `m${b}`, daysAgo })) };
  });

const configArb = fc.record(
  {
    rampDays: fc.integer({ min: 1, max: 40 }),
    maxSameProviderShare: fc.constantFrom(0, 1 / 3, 0.5, 1),
    maxPerReceiverDomain: fc.integer({ min: 0, max: 3 }),
    maxPerDomainPair: fc.integer({ min: 0, max: 5 }),
    pairCooldownDays: fc.integer({ min: 0, max: 10 }),
    volumeJitter: fc.constantFrom(0, 0.2, 1),
  },
  { requiredKeys: [] },
);

/** A pool where nothing but the volumes binds: every member its own domain and workspace, three providers. */
function ampleInput(n: number, target = 20): WarmupPlanInput {
  const members: WarmupMember[] = Array.from({ length: n }, (_, i) => ({
    id: `m${i}`,
    provider: ['google', 'microsoft', 'other'][i % 3]!,
    domain: `d${i}.example`,
    workspace: `w${i}`,
    canSend: true,
    rampDay: 40,
    target,
    remainingCap: 50,
    window: { start: DAY0 + 2 * HOUR, end: DAY0 + 11 * HOUR },
    busy: [DAY0 + 3 * HOUR, DAY0 + 5 * HOUR],
    minGapMs: 10 * MIN,
  }));
  return { members, recentPairs: [] };
}

describe('planWarmupDay', () => {
  it('keeps every rule on random pools (independent checker)', () => {
    fc.assert(
      fc.property(poolArb, configArb, fc.integer(), (input, config, seed) => {
        const withConfig = { ...input, config };
        const plan = planWarmupDay(withConfig, seededRandom(seed));
        expect(checkWarmupPlan(withConfig, plan)).toEqual([]);
        for (const s of plan.shortfall) expect(s.planned).toBeLessThanOrEqual(s.wanted);
      }),
      { numRuns: 300 },
    );
  });

  it('replays from its seed', () => {
    fc.assert(
      fc.property(poolArb, fc.integer(), (input, seed) => {
        expect(planWarmupDay(input, seededRandom(seed))).toEqual(planWarmupDay(input, seededRandom(seed)));
      }),
      { numRuns: 50 },
    );
  });

  it('fills nearly every wish in a diverse pool, and sends stay within the ramp', () => {
    const input = ampleInput(300);
    const plan = planWarmupDay(input, seededRandom(7));
    expect(checkWarmupPlan(input, plan)).toEqual([]);
    const wanted = plan.shortfall.reduce((a, s) => a + s.wanted, 0);
    expect(wanted).toBeGreaterThanOrEqual(300 * 16); // volume jitter 20% below a ceiling of 20
    expect(plan.sends.length / wanted).toBeGreaterThan(0.97);
  });

  it('samples in a large pool and still keeps every rule', () => {
    const input = ampleInput(1500, 8);
    // Several members per domain and workspace, so the domain and workspace rules bind.
    const members = input.members.map((m, i) => ({ ...m, domain: `d${i % 400}.example`, workspace: `w${i % 300}` }));
    const big = { members, recentPairs: [{ a: 'm0', b: 'm1', daysAgo: 1 }] };
    const plan = planWarmupDay(big, seededRandom(3));
    expect(checkWarmupPlan(big, plan)).toEqual([]);
    expect(plan.sends.length / plan.shortfall.reduce((a, s) => a + s.wanted, 0)).toBeGreaterThan(0.95);
  });

  it('gives a campaign-full mailbox no warmup, and a remote member only receives', () => {
    const input = ampleInput(12);
    const members = input.members.map((m, i) => (i === 0 ? { ...m, remainingCap: 0 } : i === 1 ? { ...m, canSend: false, receiveLimit: 3 } : m));
    const plan = planWarmupDay({ members, recentPairs: [] }, seededRandom(1));
    expect(plan.sends.filter((s) => s.sender === 'm0' || s.sender === 'm1')).toEqual([]);
    expect(plan.sends.filter((s) => s.receiver === 'm1').length).toBeLessThanOrEqual(3);
    expect(plan.sends.some((s) => s.receiver === 'm1')).toBe(true);
  });

  it('ramps from 2 a day to the target', () => {
    const c = { rampStart: 2, rampDays: 28 };
    expect([0, 7, 14, 27, 28, 100].map((rampDay) => warmupCeiling({ rampDay, target: 30 }, c))).toEqual([2, 9, 16, 29, 30, 30]);
    expect(warmupCeiling({ rampDay: 0, target: 1 }, c)).toBe(1);
  });

  it('answers a bad pool with INVALID_INPUT naming the problems', () => {
    const input = ampleInput(3);
    const bad = { members: [input.members[0]!, { ...input.members[1]!, id: 'm0', target: -1, window: { start: 5, end: 1 } }], recentPairs: [{ a: '', b: 'x', daysAgo: 1 }] };
    try {
      planWarmupDay(bad, seededRandom(1));
      expect.unreachable();
    } catch (e) {
      expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
      const problems = (e as { details: { problems: string[] } }).details.problems;
      expect(problems.join('\n')).toMatch(/target must be an integer/);
      expect(problems.join('\n')).toMatch(/window must be/);
      expect(problems.join('\n')).toMatch(/appears twice/);
      expect(problems.join('\n')).toMatch(/recentPairs\[0\]/);
    }
    expect(() => planWarmupDay({ ...input, config: { maxSameProviderShare: 2 } }, seededRandom(1))).toThrow(/maxSameProviderShare/);
  });
});

describe('checkWarmupPlan catches a broken plan', () => {
  const ample = ampleInput(30);
  const input: WarmupPlanInput = {
    ...ample,
    members: ample.members.map((m, i) => (i === 5 ? { ...m, domain: 'd4.example' } : i === 6 ? { ...m, workspace: 'w4' } : m)),
  };
  const plan = planWarmupDay(input, seededRandom(11));
  const first = plan.sends.find((s) => s.sender === 'm4')!;
  const rules = (p: WarmupPlan, i: WarmupPlanInput = input) => new Set(checkWarmupPlan(i, p).map((v) => v.rule));
  const broken = (change: (sends: WarmupPlan['sends']) => WarmupPlan['sends']) => ({ ...plan, sends: change(plan.sends.map((s) => ({ ...s }))) });

  const cases: Array<[WarmupRule, WarmupPlan, WarmupPlanInput?]> = [
    ['unknown-member', broken((s) => [...s, { sender: 'm4', receiver: 'nobody', at: first.at }])],
    ['self', broken((s) => [...s, { sender: 'm4', receiver: 'm4', at: first.at + 3 * HOUR }])],
    ['same-domain', broken((s) => [...s, { sender: 'm4', receiver: 'm5', at: first.at }])],
    ['same-workspace', broken((s) => [...s, { sender: 'm4', receiver: 'm6', at: first.at }])],
    ['pair-twice', broken((s) => [...s, { ...first }])],
    ['gap', broken((s) => [...s, { sender: 'm4', receiver: 'm29', at: first.at + 1 }])],
    ['outside-window', broken((s) => s.map((x) => (x === s.find((y) => y.sender === 'm4') ? { ...x, at: DAY0 } : x)))],
    ['sender-volume', plan, { ...input, members: input.members.map((m) => (m.id === 'm4' ? { ...m, remainingCap: 1 } : m)) }],
    ['pair-cooldown', plan, { ...input, recentPairs: [{ a: first.receiver, b: 'm4', daysAgo: 2 }] }],
    ['receiver-limit', plan, { ...input, members: input.members.map((m) => (m.id === first.receiver ? { ...m, receiveLimit: 0 } : m)) }],
    ['remote-sender', plan, { ...input, members: input.members.map((m) => (m.id === 'm4' ? { ...m, canSend: false } : m)) }],
    ['receiver-domain', plan, { ...input, members: input.members.map((m) => ({ ...m, domain: m.id === 'm4' ? 'd4.example' : ['a.example', 'b.example'][Number(m.id.slice(1)) % 2]! })) }],
    ['domain-pair', plan, { ...input, config: { maxPerDomainPair: 0 } }],
    ['same-provider-share', plan, { ...input, config: { maxSameProviderShare: 0 }, members: input.members.map((m) => ({ ...m, provider: 'google' })) }],
  ];
  it.each(cases)('%s', (rule, p, i) => {
    expect(checkWarmupPlan(input, plan)).toEqual([]);
    expect(rules(p, i)).toContain(rule);
  });
});
