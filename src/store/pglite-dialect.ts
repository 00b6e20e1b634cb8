import type { PGlite } from '@electric-sql/pglite';
import type { CompiledQuery, DatabaseConnection, Dialect, QueryResult } from 'kysely';
import { postgresSqlDialect, SqlTransactionDriver } from './sql-transaction-driver.ts';

/**
 * Kysely onto PGlite 0.5. PGlite is one backend with one session, so "connections" take turns:
 * a connection is a lease on the whole database, held from acquire to release. That keeps a
 * transaction's statements together, which PGlite's own per-query lock alone would not.
 */
export const pgliteDialect = (pglite: PGlite): Dialect => postgresSqlDialect(() => new PGliteDriver(pglite));

class PGliteDriver extends SqlTransactionDriver {
  private queue: Promise<void> = Promise.resolve();
  private readonly connection: PGliteConnection;

  constructor(private readonly pglite: PGlite) {
    super();
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {
    await this.pglite.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const prev = this.queue;
    this.queue = prev.then(() => next);
    await prev;
    this.connection.release = release;
    return this.connection;
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    const c = conn as PGliteConnection;
    const release = c.release;
    c.release = undefined;
    release?.();
  }

  async destroy(): Promise<void> {
    await this.queue;
    if (!this.pglite.closed) await this.pglite.close();
  }
}

class PGliteConnection implements DatabaseConnection {
  release: (() => void) | undefined;
  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const res = await this.pglite.query<R>(compiled.sql, compiled.parameters as unknown[]);
    const affected = res.affectedRows;
    return {
      rows: res.rows,
      ...(affected !== undefined && affected !== null ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite dialect: streaming queries are not supported; page with keyset queries instead');
  }
}
