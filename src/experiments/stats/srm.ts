import { chiSquareSurvival } from './chi-square.ts';

/**
 * Sample-ratio mismatch: do the arms' exposure counts fit the weights they were assigned by? A
 * mismatch means assignment or exposure logging is broken (a variant that fails to send, a filter
 * that drops one arm's sends), and then no comparison of the arms can be trusted (Fabijan et al.,
 * "Diagnosing Sample Ratio Mismatch in Online Controlled Experiments", KDD 2019). Pearson's
 * chi-square goodness of fit with k−1 degrees of freedom; the alarm threshold is strict (p < 0.001)
 * because the check runs at every look and a false alarm stops a healthy experiment.
 */
export const SRM_ALARM_P = 0.001;

export interface SrmVerdict {
  chiSquare: number;
  pValue: number;
  mismatch: boolean;
}

/**
 * Arms of weight 0 are left out: a variant paused by setting its weight to 0 keeps the exposures
 * it had, which no longer fit any current weight. The check is against the current weights, so
 * changing weights mid-experiment makes it alarm; the docs say to start a new experiment instead.
 */
export function sampleRatioMismatch(counts: readonly number[], weights: readonly number[], alarmP = SRM_ALARM_P): SrmVerdict {
  const live = weights.map((w, i) => ({ w, c: counts[i] ?? 0 })).filter((a) => a.w > 0);
  const n = live.reduce((s, a) => s + a.c, 0);
  const total = live.reduce((s, a) => s + a.w, 0);
  if (n === 0 || live.length < 2) return { chiSquare: 0, pValue: 1, mismatch: false };
  let chi = 0;
  for (const a of live) {
    const expected = (n * a.w) / total;
    chi += (a.c - expected) ** 2 / expected;
  }
  const pValue = chiSquareSurvival(chi, live.length - 1);
  return { chiSquare: chi, pValue, mismatch: pValue < alarmP };
}
