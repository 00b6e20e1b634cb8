import { sql, type RawBuilder } from 'kysely';

/**
 * Keyset pagination's key: a list ordered by (time, id) descending resumes after the last row's
 * pair, so page N costs what page 1 does (no OFFSET scan). The API wraps it in an opaque cursor
 * (api/http/pagination.ts); the query files take it as it is.
 */
export interface Keyset {
  at: Date;
  id: string;
}

/** The rows after `k` in a (time, id) descending order: the condition of the next page. The time may be a column or an expression. */
export function afterKey(timeColumn: string | RawBuilder<Date>, idColumn: string, k: Keyset): RawBuilder<boolean> {
  const at = typeof timeColumn === 'string' ? sql.ref(timeColumn) : timeColumn;
  return sql<boolean>`(${at} < ${k.at} or (${at} = ${k.at} and ${sql.ref(idColumn)} < ${k.id}))`;
}
