import { Session } from 'node:inspector';

/**
 * Block coverage for the coverage-guided fuzzer, from V8's precise coverage
 * (`Profiler.startPreciseCoverage({ callCount: false, detailed: true })`).
 *
 * In that binary mode V8 reports, for each function that ran since the last take, its whole range
 * with count 1 and the ranges *inside* it that did not run (count 0); a block that ran is merged
 * into its parent and not listed. So a block is known by the "not run" reports it once appeared
 * in, and it counts as reached in a run when its function ran and no count-0 range of that run
 * covers it. `BlockMap` keeps the blocks learned so far (the universe) and the ones ever reached.
 *
 * A block first learned from a count-0 report may have been reached, unreported, by an earlier
 * input; it is then counted as new once more. That over-counts by at most one per block.
 */
export interface CoverageRange {
  startOffset: number;
  endOffset: number;
  count: number;
}
export interface FunctionCoverage {
  ranges: CoverageRange[];
}
export interface ScriptCoverage {
  url: string;
  functions: FunctionCoverage[];
}

export class BlockMap {
  /** Per function (url + function start): the block ranges learned, as `start:end`. */
  private readonly universe = new Map<string, Map<string, [number, number]>>();
  private readonly reached = new Set<string>();

  /** A map that knows the blocks this one learned but has reached none (to measure a fixed set of inputs against them). */
  sameBlocks(): BlockMap {
    const m = new BlockMap();
    for (const [k, v] of this.universe) m.universe.set(k, new Map(v));
    return m;
  }

  /** Blocks ever reached. */
  get size(): number {
    return this.reached.size;
  }

  /** Blocks learned, reached or not. */
  get known(): number {
    let n = 0;
    for (const blocks of this.universe.values()) n += blocks.size;
    return n;
  }

  /**
   * Records one run's coverage (already restricted to the target's files) and returns how many
   * blocks it reached that no earlier run had. With `record` false it only counts them.
   */
  add(scripts: readonly ScriptCoverage[], record = true): number {
    let fresh = 0;
    for (const script of scripts) {
      for (const fn of script.functions) {
        const top = fn.ranges[0];
        if (!top || top.count === 0) continue;
        const fnKey = `${script.url}#${top.startOffset}`;
        let blocks = this.universe.get(fnKey);
        if (!blocks) {
          blocks = new Map();
          if (record) this.universe.set(fnKey, blocks);
        }
        const zero = fn.ranges.filter((r) => r.count === 0);
        const visit = (b: string, s: number, e: number) => {
          const id = `${fnKey}@${b}`;
          if (this.reached.has(id) || zero.some((z) => z.startOffset <= s && e <= z.endOffset)) return;
          if (record) this.reached.add(id);
          fresh++;
        };
        for (const [b, [s, e]] of blocks) visit(b, s, e);
        for (const r of fn.ranges) {
          const b = `${r.startOffset}:${r.endOffset}`;
          if (blocks.has(b)) continue;
          visit(b, r.startOffset, r.endOffset);
          if (record) blocks.set(b, [r.startOffset, r.endOffset]);
        }
      }
    }
    return fresh;
  }
}

/**
 * Precise coverage of this thread's isolate through node:inspector. `take()` returns the coverage
 * since the previous take (V8 resets the counters on each take), restricted to scripts whose URL
 * contains one of `include`. Posting to an in-thread session is synchronous.
 */
export class PreciseCoverage {
  private readonly session = new Session();

  constructor(private readonly include: readonly string[]) {
    this.session.connect();
    this.post('Profiler.enable');
    this.post('Profiler.startPreciseCoverage', { callCount: false, detailed: true });
  }

  take(): ScriptCoverage[] {
    const r = this.post('Profiler.takePreciseCoverage') as { result: ScriptCoverage[] };
    return r.result.filter((s) => this.include.some((p) => s.url.includes(p)));
  }

  close(): void {
    this.post('Profiler.stopPreciseCoverage');
    this.session.disconnect();
  }

  private post(method: string, params?: object): unknown {
    let out: unknown;
    let failure: Error | null = null;
    this.session.post(method, params, (err, res) => {
      failure = err;
      out = res;
    });
    if (failure) throw failure;
    return out;
  }
}
