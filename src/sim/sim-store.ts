import { sql } from 'kysely';
import pg from 'pg';
import { migrate } from '../store/migrate.ts';
import { openStore, type Store } from '../store/store.ts';

let scratch = 0;

export interface SimStore {
  store: Store;
  close(): Promise<void>;
}

/**
 * A store for simulations: PGlite in memory, or a scratch database created on the PostgreSQL server
 * of `databaseUrl` (dropped on close; the database the URL names is never touched). Commits do not
 * wait for the WAL flush: the simulation's crashes are rollbacks, not lost pages, and nothing here
 * needs to survive the process.
 */
export async function openSimStore(opts: { databaseUrl?: string | undefined } = {}): Promise<SimStore> {
  if (!opts.databaseUrl) {
    const store = await openStore({});
    await migrate(store);
    await sql`set synchronous_commit = off`.execute(store.db);
    return { store, close: () => store.close() };
  }
  const admin = opts.databaseUrl;
  const name = `cadenza_sim_${process.pid}_${++scratch}`;
  const withAdmin = async (q: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(q);
    } finally {
      await c.end();
    }
  };
  await withAdmin(`drop database if exists ${name} with (force)`);
  await withAdmin(`create database ${name}`);
  await withAdmin(`alter database ${name} set synchronous_commit = off`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const store = await openStore({ databaseUrl: url.toString(), poolSize: 4 });
  await migrate(store);
  return {
    store,
    async close() {
      await store.close();
      await withAdmin(`drop database if exists ${name} with (force)`);
    },
  };
}
