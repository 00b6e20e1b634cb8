/**
 * Warmup plan: plan one day of the warmup network for --members pool mailboxes (default 10,000)
 * with src/warmup/plan/, and check the plan with the independent checker (check.ts).
 *
 *   npm run bench -- warmup-plan [--members=10000] [--rounds=5] [--history-days=7] [--seed=42]
 *
 * The pool: workspaces of 1 to 40 mailboxes on 1 to 3 domains each (so the domain and workspace
 * rules bind), providers 45% Google, 35% Microsoft, 20% other hosts, ramp days 0–60 towards
 * targets of 20–40 a day, daily caps of 50 of which campaigns already took 0–45 (their send times
 * in the window, kept `minGapMs` from), windows of 8–10 h in four zones, gaps of 5–15 min, a few
 * remote (federated) members that only receive; and the recent pairs of the --history-days before,
 * made by planning those days first (so the cooldown binds as it would in a pool that runs).
 *
 * Figures: the planning time (CPU ms, process.cpuUsage: the machine is shared), median and
 * min–max over the rounds; the anchor, in the same rounds: pairing the same number of sends at
 * random with no rule at all (the floor any planner pays to write its output), and the plan's
 * time as a multiple of it; the checker's time; sends planned and the share of the senders'
 * wishes filled; and the checker's violations, which must be 0.
 */
import { seededRandom, type Random } from '../src/common/random.ts';
import { checkWarmupPlan } from '../src/warmup/plan/check.ts';
import { planWarmupDay } from '../src/warmup/plan/planner.ts';
import type { RecentPair, WarmupMember, WarmupPlan, WarmupPlanInput } from '../src/warmup/plan/types.ts';
import { intFlag } from './lib/args.ts';
import { int, round } from './lib/format.ts';
import { describeLoad, interleavedRounds, loadFigures, machineLoad, showSpread, spreadFigures, type Figures } from './lib/rounds.ts';
import { cpuNs } from './lib/time.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const DAY0 = Date.UTC(2026, 11, 2, 0, 0);
const ZONE_OFFSET_H = [-8, -5, 0, 1];
const ms = (x: number) => x.toFixed(0);

function pool(n: number, random: Random): WarmupMember[] {
  const members: WarmupMember[] = [];
  let w = 0;
  while (members.length < n) {
    const size = Math.min(n - members.length, random.int(1, 40));
    const domains = Array.from({ length: random.int(1, 3) }, (_, k) => `w${w}-d${k}.example`);
    const zone = ZONE_OFFSET_H[random.int(0, ZONE_OFFSET_H.length - 1)]!;
    const remote = random.next() < 0.02;
    for (let k = 0; k < size; k++) {
      const p = random.next();
      const dailyCap = 50;
      const campaign = random.int(0, 45);
      const start = DAY0 + (9 - zone) * HOUR + random.int(-60, 60) * MIN;
      const end = start + random.int(8 * 60, 10 * 60) * MIN;
      const minGapMs = random.int(5, 15) * MIN;
      // Campaign sends spread over the window (some of the cap may be spent already, so fewer are left to plan).
      const busy = Array.from({ length: Math.min(campaign, 20) }, () => start + random.next() * (end - start));
      members.push({
        id: `w${w}-m${k}`,
        provider: p < 0.45 ? 'google' : p < 0.8 ? 'microsoft' : ['yahoo', 'zoho', 'other'][random.int(0, 2)]!,
        domain: domains[k % domains.length]!,
        workspace: remote ? 'remote:peer' : `w${w}`,
        canSend: !remote,
        rampDay: random.int(0, 60),
        target: random.int(20, 40),
        remainingCap: dailyCap - campaign,
        window: { start, end },
        busy,
        minGapMs,
        ...(remote ? { receiveLimit: random.int(5, 30) } : {}),
      });
    }
    w++;
  }
  return members;
}

/** The days before: each planned on the pool as it was then (ramp days earlier), their pairs kept. */
function history(members: WarmupMember[], days: number, random: Random): RecentPair[] {
  const pairs: RecentPair[] = [];
  for (let d = days; d >= 1; d--) {
    const then = members.map((m) => ({ ...m, rampDay: Math.max(0, m.rampDay - d), window: { start: m.window.start - d * DAY, end: m.window.end - d * DAY }, busy: m.busy.map((b) => b - d * DAY) }));
    const plan = planWarmupDay({ members: then, recentPairs: pairs.map((p) => ({ ...p, daysAgo: p.daysAgo - d })) }, random.fork(`day-${d}`));
    for (const s of plan.sends) pairs.push({ a: s.sender, b: s.receiver, daysAgo: d });
  }
  return pairs;
}

