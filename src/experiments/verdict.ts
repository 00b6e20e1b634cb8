import { initialState, msprtLook, type ArmCounts, type MsprtState } from './stats/msprt.ts';
import { sampleRatioMismatch, type SrmVerdict } from './stats/srm.ts';
import { wilson, type RateInterval } from './stats/wilson.ts';

/**
 * The verdict on one experiment from its data: pure, so the API, the automatic winner and the
 * simulation that measures its error rates (simulate.ts) all judge by this one function.
 *
 * - The first arm is the control; every other arm is compared with it by the mSPRT (stats/msprt.ts)
 *   at level α/(k−1) (Bonferroni: with k arms, the chance that any comparison falsely rejects stays
 *   at most α).
 * - Looks are the cumulative counts at each checkpoint (the API uses the end of each UTC day). Only
 *   looks at which every arm has at least `minSamplePerArm` closed exposures count: before that the
 *   normal approximation under the test is poor at reply rates of a few percent, and starting the
 *   monitoring later keeps it valid (any stopping time is allowed, this is one).
 * - A sample-ratio mismatch (stats/srm.ts) withholds any winner: the data are suspect.
 * - Winner: the challenger with the largest lift among those significantly better than the control;
 *   the control when every challenger is significantly worse; otherwise none yet.
 */

export interface ExperimentOptions {
  alpha: number;
  tau?: number;
  minSamplePerArm: number;
  /** Interval level of the per-arm rates (default 1 − α). */
  level?: number;
}

export const DEFAULT_ALPHA = 0.05;
export const DEFAULT_MIN_SAMPLE_PER_ARM = 200;

export interface ArmVerdict {
  index: number;
  closed: ArmCounts;
  rate: RateInterval;
  /** Against the control (null for the control itself). */
  comparison: (Omit<MsprtState, 'looks' | 'logLambda'> & { significant: boolean }) | null;
}

export interface Verdict {
  arms: ArmVerdict[];
  minSampleReached: boolean;
  /** The level each comparison is tested at (α/(k−1)). */
  comparisonAlpha: number;
  srm: SrmVerdict;
  /** Index of the winning arm, or null. */
  winner: number | null;
  /** Why there is no winner, or what made it. */
  reason: string;
}

/**
 * @param looks cumulative closed counts per arm at each checkpoint, oldest first (the last is now)
 * @param exposures every exposure per arm so far, window closed or not (for the ratio check)
 * @param weights the arms' configured weights (for the ratio check)
 */
export function experimentVerdict(looks: readonly (readonly ArmCounts[])[], exposures: readonly number[], weights: readonly number[], o: ExperimentOptions): Verdict {
  const k = weights.length;
  const last = looks[looks.length - 1] ?? weights.map(() => ({ n: 0, x: 0 }));
  const comparisonAlpha = k > 1 ? o.alpha / (k - 1) : o.alpha;
  const level = o.level ?? 1 - o.alpha;
  const states: MsprtState[] = Array.from({ length: k }, () => initialState);
  for (const look of looks) {
    if (!look.every((c) => c.n >= o.minSamplePerArm)) continue;
    for (let i = 1; i < k; i++) {
      states[i] = msprtLook(states[i]!, look[0]!, look[i]!, { alpha: comparisonAlpha, ...(o.tau !== undefined ? { tau: o.tau } : {}) });
    }
  }
  const arms: ArmVerdict[] = last.map((c, i) => ({
    index: i,
    closed: c,
    rate: wilson(c.x, c.n, level),
    comparison:
      i === 0
        ? null
        : { pValue: states[i]!.pValue, low: states[i]!.low, high: states[i]!.high, difference: states[i]!.difference, significant: states[i]!.pValue <= comparisonAlpha },
  }));
  const minSampleReached = k > 1 && last.every((c) => c.n >= o.minSamplePerArm);
  const srm = sampleRatioMismatch(exposures, weights);
  const base = { arms, minSampleReached, comparisonAlpha, srm };
  if (k < 2) return { ...base, winner: null, reason: 'fewer than two arms' };
  if (!minSampleReached) return { ...base, winner: null, reason: `minimum sample not reached (${o.minSamplePerArm} closed exposures per arm)` };
  if (srm.mismatch) return { ...base, winner: null, reason: `sample ratio mismatch (p = ${srm.pValue.toExponential(2)}): the exposures do not fit the weights; check sending before trusting any rate` };
  const challengers = arms.slice(1);
  const better = challengers.filter((a) => a.comparison!.significant && a.comparison!.difference > 0);
  if (better.length) {
    const best = better.reduce((x, y) => (y.comparison!.difference > x.comparison!.difference ? y : x));
    return { ...base, winner: best.index, reason: `beats the control (always-valid p = ${best.comparison!.pValue.toPrecision(2)} ≤ ${comparisonAlpha.toPrecision(2)})` };
  }
  if (challengers.every((a) => a.comparison!.significant && a.comparison!.difference < 0)) {
    return { ...base, winner: 0, reason: 'the control beats every other arm' };
  }
  return { ...base, winner: null, reason: 'no significant difference yet' };
}
