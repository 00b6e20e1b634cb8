import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../../src/common/errors.ts';
import { CORPUS_DIR, loadRegression, runGuided } from './campaign.ts';
import { BlockMap, PreciseCoverage } from './coverage.ts';
import { runEngine } from './engine.ts';
import { TARGETS, type FuzzTarget } from './targets.ts';
import { toyDepth } from './toy-target.ts';

/**
 * The short run of the coverage-guided fuzzer inside `npm test` (the long one:
 * `npm run fuzz -- --coverage --target NAME --seconds N`): the regression corpus replays through
 * every target without a crash or a hang, the engine finds its way into a target whose branches
 * need each other, and the block bookkeeping reads V8's reports as it should.
 */
const BUDGET_MS = 2_000;

describe('the coverage-guided fuzzer', () => {
  for (const [name, target] of Object.entries(TARGETS)) {
    it(`replays the ${name} regression corpus: no crash, each input within ${BUDGET_MS} ms`, async () => {
      const inputs = loadRegression(CORPUS_DIR, name);
      for (const s of [...target.seeds().slice(0, 3), ...inputs]) {
        const t0 = performance.now();
        try {
          await target.run(s.bytes);
        } catch (e) {
          if (!isCadenzaError(e)) throw new Error(`${s.name}: ${e instanceof Error ? e.message : String(e)}`);
        }
        expect(performance.now() - t0, s.name).toBeLessThan(BUDGET_MS);
      }
    }, 60_000);
  }

  it('finds its way four branches deep into a target where each branch needs the one before', async () => {
    const toy: FuzzTarget = {
      name: 'toy',
      kind: 'text',
      sources: ['toy-target'],
      dictionary: ['F', 'U', 'Z', 'x'],
      seeds: () => [{ name: 'hello', bytes: new Uint8Array(Buffer.from('hello')) }],
      run: toyDepth,
    };
    const coverage = new PreciseCoverage(toy.sources);
    let deepest = 0;
    try {
      const stats = await runEngine({
        target: toy,
        coverage: () => coverage.take(),
        seed: 20261202,
        durationMs: 30_000,
        maxExecs: 40_000,
        hangMs: 2_000,
        maxInputBytes: 64,
        stop: () => deepest === 4,
        onFinding: (f) => {
          if (f.kind === 'new_coverage') deepest = Math.max(deepest, toyDepth(f.input));
        },
      });
      expect(stats.seedBlocks).toBe(2); // the function and its first return
      expect(stats.blocks).toBeGreaterThan(stats.seedBlocks);
      expect(stats.crashes + stats.hangs).toBe(0);
      console.log(`toy target: depth ${deepest} after ${stats.execs} executions (${stats.execsPerSecond}/s)`);
    } finally {
      coverage.close();
    }
    expect(deepest).toBe(4);
  }, 60_000);

  it('runs a target in its worker thread and reports the figures', async () => {
    const r = await runGuided({
      target: 'gmail', seed: 1, seconds: 1, hangMs: 2_000, watchdogMs: 10_000, maxInputBytes: 1 << 16,
      corpusDir: CORPUS_DIR, saveCorpus: false, keepMaxBytes: 0, keepTotalBytes: 0, findingsDir: '.scratch/fuzz-findings-test',
    });
    expect(r.stats.execs).toBeGreaterThan(0);
    expect(r.stats.seedBlocks).toBeGreaterThan(10);
    expect(r.stats.blocks).toBeGreaterThanOrEqual(r.stats.seedBlocks);
    expect(r.crashes).toEqual([]);
    expect(r.hangs).toEqual([]);
  }, 60_000);

  it('ends a thread whose run never returns, saves the input as a hang and goes on in a fresh thread', async () => {
    const findings = mkdtempSync(path.join(tmpdir(), 'fuzz-findings-'));
    try {
      const r = await runGuided({
        target: 'spin', targetModule: new URL('./toy-targets.ts', import.meta.url), seed: 1, seconds: 6, hangMs: 300, watchdogMs: 1_000,
        maxInputBytes: 256, corpusDir: CORPUS_DIR, saveCorpus: false, keepMaxBytes: 0, keepTotalBytes: 0, findingsDir: findings,
      });
      expect(r.hangs.length).toBeGreaterThan(0);
      expect(r.restarts).toBeGreaterThan(0);
      const saved = readFileSync(r.hangs[0]!.file);
      expect(saved[0]).toBe(0x58);
    } finally {
      rmSync(findings, { recursive: true, force: true });
    }
  }, 60_000);

  it('counts a block reached when its function ran and no count-0 range of the run covers it', () => {
    const m = new BlockMap();
    const run = (zero: Array<[number, number]>) => [
      { url: 'file:///t.ts', functions: [{ ranges: [{ startOffset: 0, endOffset: 100, count: 1 }, ...zero.map(([s, e]) => ({ startOffset: s, endOffset: e, count: 0 }))] }] },
    ];
    expect(m.add(run([[10, 50]]))).toBe(1); // the function
    expect(m.add(run([[20, 30], [60, 70]]))).toBe(1); // 10–50 ran this time (60–70 is learned, not reached)
    expect(m.add(run([[10, 50]]), false)).toBe(1); // 60–70 would be new: only counted
    expect(m.add(run([[10, 50]]))).toBe(1);
    expect(m.add(run([]))).toBe(1); // 20–30
    expect(m.add(run([]))).toBe(0);
    expect([m.size, m.known]).toEqual([4, 4]);
    // A function that did not run reaches nothing, whatever it lists.
    expect(m.add([{ url: 'file:///t.ts', functions: [{ ranges: [{ startOffset: 200, endOffset: 300, count: 0 }] }] }])).toBe(0);
  });
});
