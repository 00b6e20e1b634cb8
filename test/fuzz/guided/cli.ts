import path from 'node:path';
import { parseArgs } from 'node:util';
import { CORPUS_DIR, runGuided } from './campaign.ts';
import { TARGETS } from './targets.ts';

/**
 * `npm run fuzz -- --coverage --target NAME|all --seconds N [--seed S] [--max-execs N]
 * [--hang-ms 2000] [--save-corpus] [--findings DIR]`: coverage-guided fuzzing of one target (or
 * each in turn). Prints progress, then per target the blocks the seeds alone reached against the
 * blocks at the end, and one JSON line. Exit status 1 when a crash or a hang was found; their
 * inputs are in the findings folder (default `.scratch/fuzz-findings`, ignored by git).
 * `--save-corpus` adds the small inputs that reached new code to the committed regression corpus
 * (test/fuzz/guided/corpus/<target>/).
 */
export async function runGuidedCli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      coverage: { type: 'boolean' },
      target: { type: 'string', default: 'all' },
      seconds: { type: 'string', default: '60' },
      seed: { type: 'string', default: String(Date.now() % 1_000_000) },
      'max-execs': { type: 'string' },
      'hang-ms': { type: 'string', default: '2000' },
      'save-corpus': { type: 'boolean', default: false },
      findings: { type: 'string', default: path.join('.scratch', 'fuzz-findings') },
    },
  });
  const names = values.target === 'all' ? Object.keys(TARGETS) : values.target!.split(',');
  const unknown = names.filter((n) => !TARGETS[n]);
  if (unknown.length) {
    console.error(`unknown target ${unknown.join(', ')}; the targets: ${Object.keys(TARGETS).join(', ')}, all`);
    return 2;
  }
  const hangMs = Number(values['hang-ms']);
  let failed = false;
  for (const target of names) {
    const seed = Number(values.seed);
    const r = await runGuided({
      target,
      seed,
      seconds: Number(values.seconds),
      maxExecs: values['max-execs'] === undefined ? undefined : Number(values['max-execs']),
      hangMs,
      // A run the thread cannot return from: well past the hang bound, so a slow run is reported by the engine with its time.
      watchdogMs: Math.max(5 * hangMs, 10_000),
      maxInputBytes: 1 << 20,
      corpusDir: CORPUS_DIR,
      saveCorpus: values['save-corpus']!,
      keepMaxBytes: 8 * 1024,
      keepTotalBytes: 48 * 1024,
      findingsDir: values.findings!,
      onProgress: (s) =>
        process.stderr.write(`\r${target}: ${s.execs} execs (${s.execsPerSecond}/s), blocks ${s.regressionBlocks} at start → ${s.blocks}, corpus ${s.corpus}, crashes ${s.crashes}, hangs ${s.hangs}   `),
      onFinding: (f, file) => {
        if (f.kind === 'crash') process.stderr.write(`\nCRASH ${file} (${f.mutations.join('+')}): ${f.problem.split('\n').slice(0, 3).join(' | ')}\n`);
        if (f.kind === 'hang') process.stderr.write(`\nHANG ${file} (${Math.round(f.ms)} ms, ${f.mutations.join('+')})\n`);
      },
    });
    const s = r.stats;
    process.stderr.write(`\n${target}: seeds alone reached ${s.seedBlocks} blocks; after ${s.execs} executions (${s.execsPerSecond}/s) ${s.blocks} (+${s.blocks - s.seedBlocks}) of ${s.knownBlocks} known\n`);
    console.log(
      JSON.stringify({
        target, seed, seconds: Number((s.fuzzMs / 1000).toFixed(1)), execs: s.execs, execsPerSecond: s.execsPerSecond,
        seeds: s.seeds, seedBlocks: s.seedBlocks, blocks: s.blocks, knownBlocks: s.knownBlocks,
        corpus: s.corpus, found: s.found, saved: r.saved.length, crashes: r.crashes.length, hangs: r.hangs.length, slowestMs: Math.round(s.slowestMs), restarts: r.restarts,
      }),
    );
    if (r.crashes.length || r.hangs.length) failed = true;
  }
  return failed ? 1 : 0;
}
