import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { inputId, type EngineStats, type Finding } from './engine.ts';
import type { Seed } from './targets.ts';
import type { ThreadData, ThreadMessage } from './thread.ts';

/**
 * One guided campaign on one target, from the main thread: runs the engine in a worker thread
 * (thread.ts) and watches it. A run that has not returned after `watchdogMs` is a hang the engine
 * cannot report itself (the thread is stuck in it): the watchdog reads the input from shared
 * memory, ends the thread and starts a fresh one for the rest of the time, with the inputs found
 * so far as its regression corpus. Crashes and hangs are written to `findingsDir`; inputs that
 * reached new code to `corpusDir/<target>/` when `saveCorpus` (only small ones: it is committed).
 */
export const CORPUS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus');
const THREAD = new URL('./thread.mjs', import.meta.url);

export interface GuidedOptions {
  target: string;
  /** The module whose `TARGETS` names the target (default targets.ts; a test passes its own). */
  targetModule?: URL;
  seed: number;
  seconds: number;
  maxExecs?: number;
  hangMs: number;
  watchdogMs: number;
  maxInputBytes: number;
  corpusDir: string;
  saveCorpus: boolean;
  /** Largest input kept in the committed corpus, and the most bytes per target. */
  keepMaxBytes: number;
  keepTotalBytes: number;
  findingsDir: string;
  onProgress?: (s: EngineStats) => void;
  onFinding?: (f: Finding, savedAs: string | null) => void;
}

export interface GuidedResult {
  stats: EngineStats;
  restarts: number;
  crashes: Array<{ file: string; problem: string }>;
  hangs: Array<{ file: string; ms: number | null }>;
  saved: string[];
}

/** The committed regression corpus of one target (file name = content id). */
export function loadRegression(corpusDir: string, target: string): Seed[] {
  const dir = path.join(corpusDir, target);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .map((f) => ({ name: `${target}/${f}`, bytes: new Uint8Array(readFileSync(path.join(dir, f))) }));
}

function dirBytes(dir: string): number {
  return existsSync(dir) ? readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0) : 0;
}

function emptyStats(target: string): EngineStats {
  return {
    target, seeds: 0, seedBlocks: 0, regressionBlocks: 0, blocks: 0, knownBlocks: 0,
    execs: 0, fuzzMs: 0, execsPerSecond: 0, corpus: 0, found: 0, crashes: 0, hangs: 0, slowestMs: 0,
  };
}

export async function runGuided(o: GuidedOptions): Promise<GuidedResult> {
  const regression = loadRegression(o.corpusDir, o.target);
  const keepDir = path.join(o.corpusDir, o.target);
  let keptBytes = dirBytes(keepDir);
  const result: GuidedResult = { stats: null as unknown as EngineStats, restarts: 0, crashes: [], hangs: [], saved: [] };
  const found: Seed[] = [];
  const deadline = Date.now() + o.seconds * 1000;
  // Executions of threads the watchdog ended (their last progress report).
  let execsBefore = 0;
  let lastProgress: EngineStats | null = null;

  const save = (kind: string, input: Uint8Array): string => {
    mkdirSync(o.findingsDir, { recursive: true });
    const file = path.join(o.findingsDir, `${o.target}-${kind}-${inputId(input)}`);
    writeFileSync(file, input);
    return file;
  };

  for (;;) {
    const shared = new SharedArrayBuffer(12 + o.maxInputBytes);
    const started = new Float64Array(shared, 0, 1);
    const data: ThreadData = {
      target: o.target,
      targetModule: o.targetModule?.href,
      seed: o.seed + result.restarts,
      durationMs: Math.max(0, deadline - Date.now()),
      maxExecs: o.maxExecs === undefined ? undefined : Math.max(0, o.maxExecs - execsBefore),
      hangMs: o.hangMs,
      maxInputBytes: o.maxInputBytes,
      regression: [...regression, ...found],
      shared,
    };
    const worker = new Worker(THREAD, { workerData: data });
    const outcome = await new Promise<{ stats: EngineStats } | { hung: Uint8Array; ms: number } | { failed: string }>((resolve) => {
      const watchdog = setInterval(() => {
        const t0 = started[0]!;
        if (t0 > 0 && Date.now() - t0 > o.watchdogMs) {
          clearInterval(watchdog);
          const n = new Int32Array(shared, 8, 1)[0]!;
          const input = new Uint8Array(shared, 12, n).slice();
          void worker.terminate().then(() => resolve({ hung: input, ms: Date.now() - t0 }));
        }
      }, 200);
      worker.on('message', (m: ThreadMessage) => {
        if (m.kind === 'progress') {
          lastProgress = m.stats;
          o.onProgress?.({ ...m.stats, execs: execsBefore + m.stats.execs });
        }
        else if (m.kind === 'done') {
          clearInterval(watchdog);
          resolve({ stats: m.stats });
        } else {
          const f = m.finding;
          let savedAs: string | null = null;
          if (f.kind === 'new_coverage') {
            found.push({ name: `found-${inputId(f.input)}`, bytes: f.input });
            const file = path.join(keepDir, inputId(f.input));
            if (o.saveCorpus && f.input.length <= o.keepMaxBytes && keptBytes + f.input.length <= o.keepTotalBytes && !existsSync(file)) {
              mkdirSync(keepDir, { recursive: true });
              savedAs = file;
              writeFileSync(savedAs, f.input);
              keptBytes += f.input.length;
              result.saved.push(savedAs);
            }
          } else if (f.kind === 'crash') {
            savedAs = save('crash', f.input);
            result.crashes.push({ file: savedAs, problem: f.problem });
          } else {
            savedAs = save('hang', f.input);
            result.hangs.push({ file: savedAs, ms: Math.round(f.ms) });
          }
          o.onFinding?.(f, savedAs);
        }
      });
      worker.on('error', (e) => {
        clearInterval(watchdog);
        resolve({ failed: e.stack ?? e.message });
      });
    });
    if ('stats' in outcome) {
      // Every thread runs the same seeds first, so the last one's seedBlocks is the baseline.
      result.stats = { ...outcome.stats, execs: execsBefore + outcome.stats.execs };
      return result;
    }
    if ('failed' in outcome) throw new Error(`the fuzzing thread failed: ${outcome.failed}`);
    const file = save('hang', outcome.hung);
    result.hangs.push({ file, ms: null });
    o.onFinding?.({ kind: 'hang', input: outcome.hung, ms: outcome.ms, mutations: [] }, file);
    const ended = lastProgress as EngineStats | null;
    execsBefore += ended?.execs ?? 0;
    lastProgress = null;
    if (result.restarts >= 5 || Date.now() >= deadline) {
      // Time is up (or the target hangs over and over): the figures are the ended thread's last report.
      result.stats = { ...(ended ?? emptyStats(o.target)), execs: execsBefore };
      return result;
    }
    result.restarts++;
  }
}
