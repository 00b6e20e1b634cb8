import { sql, type RawBuilder } from 'kysely';
import type { Tx } from './store.ts';

/**
 * Runs writes to different tables and a last statement as ONE statement: the writes as
 * data-modifying CTEs (PostgreSQL runs each exactly once and to its end, whatever the outer query
 * reads), the last as the outer query, whose rows are returned. One round trip where there would
 * be several. The writes must not touch the same rows as each other or as the last statement: all
 * of them see the snapshot from before the statement.
 */
export async function oneStatement<R>(tx: Tx, writes: ReadonlyArray<RawBuilder<unknown>>, last: RawBuilder<R>): Promise<R[]> {
  if (writes.length === 0) return (await last.execute(tx)).rows;
  const ctes = sql.join(writes.map((w, i) => sql`${sql.raw(`w${i}`)} as (${w})`), sql`, `);
  return (await sql<R>`with ${ctes} ${last}`.execute(tx)).rows;
}
