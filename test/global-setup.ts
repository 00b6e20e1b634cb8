import { openStore } from '../src/store/store.ts';
import { migrate } from '../src/store/migrate.ts';
import { pgUrlFor, retryWhileInUse, templateName, testBackends, withAdmin } from './pg-admin.ts';
import { ensurePgliteTemplate } from './pglite-template.ts';

/**
 * Builds the migrated PostgreSQL template once per run (graphile-worker's pattern): each test file
 * then clones it, which takes milliseconds instead of a migration run.
 */
export default async function setup(): Promise<() => Promise<void>> {
  // PGlite's counterpart, built here once rather than by the first test files at the same time.
  if (testBackends().includes('pglite')) await ensurePgliteTemplate();
  if (!testBackends().includes('postgres')) return async () => undefined;
  const tpl = templateName();
  await withAdmin(async (c) => {
    const exists = await c.query('select 1 from pg_database where datname = $1', [tpl]);
    if (exists.rowCount) return;
    // Built under another name and renamed when complete, so that a run killed half-way never
    // leaves a half-migrated template behind.
    const building = `cadenza_build_${process.pid}`;
    await c.query(`drop database if exists ${building} with (force)`);
    await c.query(`create database ${building}`);
    const store = await openStore({ databaseUrl: pgUrlFor(building), poolSize: 2 });
    try {
      await migrate(store);
    } finally {
      await store.close();
    }
    try {
      await retryWhileInUse(() => c.query(`alter database ${building} rename to ${tpl}`));
    } catch (e) {
      // Another run finished first (42P04 duplicate_database): use theirs.
      await c.query(`drop database if exists ${building} with (force)`);
      if ((e as { code?: string }).code !== '42P04') throw e;
    }
  });
  // Test databases are named cadenza_t_<pid of the vitest process>_…; at the end drop this run's
  // leftovers and those of runs whose process is gone, never those of a run still going.
  return async () => {
    await withAdmin(async (c) => {
      const old = await c.query(`select datname from pg_database where datname like 'cadenza\\_t\\_%'`);
      for (const r of old.rows) {
        const pid = Number(String(r.datname).split('_')[2]);
        if (pid !== process.pid && isAlive(pid)) continue;
        await c.query(`drop database if exists ${r.datname} with (force)`).catch(() => undefined);
      }
    });
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
