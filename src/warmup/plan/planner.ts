/**
 * The warmup day planner (pure): who writes to whom today, and when. Every rule it keeps is
 * listed in check.ts, which checks a plan independently of this code.
 *
 * 1. Each sender's wish: its ramp ceiling (ramp.ts) drawn a little lower (volumeJitter), within
 *    its remaining daily cap (warmup and campaign share the cap) and what fits in its window at its
 *    gap around the campaign sends already planned (times.ts).
 * 2. Receivers, round by round: every sender with wishes left takes one receiver per round, so
 *    receive load builds evenly and no sender takes the whole pool's capacity first. A receiver
 *    must pass every pairing rule (other domain, other workspace, pair not written today nor in
 *    the cooldown, one per receiver domain, the domain-pair limit, the same-provider share, the
 *    receiver's limit); of the first few that pass, the least loaded (receives / limit) is taken
 *    (the "power of a few choices", which keeps receive load flat without a global search).
 *    Small pools are scanned in full in random order; large ones sampled, so a day of 10,000
 *    members plans in well under a second. A sender for which no receiver is found stops for the
 *    day (the shortfall is reported).
 * 3. Times: each sender's sends spread over its window (times.ts), receivers in random order.
 */
import type { Random } from '../../common/random.ts';
import { receiveLimit, warmupCeiling } from './ramp.ts';
import { fitCount, freeIntervals, placeTimes } from './times.ts';
import type { PlannedWarmupSend, WarmupPlan, WarmupPlanInput } from './types.ts';
import { planConfig, validatePlanInput } from './validate.ts';

/** Below this many members, a receiver search scans the whole pool; above, it samples. */
const SCAN_BELOW = 512;
/** Sampled candidates per search in a large pool before the sender gives up for the day. */
const SAMPLES = 96;
/** Receivers that pass the rules compared per pick: the least loaded of them is taken. */
const CHOICES = 3;

export function planWarmupDay(input: WarmupPlanInput, random: Random): WarmupPlan {
  validatePlanInput(input);
  const c = planConfig(input.config);
  const members = input.members;
  const n = members.length;
  const index = new Map<string, number>();
  members.forEach((m, i) => index.set(m.id, i));

  // Labels as small integers, so each rule is an array or integer-keyed lookup.
  const intern = (values: string[]) => {
    const ids = new Map<string, number>();
    return values.map((v) => ids.get(v) ?? (ids.set(v, ids.size), ids.size - 1));
  };
  const domain = intern(members.map((m) => m.domain.toLowerCase()));
  const workspace = intern(members.map((m) => m.workspace));
  const provider = intern(members.map((m) => m.provider));
  const domains = Math.max(1, ...domain) + 1;

  const pairKey = (i: number, j: number) => (i < j ? i * n + j : j * n + i);
  const blocked = new Set<number>();
  for (const r of input.recentPairs) {
    const i = index.get(r.a);
    const j = index.get(r.b);
    if (i !== undefined && j !== undefined && r.daysAgo < c.pairCooldownDays) blocked.add(pairKey(i, j));
  }

  const rnd = random.fork('warmup-plan');
  const free = members.map((m) => freeIntervals(m.window, m.busy, m.minGapMs));
  const wanted = members.map((m, i) => {
    if (!m.canSend) return 0;
    const ceiling = warmupCeiling(m, c);
    const drawn = ceiling - Math.floor(rnd.next() * (Math.floor(ceiling * c.volumeJitter) + 1));
    return Math.max(0, Math.min(drawn, m.remainingCap, fitCount(free[i]!, m.minGapMs)));
  });
  const recvLimit = members.map((m) => receiveLimit(m, c));

  const received = new Int32Array(n);
  const sent = new Int32Array(n);
  const sameProvider = new Int32Array(n);
  const toDomain = new Map<number, number>(); // sender × receiver domain → count
  const domainPair = new Map<number, number>(); // sender domain × receiver domain → count
  const receivers: number[][] = members.map(() => []);

  const passes = (s: number, r: number): boolean => {
    if (r === s || received[r]! >= recvLimit[r]!) return false;
    if (domain[r] === domain[s] || workspace[r] === workspace[s]) return false;
    if (blocked.has(pairKey(s, r))) return false;
    if ((toDomain.get(s * domains + domain[r]!) ?? 0) >= c.maxPerReceiverDomain) return false;
    if ((domainPair.get(domain[s]! * domains + domain[r]!) ?? 0) >= c.maxPerDomainPair) return false;
    if (provider[r] === provider[s] && sameProvider[s]! + 1 > Math.floor((sent[s]! + 1) * c.maxSameProviderShare)) return false;
    return true;
  };
  const load = (r: number) => (recvLimit[r]! === 0 ? Infinity : received[r]! / recvLimit[r]!);

  const pick = (s: number): number => {
    let best = -1;
    let found = 0;
    const consider = (r: number) => {
      if (!passes(s, r)) return false;
      if (best < 0 || load(r) < load(best)) best = r;
      return ++found >= CHOICES;
    };
    if (n < SCAN_BELOW) {
      // A fresh random order per search: a fixed order would hand every sender the same receivers first.
      const start = rnd.int(0, n - 1);
      const stride = coprimeStride(n, rnd);
      for (let k = 0; k < n; k++) if (consider((start + k * stride) % n)) break;
    } else {
      for (let k = 0; k < SAMPLES; k++) if (consider(rnd.int(0, n - 1))) break;
    }
    return best;
  };

  let active = shuffle(
    members.map((_, i) => i).filter((i) => wanted[i]! > 0),
    rnd,
  );
  while (active.length > 0) {
    const next: number[] = [];
    for (const s of active) {
      const r = pick(s);
      if (r < 0) continue; // nothing passes today: the sender stops (reported as shortfall)
      receivers[s]!.push(r);
      sent[s]!++;
      received[r]!++;
      blocked.add(pairKey(s, r)); // each pair once a day
      if (provider[r] === provider[s]) sameProvider[s]!++;
      bump(toDomain, s * domains + domain[r]!);
      bump(domainPair, domain[s]! * domains + domain[r]!);
      if (sent[s]! < wanted[s]!) next.push(s);
    }
    active = shuffle(next, rnd);
  }

  const sends: PlannedWarmupSend[] = [];
  const shortfall: WarmupPlan['shortfall'] = [];
  members.forEach((m, s) => {
    const to = shuffle(receivers[s]!, rnd);
    const times = placeTimes(free[s]!, to.length, m.minGapMs, rnd);
    to.forEach((r, k) => sends.push({ sender: m.id, receiver: members[r]!.id, at: times[k]! }));
    if (wanted[s]! > 0) shortfall.push({ id: m.id, wanted: wanted[s]!, planned: to.length });
  });
  sends.sort((a, b) => a.at - b.at);
  return { sends, shortfall };
}

function bump(m: Map<number, number>, k: number): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

function shuffle<T>(a: T[], random: Random): T[] {
  for (let i = a.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** A step coprime with n, so start + k·step (mod n) visits every index once: a cheap random order. */
function coprimeStride(n: number, random: Random): number {
  if (n <= 2) return 1;
  for (;;) {
    const s = random.int(1, n - 1);
    if (gcd(s, n) === 1) return s;
  }
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}
