import { loadavg } from 'node:os';
import { median } from './stats.ts';

/** Median and spread of a figure measured once per round. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** '1,234 (1,100–1,300)': the median, then the spread, for people. */
export function formatSpread(s: Spread, digits = 0): string {
  const f = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/** The 1-minute load average: printed before and after a run, since a loaded machine shifts every figure. */
export function load1(): number {
  return Math.round(loadavg()[0]! * 100) / 100;
}
