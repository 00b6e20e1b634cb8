/**
 * Figures that hold up when re-run: the machine's load before and after, N interleaved rounds, and
 * each figure as its median with its spread (min–max). A ratio against an anchor is taken round by
 * round, anchor and case measured back to back, so a neighbour's burst hits both alike; the ratio's
 * median and spread are over those per-round ratios, never a ratio of two medians taken at
 * different moments.
 *
 *   const before = machineLoad();
 *   const r = await interleavedRounds({ rounds: 5, cases: ['bare', 'pixel'], run: (c) => measureOnce(c) });
 *   const after = machineLoad();
 *   console.log(showSpread(r.spread('pixel', 'us_per_req')), showSpread(r.ratio('bare', 'pixel', 'us_per_req')));
 *   return { ...loadFigures(before, after), ...spreadFigures('pixel_us', r.spread('pixel', 'us_per_req')) };
 */
import { cpus, loadavg } from 'node:os';
import { median } from './stats.ts';

/** The machine's load average (1, 5 and 15 minutes) and its core count, at one moment. */
export interface Load {
  one: number;
  five: number;
  fifteen: number;
  cores: number;
}

export function machineLoad(): Load {
  const [one, five, fifteen] = loadavg() as [number, number, number];
  return { one, five, fifteen, cores: cpus().length };
}

/** "load average 3.21 / 2.10 / 1.50 (1, 5, 15 min) on 2 cores". */
export function describeLoad(l: Load): string {
  return `load average ${l.one.toFixed(2)} / ${l.five.toFixed(2)} / ${l.fifteen.toFixed(2)} (1, 5, 15 min) on ${l.cores} cores`;
}

/** For the JSON line: the one-minute load before and after, and the cores. */
export function loadFigures(before: Load, after: Load): Record<string, number> {
  return { load_before: round2(before.one), load_after: round2(after.one), cores: before.cores };
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  /** How many values (rounds). */
  n: number;
}

/** Median and min–max; NaN for none. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), n: values.length };
}

/** "41.2 (39.0–45.1)", each number through fmt (3 significant figures by default). */
export function showSpread(s: Spread, fmt: (x: number) => string = (x) => x.toPrecision(3)): string {
  return `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;
}

/** For the JSON line: { key: median, key_min, key_max }, rounded to `digits` decimals. */
export function spreadFigures(key: string, s: Spread, digits = 1): Record<string, number> {
  const f = 10 ** digits;
  const r = (x: number) => Math.round(x * f) / f;
  return { [key]: r(s.median), [`${key}_min`]: r(s.min), [`${key}_max`]: r(s.max) };
}

/** What one run of one case measured: figures by name (units in the name: `ns_per_op`, `us_per_req`). */
export type Figures = Record<string, number>;

export interface RoundsOptions<C extends string> {
  /** Timed rounds; each runs every case once. */
  rounds: number;
  cases: readonly C[];
  /** Runs one case once and returns its figures. Warm-up runs get round -1. */
  run(c: C, round: number): Figures | Promise<Figures>;
  /** One untimed run of each case before the rounds (JIT, caches, pools). Default true. */
  warmup?: boolean;
  /** Called after each round with that round's figures (to print progress). */
  onRound?(round: number, figures: Record<C, Figures>): void;
}

export interface RoundsResult<C extends string> {
  rounds: number;
  /** Each round's value of a figure for a case, in round order. */
  values(c: C, figure: string): number[];
  /** Median and min–max of a figure over the rounds. */
  spread(c: C, figure: string): Spread;
  /**
   * numerator's figure / denominator's figure, per round, then median and min–max. For a cost
   * (time per operation) put the anchor on top to read "the case does X of what the anchor does":
   * ratio('bare', 'pixel', 'us_per_req') is the pixel's throughput per CPU as a share of the bare route's.
   */
  ratio(numerator: C, denominator: C, figure: string): Spread;
}

/**
 * Runs the cases in interleaved rounds: every round runs each case once, and the starting case
 * rotates (round r starts with case r mod k), so no case always runs first, after a pause, or
 * right after the same neighbour.
 */
export async function interleavedRounds<C extends string>(o: RoundsOptions<C>): Promise<RoundsResult<C>> {
  if (!(Number.isSafeInteger(o.rounds) && o.rounds >= 1)) throw new RangeError('rounds must be a positive integer');
  if (o.cases.length === 0) throw new RangeError('no cases');
  if (o.warmup ?? true) for (const c of o.cases) await o.run(c, -1);
  const byRound: Array<Record<C, Figures>> = [];
  const k = o.cases.length;
  for (let r = 0; r < o.rounds; r++) {
    const figures = {} as Record<C, Figures>;
    for (let j = 0; j < k; j++) {
      const c = o.cases[(r + j) % k]!;
      figures[c] = await o.run(c, r);
    }
    byRound.push(figures);
    o.onRound?.(r, figures);
  }
  return roundsResult(o.cases, byRound);
}

/** The result of rounds already measured (one record of figures per case per round). */
export function roundsResult<C extends string>(cases: readonly C[], byRound: ReadonlyArray<Record<C, Figures>>): RoundsResult<C> {
  const value = (f: Figures | undefined, c: C, figure: string): number => {
    const v = f?.[figure];
    if (typeof v !== 'number') throw new Error(`case ${c} reported no figure ${figure}`);
    return v;
  };
  const values = (c: C, figure: string) => {
    if (!cases.includes(c)) throw new Error(`unknown case ${c}`);
    return byRound.map((f) => value(f[c], c, figure));
  };
  return {
    rounds: byRound.length,
    values,
    spread: (c, figure) => spread(values(c, figure)),
    ratio: (a, b, figure) => {
      const x = values(a, figure);
      const y = values(b, figure);
      return spread(x.map((v, i) => v / y[i]!));
    },
  };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
