import { parseArgs } from 'node:util';
import { runCampaign, type CampaignStats } from './campaign.ts';
import { runGuidedCli } from './guided/cli.ts';
import { heapUsedAfterGc } from './heap.ts';
import { loadSeeds } from './seeds.ts';

/**
 * The long fuzzing run: `npm run fuzz -- --iterations 20000 [--seed 7] [--only I] [--budget-ms 3000]`.
 * Prints a progress line, then the figures; exits 1 on any failure, naming the seed and iteration
 * that replay it.
 *
 * With `--coverage` the coverage-guided fuzzer runs instead (guided/cli.ts):
 * `npm run fuzz -- --coverage --target mime|dsn|ooo|unsubscribe|threading|gmail|graph|all --seconds 60`.
 */
if (process.argv.includes('--coverage')) {
  process.exitCode = await runGuidedCli(process.argv.slice(2));
  process.exit(process.exitCode);
}

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '2000' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    only: { type: 'string' },
    'budget-ms': { type: 'string', default: '5000' },
    'huge-budget-ms': { type: 'string', default: '30000' },
    'huge-rate': { type: 'string', default: '0.01' },
  },
});

const seed = Number(values.seed);
const iterations = Number(values.iterations);
const seeds = loadSeeds();
const heapBefore = heapUsedAfterGc();
const started = performance.now();
let lastPrint = 0;
const progress = (done: number, s: CampaignStats) => {
  const now = performance.now();
  if (now - lastPrint < 1000 && done !== iterations) return;
  lastPrint = now;
  const rate = done / ((now - started) / 1000);
  process.stderr.write(`\rfuzz seed ${seed}: ${done}/${iterations} (${rate.toFixed(0)}/s), ${s.failures.length} failures, slowest ${Math.round(s.maxMs)} ms, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB   `);
};
const stats = await runCampaign(seeds, {
  seed,
  iterations,
  only: values.only === undefined ? undefined : Number(values.only),
  budgetMs: Number(values['budget-ms']),
  hugeBudgetMs: Number(values['huge-budget-ms']),
  hugeRate: Number(values['huge-rate']),
  onProgress: progress,
});
const heapAfter = heapUsedAfterGc();
const secs = (performance.now() - started) / 1000;
process.stderr.write('\n');
console.log(
  JSON.stringify({
    seed,
    seedMessages: seeds.length,
    iterations: stats.iterations,
    seconds: Number(secs.toFixed(1)),
    perSecond: Number((stats.iterations / secs).toFixed(1)),
    meanMs: Number((stats.totalMs / Math.max(1, stats.iterations)).toFixed(2)),
    maxMs: Math.round(stats.maxMs),
    maxMsIteration: stats.maxMsIteration,
    quarantined: stats.quarantined,
    heapGrowthMB: heapBefore === null || heapAfter === null ? null : Number(((heapAfter - heapBefore) / 2 ** 20).toFixed(1)),
    failures: stats.failures.length,
  }),
);
for (const f of stats.failures.slice(0, 20)) {
  console.log(`FAIL iteration ${f.iteration} (replay: npm run fuzz -- --seed ${seed} --only ${f.iteration}) seed file ${f.seedFile}, mutations ${f.mutations.join('+')}: ${f.problem}`);
}
process.exitCode = stats.failures.length ? 1 : 0;
