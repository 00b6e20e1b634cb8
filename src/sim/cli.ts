import { Command, InvalidArgumentError } from 'commander';
import { formatSummary, runSeeds } from './batch.ts';
import { openSimStore } from './sim-store.ts';
import { runSeed, SimulationFailure, type Injection } from './simulation.ts';

/**
 * `npm run sim -- --seeds 1000 [--from N] [--enrollments 12] [--days 21] [--backend pglite|postgres]`
 * runs many seeds and prints a summary; `--seed N` replays one seed (with --trace, step by step).
 * Exit status 1 when any seed breaks a promise; each failure prints its seed and replay command.
 */

function int(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a whole number`);
    return n;
  };
}

const injections: Injection[] = ['duplicate-delivery', 'send-after-stop', 'lost-enrollment', 'arm-hours-ignored', 'no-last-look', 'no-mailbox-look', 'unpaced', 'copy-after-answer', 'bypass-suppress', 'no-warmup-recogniser', 'uncounted-calls', 'crm-swallow-errors', 'lost-moved-to'];

const program = new Command('sim')
  .description('Deterministic simulation of the sequence engine, scheduler and outbox, checking the promises after every step')
  .option('--seeds <n>', 'how many seeds to run', int('--seeds'), 100)
  .option('--from <n>', 'first seed', int('--from'), 1)
  .option('--seed <n>', 'replay this one seed', int('--seed'))
  .option('--enrollments <n>', 'leads per seed', int('--enrollments'), 12)
  .option('--days <n>', 'simulated days per seed', int('--days'), 21)
  .option('--fault-rate <x>', 'scale the crash and transport-failure probabilities (0 = none)', (v) => Number(v), 1)
  .option('--backend <name>', 'pglite (in memory) or postgres', 'pglite')
  .option('--database-url <url>', 'PostgreSQL server for --backend postgres (env DATABASE_URL); a scratch database is created and dropped')
  .option('--inject <fault>', `plant a fault the checks must catch (${injections.join(', ')})`)
  .option('--trace', 'print every step (with --seed)')
  .option('--fail-fast', 'stop at the first failing seed')
  .showHelpAfterError();

async function main(): Promise<number> {
  program.parse(process.argv);
  const o = program.opts<{
    seeds: number; from: number; seed?: number; enrollments: number; days: number; faultRate: number;
    backend: string; databaseUrl?: string; inject?: string; trace?: boolean; failFast?: boolean;
  }>();
  if (o.backend !== 'pglite' && o.backend !== 'postgres') throw new InvalidArgumentError(`unknown backend '${o.backend}'`);
  if (o.inject !== undefined && !injections.includes(o.inject as Injection)) throw new InvalidArgumentError(`unknown fault '${o.inject}'`);
  const databaseUrl = o.backend === 'postgres' ? (o.databaseUrl ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres') : undefined;
  const sim = await openSimStore({ databaseUrl });
  const common = { enrollments: o.enrollments, days: o.days, faultRate: o.faultRate, store: sim.store, ...(o.inject ? { inject: o.inject as Injection } : {}) };
  try {
    if (o.seed !== undefined) {
      try {
        const r = await runSeed({ ...common, seed: o.seed, ...(o.trace ? { onStep: (line: string) => console.log(line) } : {}) });
        console.log(`seed ${o.seed}: ok, ${r.stats.steps} steps, ${r.stats.deliveries} sends, ${r.stats.crashes.total} crashes, digest ${r.digest}`);
        return 0;
      } catch (e) {
        if (!(e instanceof SimulationFailure)) throw e;
        console.error(e.message);
        return 1;
      }
    }
    const started = performance.now();
    const tty = process.stderr.isTTY;
    let lastLine = 0;
    const result = await runSeeds(
      {
        ...common,
        from: o.from,
        seeds: o.seeds,
        failFast: o.failFast ?? false,
        onSeed(seed, done, failure) {
          if (failure) process.stderr.write(`${tty ? '\n' : ''}seed ${seed} FAILED: ${failure.invariant}\n`);
          const secs = (performance.now() - started) / 1000;
          const line = `seed ${seed} (${done}/${o.seeds}) ${(done / secs).toFixed(2)} seeds/s`;
          if (tty) process.stderr.write(`\r${line}   `);
          else if (done === o.seeds || done - lastLine >= Math.max(1, Math.floor(o.seeds / 10))) {
            process.stderr.write(`${line}\n`);
            lastLine = done;
          }
        },
      },
      () => performance.now(),
    );
    if (tty) process.stderr.write('\n');
    console.log(`backend ${sim.store.backend}, ${o.enrollments} leads per seed, ${o.days} days per seed`);
    console.log(formatSummary(result));
    return result.failures.length ? 1 : 0;
  } finally {
    await sim.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 2;
  },
);
