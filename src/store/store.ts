import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { cadenzaError } from '../common/errors.ts';
import { lockEmbeddedDir } from './embedded-lock.ts';
import { pgliteDialect } from './pglite-dialect.ts';
import { connectWritable, FailoverPool } from './pg-failover.ts';
import { parsePgHosts } from './pg-hosts.ts';
import { explainConnectFailure } from './pg-tls-errors.ts';
import { preparingPool } from './prepared-statements.ts';
import { ensurePrivateDir, restrictTree } from '../common/private-files.ts';
import type { Database } from './schema.ts';

export type Backend = 'pglite' | 'postgres';
export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;

/**
 * The one interface over both backends. Everything above store/ speaks Kysely (or `sql` templates)
 * to `db`; only migrations need `runScript`, because PGlite's extended protocol refuses
 * multi-statement text and migrations are plain SQL files.
 */
export interface Store {
  readonly backend: Backend;
  readonly db: Db;
  /** Runs a multi-statement SQL script in one transaction. */
  runScript(script: string): Promise<void>;
  /** Holds a session-level advisory lock around fn (PostgreSQL); PGlite has one session already. */
  withExclusiveLock<T>(key: number, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** postgres://… selects PostgreSQL; absent selects PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite's folder; absent means in memory (tests). */
  dataDir?: string | undefined;
  /**
   * In memory only: start as a copy of this dump of a data folder (PGlite's `dumpDataDir`) instead
   * of an empty cluster. Tests start every store from one migrated dump: opening from it takes a
   * tenth of a new cluster's set-up and skips the migrations (test/pglite-template.ts).
   */
  startFrom?: Blob | undefined;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /**
   * PostgreSQL: how many named prepared statements each connection keeps (prepared-statements.ts);
   * 0 sends every statement unnamed (parsed and planned on every call). Default 256: every
   * statement of the hot paths, with room for the rest.
   */
  preparedStatements?: number;
  /**
   * PostgreSQL: how long a new connection keeps looking for a host that takes writes (the URL
   * may name several: pg-hosts.ts) before the store answers STORE_UNAVAILABLE. It spans a
   * failover (the primary gone, the standby not yet promoted). Default 30 s.
   */
  failoverWaitMs?: number;
}

export async function openStore(opts: StoreOptions): Promise<Store> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.poolSize ?? 10, opts.preparedStatements ?? 256, opts.failoverWaitMs ?? 30_000);
  if (opts.startFrom && opts.dataDir) throw new Error('startFrom is for an in-memory store, not a data folder');
  return openPGlite(opts.dataDir, opts.startFrom);
}

async function openPGlite(dataDir: string | undefined, startFrom?: Blob): Promise<Store> {
  const held = new Map<number, Promise<void>>();
  if (dataDir) {
    // The database files are the account's own: the folder is 0700, so nobody else reaches what
    // is inside; the files themselves lose group and other permissions at open and at close
    // (PGlite writes with the process umask, which `cadenza` sets to 0077: cli/main.ts).
    ensurePrivateDir(dataDir);
  }
  // One process at a time: a second one would silently lose writes (embedded-lock.ts).
  const unlock = dataDir ? lockEmbeddedDir(dataDir) : () => undefined;
  let pglite: PGlite;
  try {
    // The extensions the migrations create (PostgreSQL has them as contrib; PGlite bundles them).
    const extensions = { pg_trgm };
    pglite = dataDir ? new PGlite(dataDir, { extensions }) : new PGlite({ extensions, ...(startFrom ? { loadDataDir: startFrom } : {}) });
    await pglite.waitReady;
    if (dataDir) restrictTree(dataDir);
  } catch (e) {
    unlock();
    throw cadenzaError('STORE_UNAVAILABLE', `cannot open the embedded store${dataDir ? ` in ${dataDir}` : ''}: ${(e as Error).message}`);
  }
  const db = new Kysely<Database>({ dialect: pgliteDialect(pglite) });
  return {
    backend: 'pglite',
    db,
    async runScript(script) {
      // Through Kysely's connection lease so that no other query interleaves.
      await db.connection().execute(async () => {
        await pglite.transaction(async (tx) => {
          await tx.exec(script);
        });
      });
    },
    // One process holds the embedded database, so the lock is this process's own: callers with
    // the same key run one after another (a check-then-create must not interleave with another).
    async withExclusiveLock(key, fn) {
      const before = held.get(key) ?? Promise.resolve();
      const run = before.then(fn, fn);
      const tail = run.then(() => undefined, () => undefined);
      held.set(key, tail);
      try {
        return await run;
      } finally {
        if (held.get(key) === tail) held.delete(key);
      }
    },
    async close() {
      await db.destroy();
      if (dataDir) restrictTree(dataDir);
      unlock();
    },
  };
}

// int8 (counts, bigserial ids) as JS numbers, as PGlite returns them: the values Cadenza keeps
// in int8 stay far below 2^53.
const pgTypes = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

async function openPostgres(url: string, poolSize: number, preparedStatements: number, failoverWaitMs: number): Promise<Store> {
  // One host or several (a primary and its standbys): connections go to the one that takes writes.
  const hosts = parsePgHosts(url);
  const pool = new FailoverPool(hosts, { max: poolSize, types: pgTypes, waitMs: failoverWaitMs });
  try {
    const c = await pool.connect();
    c.release();
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw cadenzaError('STORE_UNAVAILABLE', `cannot connect to PostgreSQL: ${explainConnectFailure(e)}`);
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparedStatements > 0 ? preparingPool(pool, preparedStatements) : pool }) });
  return {
    backend: 'postgres',
    db,
    async runScript(script) {
      const c = await pool.connect();
      try {
        await c.query('begin');
        await c.query(script);
        await c.query('commit');
      } catch (e) {
        await c.query('rollback').catch(() => undefined);
        throw e;
      } finally {
        c.release();
      }
    },
    async withExclusiveLock(key, fn) {
      // A client of its own, outside the pool: holding a pool slot while fn needs the pool would
      // deadlock a small pool.
      const c = await connectWritable(hosts, {}, failoverWaitMs);
      try {
        await c.query('select pg_advisory_lock($1)', [key]);
        return await fn();
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    async close() {
      await db.destroy();
    },
  };
}
