import { seededRandom, type Random } from '../common/random.ts';
import type { ArmCounts } from './stats/msprt.ts';
import { experimentVerdict, type ExperimentOptions } from './verdict.ts';

/**
 * Experiments with known true rates, to measure what the verdict (verdict.ts) promises: the false
 * positive rate under daily peeking with equal arms (A/A), and the power at a stated effect.
 *
 * Each simulated day `enrollmentsPerDay` enrollments are sent, each to an arm drawn by the weights,
 * and each replies within the window with its arm's true rate. Someone looks every day, and the
 * verdict sees only the sends whose window has closed (sent `replyWindowDays` or more days before),
 * as the API does. A trial declares a winner at the first look whose verdict has one (and stops
 * there, as the automatic winner would); a false positive is any winner when the rates are equal.
 * Pure but for the seeded random source: the same seed gives the same figures.
 */

export interface Scenario extends ExperimentOptions {
  rates: number[];
  weights: number[];
  enrollmentsPerDay: number;
  /** Days of sending; looks continue until the last sends' windows close. */
  days: number;
  replyWindowDays: number;
}

export interface TrialResult {
  /** The arm declared winner, or null when none was by the end. */
  winner: number | null;
  /** The day it was declared (1-based). */
  day: number | null;
  /** The ratio check alarmed at some look (with equal true weights: a false alarm). */
  srmAlarm: boolean;
}

export function runTrial(s: Scenario, random: Random): TrialResult {
  const k = s.rates.length;
  const daily: ArmCounts[][] = [];
  for (let d = 0; d < s.days; d++) {
    const batch = Array.from({ length: k }, () => ({ n: 0, x: 0 }));
    for (let j = 0; j < s.enrollmentsPerDay; j++) {
      const arm = drawArm(s.weights, random);
      batch[arm]!.n++;
      if (random.next() < s.rates[arm]!) batch[arm]!.x++;
    }
    daily.push(batch);
  }
  return lookDaily(s, s.weights, daily);
}

/** An arm drawn by the weights. */
function drawArm(weights: readonly number[], random: Random): number {
  const total = weights.reduce((a, w) => a + w, 0);
  let u = random.next() * total;
  let arm = 0;
  while (arm < weights.length - 1 && (u -= weights[arm]!) >= 0) arm++;
  return arm;
}

/**
 * Someone looks at the end of every day, until the last exposures' windows close: the verdict sees
 * the exposures whose window has closed by then (`daily[d]`: those of day d, with their outcomes).
 */
function lookDaily(s: Pick<Scenario, 'days' | 'replyWindowDays'> & ExperimentOptions, weights: readonly number[], daily: ArmCounts[][]): TrialResult {
  const k = weights.length;
  const exposures = new Array<number>(k).fill(0);
  const looks: ArmCounts[][] = [];
  let srmAlarm = false;
  let closed = Array.from({ length: k }, () => ({ n: 0, x: 0 }));
  for (let day = 1; day <= s.days + s.replyWindowDays; day++) {
    const sentDay = day - 1;
    if (sentDay < s.days) daily[sentDay]!.forEach((c, i) => (exposures[i]! += c.n));
    const matured = day - 1 - s.replyWindowDays;
    if (matured >= 0 && matured < s.days) closed = closed.map((c, i) => ({ n: c.n + daily[matured]![i]!.n, x: c.x + daily[matured]![i]!.x }));
    looks.push(closed);
    const v = experimentVerdict(looks, exposures, weights, s);
    // A mismatch withholds the winner at that look only; the trial goes on, as a real one would.
    srmAlarm ||= v.srm.mismatch;
    if (v.winner !== null) return { winner: v.winner, day, srmAlarm };
  }
  return { winner: null, day: null, srmAlarm };
}

