import { CompiledQuery, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type DatabaseConnection, type Dialect, type Driver, type Kysely, type TransactionSettings } from 'kysely';

/**
 * A Kysely driver whose transactions are plain SQL statements on the leased connection, for the
 * drivers that have no client library of their own to do it: PGlite's (pglite-dialect.ts) and the
 * one that reaches a running server's store (remote/client.ts).
 */
export abstract class SqlTransactionDriver implements Driver {
  abstract init(): Promise<void>;
  abstract acquireConnection(): Promise<DatabaseConnection>;
  abstract releaseConnection(conn: DatabaseConnection): Promise<void>;
  abstract destroy(): Promise<void>;

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const iso = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await conn.executeQuery(CompiledQuery.raw(`begin${iso}`));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(conn: DatabaseConnection, name: string): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw(`savepoint ${name}`));
  }

  async rollbackToSavepoint(conn: DatabaseConnection, name: string): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw(`rollback to savepoint ${name}`));
  }

  async releaseSavepoint(conn: DatabaseConnection, name: string): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw(`release savepoint ${name}`));
  }
}

/** A dialect that speaks PostgreSQL's SQL through the given driver. */
export function postgresSqlDialect(createDriver: () => Driver): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver,
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
