import { compareKeys, keyValues, type SortKey } from './order.ts';

/**
 * Cursor pagination of a REST list, as Twenty's OpenAPI describes it: `limit`, `starting_after`
 * and `ending_before` take the `startCursor` / `endCursor` of a previous answer's `pageInfo`
 * ({hasNextPage, hasPreviousPage, startCursor, endCursor}), and every page carries the filter's
 * `totalCount`. Both cursors at once is a 400 (Twenty's metadata REST test says so; for records,
 * unverified). Twenty's cursors are base64 JSON of the sort keys' values; so are these:
 * the `order_by` keys' values and the id (Twenty adds id as the last sort key,
 * add-default-order-by-id.util.ts). A cursor that does not decode is a 400 (the text is unverified).
 */
export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export class PagingError extends Error {}

export function encodeCursor(values: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(values)).toString('base64');
}

function decodeCursor(cursor: string): Record<string, unknown> {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8')) as Record<string, unknown>;
    if (typeof v?.id === 'string') return v;
  } catch {
    // fall through
  }
  throw new PagingError(`Invalid cursor '${cursor}'`);
}

/**
 * The `limit` parameter as Twenty reads it (parse-limit-rest-request.util.ts): absent → the
 * default; not a number or negative → 400; above the maximum → the maximum, silently.
 */
export function parseLimit(raw: string | undefined, defaultLimit: number, maxLimit: number): number {
  if (raw === undefined || raw === '') return defaultLimit;
  const n = Number(raw);
  if (Number.isNaN(n) || n < 0) throw new PagingError(`limit '${raw}' is invalid. Should be an integer`);
  return Math.min(Math.floor(n), maxLimit);
}

/** One page of `sorted` (ascending under `keys`, then id). */
export function page<T extends Record<string, unknown> & { id: string }>(
  sorted: readonly T[],
  keys: readonly SortKey[],
  opts: { limit: number; startingAfter?: string; endingBefore?: string },
): { records: T[]; pageInfo: PageInfo } {
  if (opts.startingAfter && opts.endingBefore) throw new PagingError('starting_after and ending_before cannot be used together');
  const cmp = (r: T, cursor: Record<string, unknown>) => compareKeys(keyValues(r, keys), cursor, keys);
  let from = 0;
  let to = sorted.length;
  if (opts.startingAfter) {
    const after = decodeCursor(opts.startingAfter);
    from = sorted.findIndex((r) => cmp(r, after) > 0);
    if (from < 0) from = sorted.length;
    to = Math.min(sorted.length, from + opts.limit);
  } else if (opts.endingBefore) {
    const before = decodeCursor(opts.endingBefore);
    to = sorted.findIndex((r) => cmp(r, before) >= 0);
    if (to < 0) to = sorted.length;
    from = Math.max(0, to - opts.limit);
  } else {
    to = Math.min(sorted.length, opts.limit);
  }
  const records = sorted.slice(from, to);
  return {
    records,
    pageInfo: {
      hasNextPage: to < sorted.length,
      hasPreviousPage: from > 0,
      startCursor: records.length ? encodeCursor(keyValues(records[0]!, keys)) : null,
      endCursor: records.length ? encodeCursor(keyValues(records[records.length - 1]!, keys)) : null,
    },
  };
}
