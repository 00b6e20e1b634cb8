import { createHash } from 'node:crypto';
import { isCadenzaError } from '../../../src/common/errors.ts';
import { seededRandom } from '../../../src/common/random.ts';
import { BlockMap, type ScriptCoverage } from './coverage.ts';
import { mutateInput } from './mutate.ts';
import type { FuzzTarget, Seed } from './targets.ts';

/**
 * The coverage-guided loop, in the thread that runs the target: run every seed (the baseline),
 * replay the regression corpus, then mutate corpus entries until the time or execution budget is
 * spent, keeping each input that reaches a block no earlier input reached. A throw that is not a
 * CadenzaError is a crash; a run slower than `hangMs` is a hang (a run that never returns is the
 * watchdog's: see campaign.ts). Both are reported with their input.
 *
 * Everything random comes from `seed`, so a run replays; wall-clock only bounds it.
 */
export interface EngineOptions {
  target: FuzzTarget;
  /** Takes the coverage since the previous take, restricted to the target's sources. */
  coverage: () => ScriptCoverage[];
  seed: number;
  /** Stop after this long (ms) of fuzzing, not counting the seeds. */
  durationMs: number;
  /** Or after this many mutated executions. */
  maxExecs?: number;
  /** Or as soon as this says so (a test that found what it looked for). */
  stop?: () => boolean;
  /** Inputs found by earlier runs (test/fuzz/guided/corpus/<target>/): replayed after the seeds. */
  regression?: Seed[];
  hangMs: number;
  maxInputBytes: number;
  /** Mutated inputs run between two coverage takes (default 16). */
  batch?: number;
  /** Told the input before each run: the watchdog saves it if the run never returns. */
  beforeRun?: (input: Uint8Array) => void;
  onFinding?: (f: Finding) => void;
  onProgress?: (s: EngineStats) => void;
}

export type Finding =
  | { kind: 'new_coverage'; input: Uint8Array; mutations: string[] }
  | { kind: 'crash'; input: Uint8Array; problem: string; mutations: string[] }
  | { kind: 'hang'; input: Uint8Array; ms: number; mutations: string[] };

export interface EngineStats {
  target: string;
  seeds: number;
  /** Blocks reached by the seeds alone, counted at the end against every block learned. */
  seedBlocks: number;
  /** Blocks after replaying the regression corpus too. */
  regressionBlocks: number;
  /** Blocks at the end. */
  blocks: number;
  /** Blocks learned, reached or not (a lower bound of the target's blocks). */
  knownBlocks: number;
  execs: number;
  fuzzMs: number;
  execsPerSecond: number;
  corpus: number;
  found: number;
  crashes: number;
  hangs: number;
  slowestMs: number;
}

export function inputId(input: Uint8Array): string {
  return createHash('sha1').update(input).digest('hex').slice(0, 16);
}

