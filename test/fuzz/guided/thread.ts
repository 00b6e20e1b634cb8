import { parentPort, workerData } from 'node:worker_threads';
import { PreciseCoverage } from './coverage.ts';
import { runEngine, type EngineOptions, type EngineStats, type Finding } from './engine.ts';
import type { FuzzTarget, Seed } from './targets.ts';

/**
 * The fuzzer's thread: its own isolate, so precise coverage lists only the target's modules (not
 * the runner's), and a run that never returns can be ended from outside. Before each run the input
 * goes into shared memory (length, then bytes) with the start time, for the watchdog to read.
 */
export interface ThreadData {
  target: string;
  /** The module whose `TARGETS` names the target; targets.ts when absent. */
  targetModule?: string;
  seed: number;
  durationMs: number;
  maxExecs?: number;
  hangMs: number;
  maxInputBytes: number;
  regression: Seed[];
  /** [Float64 start time (ms since the epoch, 0 when idle)][Int32 length][bytes…] */
  shared: SharedArrayBuffer;
}

export type ThreadMessage = { kind: 'finding'; finding: Finding } | { kind: 'progress'; stats: EngineStats } | { kind: 'done'; stats: EngineStats };

const d = workerData as ThreadData;
const { TARGETS } = (await import(d.targetModule ?? './targets.ts')) as { TARGETS: Record<string, FuzzTarget> };
const target = TARGETS[d.target]!;
const started = new Float64Array(d.shared, 0, 1);
const length = new Int32Array(d.shared, 8, 1);
const bytes = new Uint8Array(d.shared, 12);
const cov = new PreciseCoverage(target.sources);
const post = (m: ThreadMessage) => parentPort!.postMessage(m);

const options: EngineOptions = {
  target,
  coverage: () => cov.take(),
  seed: d.seed,
  durationMs: d.durationMs,
  maxExecs: d.maxExecs,
  regression: d.regression,
  hangMs: d.hangMs,
  maxInputBytes: d.maxInputBytes,
  beforeRun(input) {
    const n = Math.min(input.length, bytes.length);
    bytes.set(input.subarray(0, n));
    length[0] = n;
    started[0] = Date.now();
  },
  onFinding: (finding) => post({ kind: 'finding', finding }),
  onProgress: (stats) => post({ kind: 'progress', stats }),
};
const stats = await runEngine(options);
started[0] = 0;
cov.close();
post({ kind: 'done', stats });
