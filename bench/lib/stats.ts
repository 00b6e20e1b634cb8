/** The p-th percentile (0..100) by linear interpolation between closest ranks; NaN when empty. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = (Math.min(Math.max(p, 0), 100) / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

export function median(values: ArrayLike<number>): number {
  return percentile(values, 50);
}

/** Median and spread of a figure over a benchmark's rounds. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: ArrayLike<number>): Spread {
  const v = Array.from(values).filter((x) => Number.isFinite(x));
  return { median: median(v), min: v.length ? Math.min(...v) : Number.NaN, max: v.length ? Math.max(...v) : Number.NaN };
}

/** "640 (598–702)": the median, then the spread over the rounds. */
export function spreadText(s: Spread, digits = 0): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(digits) : String(x));
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}
