/**
 * The anchor for queue benchmarks: graphile-worker (a PostgreSQL job queue, 2 statements a job in
 * its default mode: get_job with FOR UPDATE SKIP LOCKED, complete_job) processing no-op jobs on
 * the same database, in its default mode (no local queue, no batched completion), at the given
 * concurrency, on a pool of concurrency + 2 connections (its LISTEN connection and one spare). Its schema goes into the database once (runMigrations); each round adds n jobs in
 * one statement while the workers wait, and times until no job is left (completed and deleted).
 */
import { Logger, run, runMigrations, type Runner } from 'graphile-worker';
import pg from 'pg';

const quiet = new Logger(() => () => undefined);

export interface AnchorRound {
  jobs: number;
  seconds: number;
  jobsPerS: number;
}

export async function graphileRound(connectionString: string, n: number, concurrency: number): Promise<AnchorRound> {
  await runMigrations({ connectionString, logger: quiet });
  let done = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));
  // Our own pool, ended after the runner stopped, so that dropping the database afterwards does not
  // hit a connection graphile-worker still holds.
  const pgPool = new pg.Pool({ connectionString, max: concurrency + 2 });
  pgPool.on('error', () => undefined);
  pgPool.on('connect', (c) => c.on('error', () => undefined));
  const runner: Runner = await run({
    pgPool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: quiet,
    taskList: {
      noop: async () => {
        if (++done === n) finished();
      },
    },
  });
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const t0 = process.hrtime.bigint();
    await client.query(`select graphile_worker.add_job('noop', '{}'::json) from generate_series(1, $1)`, [n]);
    await allDone;
    // The last jobs' completions commit just after their tasks returned: done when none is left.
    while (Number((await client.query<{ n: string }>(`select count(*) as n from graphile_worker.jobs`)).rows[0]!.n) > 0) {
      await new Promise((r) => setTimeout(r, 1));
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    return { jobs: n, seconds, jobsPerS: n / seconds };
  } finally {
    await runner.stop();
    await client.end();
    await pgPool.end();
  }
}