export async function runEngine(o: EngineOptions): Promise<EngineStats> {
  const map = new BlockMap();
  const t = o.target;
  const seeds = t.seeds();
  const stats: EngineStats = {
    target: t.name, seeds: seeds.length, seedBlocks: 0, regressionBlocks: 0, blocks: 0, knownBlocks: 0,
    execs: 0, fuzzMs: 0, execsPerSecond: 0, corpus: 0, found: 0, crashes: 0, hangs: 0, slowestMs: 0,
  };
  const corpus: Uint8Array[] = [];
  const reported = new Set<string>();

  /** Runs one input; false when it crashed or hung (reported once per distinct problem). */
  const runOne = async (input: Uint8Array, mutations: string[]): Promise<boolean> => {
    o.beforeRun?.(input);
    const t0 = performance.now();
    let problem: string | null = null;
    try {
      await t.run(input);
    } catch (e) {
      if (!isCadenzaError(e)) problem = e instanceof Error ? (e.stack ?? e.message) : String(e);
    }
    const ms = performance.now() - t0;
    stats.slowestMs = Math.max(stats.slowestMs, ms);
    if (problem === null && ms <= o.hangMs) return true;
    // One report per distinct problem (the message and the first frame) or per slow input.
    const key = problem !== null ? problem.split('\n').slice(0, 2).join('\n') : inputId(input);
    if (!reported.has(key)) {
      reported.add(key);
      if (problem !== null) {
        stats.crashes++;
        o.onFinding?.({ kind: 'crash', input, problem, mutations });
      } else {
        stats.hangs++;
        o.onFinding?.({ kind: 'hang', input, ms, mutations });
      }
    }
    return false;
  };
  /** Runs one input and records its coverage; true when it reached a block first. */
  const runAndRecord = async (input: Uint8Array, mutations: string[]): Promise<boolean> => {
    const ok = await runOne(input, mutations);
    const fresh = map.add(o.coverage());
    return ok && fresh > 0;
  };

  o.coverage(); // what loading the modules ran is not the seeds' coverage
  for (const s of seeds) {
    await runAndRecord(s.bytes, ['seed']);
    corpus.push(s.bytes);
  }
  stats.seedBlocks = map.size;
  for (const r of o.regression ?? []) {
    await runAndRecord(r.bytes, ['regression']);
    corpus.push(r.bytes);
  }
  stats.regressionBlocks = map.size;
  if (!corpus.length) corpus.push(new Uint8Array(0));

  const rnd = seededRandom(`guided:${t.name}:${o.seed}`);
  const ctx = { corpus, dictionary: t.dictionary, kind: t.kind, maxBytes: o.maxInputBytes };
  const batch = o.batch ?? 16;
  const started = performance.now();
  let lastProgress = started;
  const firstFound = corpus.length;
  const more = () => performance.now() - started < o.durationMs && (o.maxExecs === undefined || stats.execs < o.maxExecs) && !o.stop?.();
  while (more()) {
    // A take costs milliseconds, a run of a small input a fraction of one: coverage is taken once
    // for a batch, and only a batch that reached something new is run again one input at a time.
    const ran: Array<{ bytes: Uint8Array; mutations: string[] }> = [];
    for (let k = 0; k < batch && more(); k++) {
      // Half the time a recent find: new entries are where the unexplored code is.
      const parent = corpus.length > firstFound && rnd.next() < 0.5 ? corpus[rnd.int(firstFound, corpus.length - 1)]! : corpus[rnd.int(0, corpus.length - 1)]!;
      const m = mutateInput(parent, rnd, ctx);
      stats.execs++;
      if (await runOne(m.bytes, m.mutations)) ran.push(m);
    }
    if (map.add(o.coverage(), false) > 0) {
      for (const m of ran) {
        if (!(await runAndRecord(m.bytes, m.mutations))) continue;
        corpus.push(m.bytes);
        stats.found++;
        o.onFinding?.({ kind: 'new_coverage', input: m.bytes, mutations: m.mutations });
      }
    }
    const now = performance.now();
    if (o.onProgress && now - lastProgress > 1000) {
      lastProgress = now;
      o.onProgress(finish(stats, map, corpus, now - started));
    }
  }
  const end = finish(stats, map, corpus, performance.now() - started);
  // The seeds again, measured against every block learned while fuzzing: a block the seeds reached
  // that was only learned later (see BlockMap) then counts for the seeds, not as a find.
  const seedsOnly = map.sameBlocks();
  o.coverage();
  for (const s of seeds) {
    await runOne(s.bytes, ['seed']);
    seedsOnly.add(o.coverage());
  }
  return { ...end, seedBlocks: seedsOnly.size };
}

function finish(stats: EngineStats, map: BlockMap, corpus: Uint8Array[], ms: number): EngineStats {
  return {
    ...stats,
    blocks: map.size,
    knownBlocks: map.known,
    corpus: corpus.length,
    fuzzMs: Math.round(ms),
    execsPerSecond: Number((stats.execs / Math.max(ms / 1000, 1e-3)).toFixed(1)),
  };
}
