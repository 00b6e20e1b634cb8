import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import type { Keyset } from '../../store/keyset.ts';

/**
 * Keyset pagination: a list is ordered by (time, id) descending and the cursor is the last row's
 * pair, opaque to clients. Page N costs the same as page 1 (no OFFSET scan) on 100k rows. The
 * query files take the decoded key (store/keyset.ts) and apply it with afterKey.
 */
export const pageQuery = {
  cursor: z.string().max(200).optional().describe('From the previous page\'s nextCursor'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
};

export function encodeCursor(k: Keyset): string {
  return Buffer.from(`${k.at.toISOString()}|${k.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): Keyset | undefined {
  if (cursor === undefined) return undefined;
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const t = at ? Date.parse(at) : NaN;
  if (!id || !/^[0-9a-f-]{36}$/i.test(id) || Number.isNaN(t)) throw cadenzaError('INVALID_INPUT', 'cursor is not one this API returned', { field: 'cursor' });
  return { at: new Date(t), id };
}

/** The page and the cursor of the next one, from limit + 1 rows. */
export function page<T>(rows: T[], limit: number, key: (r: T) => Keyset): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(key(last)) : null };
}