/**
 * A timing experiment (arm-view.ts): the arms differ in the delay before a follow-up and in its send
 * hours. The truth is stated by send hour, not by arm: `replyByHour[h]` is the chance that a
 * follow-up sent at local hour h is answered. Each enrollment is exposed when its follow-up is
 * planned (ops/figures.ts sequenceExperimentExposures); during the delay it may answer the earlier
 * email (`earlyRate`, the same whatever the arm; then the follow-up is never sent); else the
 * follow-up goes out after the arm's delay at an hour drawn evenly in the arm's hours, and is
 * answered with that hour's chance, 0 to `replyLagDays` days later. An answer counts when it comes
 * inside the window that opened at the exposure, as in the API.
 */
export interface TimingArm {
  weight: number;
  delayDays: number;
  /** Local send hours [from, to): the follow-up goes out at a whole hour in it. */
  hours: [number, number];
}

export interface TimingScenario extends ExperimentOptions {
  arms: TimingArm[];
  replyByHour: readonly number[];
  earlyRate: number;
  replyLagDays: number;
  enrollmentsPerDay: number;
  days: number;
  replyWindowDays: number;
}

/** The arm's true rate from the hours' rates: what the test should find (for the docs' table). */
export function timingArmRate(s: TimingScenario, arm: TimingArm): number {
  const hs = Array.from({ length: arm.hours[1] - arm.hours[0] }, (_, i) => arm.hours[0] + i);
  const followUp = hs.reduce((a, h) => a + s.replyByHour[h]!, 0) / hs.length;
  // A follow-up answered later than the window is not counted: lag drawn evenly in 0..replyLagDays.
  const inWindow = Array.from({ length: s.replyLagDays + 1 }, (_, l) => (arm.delayDays + l < s.replyWindowDays ? 1 : 0)).reduce((a: number, b: number) => a + b, 0) / (s.replyLagDays + 1);
  return s.earlyRate + (1 - s.earlyRate) * followUp * inWindow;
}

export function runTimingTrial(s: TimingScenario, random: Random): TrialResult {
  const weights = s.arms.map((a) => a.weight);
  const daily: ArmCounts[][] = [];
  for (let d = 0; d < s.days; d++) {
    const batch = s.arms.map(() => ({ n: 0, x: 0 }));
    for (let j = 0; j < s.enrollmentsPerDay; j++) {
      const i = drawArm(weights, random);
      const arm = s.arms[i]!;
      batch[i]!.n++;
      if (random.next() < s.earlyRate) {
        batch[i]!.x++;
        continue;
      }
      const hour = arm.hours[0] + random.int(0, arm.hours[1] - arm.hours[0] - 1);
      const lag = random.int(0, s.replyLagDays);
      if (random.next() < s.replyByHour[hour]! && arm.delayDays + lag < s.replyWindowDays) batch[i]!.x++;
    }
    daily.push(batch);
  }
  return lookDaily(s, weights, daily);
}

export interface Estimate {
  trials: number;
  /** Share of trials that declared any winner. */
  decided: number;
  /** Share of trials that declared each arm. */
  winnerShare: number[];
  /** Share of trials whose ratio check alarmed at some look. */
  srmAlarms: number;
  /** Median day of the decisions made. */
  medianDay: number | null;
}

export function estimate(s: Scenario | TimingScenario, trials: number, seed: number | string): Estimate {
  const root = seededRandom(seed);
  const trial = 'rates' in s ? (r: Random) => runTrial(s, r) : (r: Random) => runTimingTrial(s, r);
  const wins = new Array<number>('rates' in s ? s.rates.length : s.arms.length).fill(0);
  const days: number[] = [];
  let srmAlarms = 0;
  for (let t = 0; t < trials; t++) {
    const r = trial(root.fork(`trial-${t}`));
    if (r.winner !== null) {
      wins[r.winner]!++;
      days.push(r.day!);
    }
    if (r.srmAlarm) srmAlarms++;
  }
  days.sort((a, b) => a - b);
  return {
    trials,
    decided: days.length / trials,
    winnerShare: wins.map((w) => w / trials),
    srmAlarms: srmAlarms / trials,
    medianDay: days.length ? days[Math.floor((days.length - 1) / 2)]! : null,
  };
}
