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
  const total = s.weights.reduce((a, w) => a + w, 0);
  const daily: ArmCounts[][] = [];
  const exposures = new Array<number>(k).fill(0);
  for (let d = 0; d < s.days; d++) {
    const batch = Array.from({ length: k }, () => ({ n: 0, x: 0 }));
    for (let j = 0; j < s.enrollmentsPerDay; j++) {
      let u = random.next() * total;
      let arm = 0;
      while (arm < k - 1 && (u -= s.weights[arm]!) >= 0) arm++;
      batch[arm]!.n++;
      if (random.next() < s.rates[arm]!) batch[arm]!.x++;
    }
    daily.push(batch);
  }
  // Look at the end of every day: the verdict sees the sends whose window has closed by then.
  const looks: ArmCounts[][] = [];
  let srmAlarm = false;
  let closed = Array.from({ length: k }, () => ({ n: 0, x: 0 }));
  for (let day = 1; day <= s.days + s.replyWindowDays; day++) {
    const sentDay = day - 1;
    if (sentDay < s.days) daily[sentDay]!.forEach((c, i) => (exposures[i]! += c.n));
    const matured = day - 1 - s.replyWindowDays;
    if (matured >= 0 && matured < s.days) closed = closed.map((c, i) => ({ n: c.n + daily[matured]![i]!.n, x: c.x + daily[matured]![i]!.x }));
    looks.push(closed);
    const v = experimentVerdict(looks, exposures, s.weights, s);
    // A mismatch withholds the winner at that look only; the trial goes on, as a real one would.
    srmAlarm ||= v.srm.mismatch;
    if (v.winner !== null) return { winner: v.winner, day, srmAlarm };
  }
  return { winner: null, day: null, srmAlarm };
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

export function estimate(s: Scenario, trials: number, seed: number | string): Estimate {
  const root = seededRandom(seed);
  const wins = new Array<number>(s.rates.length).fill(0);
  const days: number[] = [];
  let srmAlarms = 0;
  for (let t = 0; t < trials; t++) {
    const r = runTrial(s, root.fork(`trial-${t}`));
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
