import { normalQuantile } from './normal.ts';

/**
 * The Wilson score interval for a proportion (Wilson 1927; recommended over the Wald interval by
 * Brown, Cai & DasGupta, "Interval Estimation for a Binomial Proportion", Statistical Science
 * 2001): it stays inside [0, 1] and keeps its coverage at small counts and rates near 0, which is
 * where reply rates live. A fixed-sample interval: it says how precise a rate is now, not whether
 * one arm beats another under repeated looks (that is the sequential test's job, msprt.ts).
 */
export interface RateInterval {
  rate: number | null;
  low: number;
  high: number;
}

export function wilson(successes: number, trials: number, level = 0.95): RateInterval {
  if (trials <= 0) return { rate: null, low: 0, high: 1 };
  const z = normalQuantile(1 - (1 - level) / 2);
  const p = successes / trials;
  const z2n = (z * z) / trials;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2n / (4 * trials))) / (1 + z2n);
  return { rate: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}