/** The anchor: the same number of sends, senders and receivers drawn at random, no rule kept. */
function unconstrained(input: WarmupPlanInput, sends: number, random: Random): WarmupPlan {
  const m = input.members;
  const out: WarmupPlan['sends'] = [];
  for (let k = 0; k < sends; k++) {
    const s = m[random.int(0, m.length - 1)]!;
    out.push({ sender: s.id, receiver: m[random.int(0, m.length - 1)]!.id, at: s.window.start + random.next() * (s.window.end - s.window.start) });
  }
  out.sort((a, b) => a.at - b.at);
  return { sends: out, shortfall: [] };
}

export default async function warmupPlan(args: string[]): Promise<Record<string, unknown>> {
  const n = intFlag(args, 'members', 10_000);
  const rounds = intFlag(args, 'rounds', 5);
  const historyDays = Number(args.find((a) => a.startsWith('--history-days='))?.split('=')[1] ?? 7);
  const seed = intFlag(args, 'seed', 42);
  const random = seededRandom(seed);
  const members = pool(n, random.fork('pool'));
  const recentPairs = history(members, historyDays, random.fork('history'));
  const input: WarmupPlanInput = { members, recentPairs };
  console.log(`pool: ${int(n)} members, ${int(new Set(members.map((m) => m.workspace)).size)} workspaces, ${int(new Set(members.map((m) => m.domain)).size)} domains; ${int(recentPairs.length)} pairs from the ${historyDays} days before`);

  const before = machineLoad();
  console.log(`before: ${describeLoad(before)}`);
  let last: WarmupPlan | undefined;
  let violations = 0;
  const r = await interleavedRounds({
    rounds,
    cases: ['plan', 'anchor'] as const,
    run: (c, round): Figures => {
      const rnd = seededRandom(seed + round + 1000);
      if (c === 'plan') {
        const t0 = cpuNs();
        const plan = planWarmupDay(input, rnd);
        const t1 = cpuNs();
        const found = checkWarmupPlan(input, plan);
        const t2 = cpuNs();
        violations = Math.max(violations, found.length);
        if (found.length) console.log(`violations: ${found.slice(0, 5).map((v) => `${v.rule}: ${v.detail}`).join('; ')}`);
        last = plan;
        return { cpu_ms: (t1 - t0) / 1e6, check_ms: (t2 - t1) / 1e6, sends: plan.sends.length };
      }
      const t0 = cpuNs();
      unconstrained(input, last?.sends.length ?? n * 20, rnd);
      return { cpu_ms: (cpuNs() - t0) / 1e6 };
    },
  });
  const after = machineLoad();
  const wanted = last!.shortfall.reduce((a, s) => a + s.wanted, 0);
  const plannedMs = r.spread('plan', 'cpu_ms');
  const anchorMs = r.spread('anchor', 'cpu_ms');
  const ratio = r.ratio('plan', 'anchor', 'cpu_ms');
  const checkMs = r.spread('plan', 'check_ms');
  console.log(`plan a day: ${showSpread(plannedMs, ms)} ms CPU (median, min–max over ${rounds} rounds)`);
  console.log(`anchor (random pairs, no rule): ${showSpread(anchorMs, ms)} ms CPU; the plan costs ${showSpread(ratio)}× the anchor`);
  console.log(`checker: ${showSpread(checkMs, ms)} ms CPU; violations: ${violations}`);
  console.log(`sends: ${int(last!.sends.length)} of ${int(wanted)} wished (${round((100 * last!.sends.length) / wanted)}%)`);
  console.log(`after: ${describeLoad(after)}`);
  return {
    members: n,
    sends: last!.sends.length,
    wished: wanted,
    filled_pct: round((100 * last!.sends.length) / wanted),
    violations,
    ...spreadFigures('plan_cpu_ms', plannedMs),
    ...spreadFigures('anchor_cpu_ms', anchorMs),
    ...spreadFigures('plan_over_anchor', ratio, 2),
    ...spreadFigures('check_cpu_ms', checkMs),
    ...loadFigures(before, after),
  };
}
