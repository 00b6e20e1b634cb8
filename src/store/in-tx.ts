import type { Db, Tx } from './store.ts';

/** The database or a transaction: functions that take it join the caller's transaction when there is one. */
export type Conn = Db | Tx;

/** Runs fn in the caller's transaction, or in a new one when given the database. */
export async function inTx<T>(db: Conn, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db as Tx);
  return db.transaction().execute(fn);
}
