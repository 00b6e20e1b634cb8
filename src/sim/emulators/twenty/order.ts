import { compositeSubFields, type ObjectDef } from './schema.ts';

/**
 * Twenty's REST `order_by` (input-request-parsers/order-by-parser-utils): `field[Direction]`
 * items separated by commas, a sub-field as `field.subField`, a bare field meaning AscNullsFirst;
 * Twenty then adds `id` ascending as the last key (add-default-order-by-id.util.ts), which is what
 * makes a cursor over equal values exact. An unknown direction is a 400 with Twenty's text; an
 * unknown field is a 400 (the text is unverified).
 */
export const directions = ['AscNullsFirst', 'AscNullsLast', 'DescNullsFirst', 'DescNullsLast'] as const;
export type Direction = (typeof directions)[number];

export interface SortKey {
  path: string[];
  dir: Direction;
}

export class OrderError extends Error {}

export function parseOrderBy(raw: string | undefined, obj: ObjectDef): SortKey[] {
  if (raw === undefined || raw === '') return [];
  return raw.split(',').map((item) => {
    let field = item;
    let dir: Direction = 'AscNullsFirst';
    if (item.includes('[') && item.includes(']')) {
      const [name, rest] = item.split('[') as [string, string];
      const d = rest.replace(']', '');
      if (!(directions as readonly string[]).includes(d)) {
        throw new OrderError(`'order_by' direction '${d}' invalid. Allowed values are '${directions.join("', '")}'. eg: ?order_by=field_1[AscNullsFirst],field_2[DescNullsLast],field_3`);
      }
      field = name;
      dir = d as Direction;
    }
    const path = field.split('.');
    const f = obj.fields.get(path[0]!);
    const subs = f ? compositeSubFields[f.type] : undefined;
    const ok = f && path.length <= 2 && (subs ? path[1] !== undefined && subs.includes(path[1]) : path[1] === undefined);
    if (!ok) throw new OrderError(`Invalid order_by : ${obj.nameSingular} object doesn't have any "${field}" field`);
    return { path, dir };
  });
}

/** The value a key sorts on: the field, or its sub-field. */
export function sortValue(record: Record<string, unknown>, path: readonly string[]): unknown {
  const v = record[path[0]!];
  if (path.length === 1) return v ?? null;
  return v === null || v === undefined ? null : ((v as Record<string, unknown>)[path[1]!] ?? null);
}

/** The key values of a record, id last: what a cursor holds. */
export function keyValues(record: Record<string, unknown> & { id: string }, keys: readonly SortKey[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k.path.join('.')] = sortValue(record, k.path);
  out.id = record.id;
  return out;
}

/** Compares two key-value sets (keyValues) under `keys` then id ascending. */
export function compareKeys(a: Record<string, unknown>, b: Record<string, unknown>, keys: readonly SortKey[]): number {
  for (const k of keys) {
    const name = k.path.join('.');
    const c = compareOne(a[name] ?? null, b[name] ?? null, k.dir);
    if (c !== 0) return c;
  }
  return String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0;
}

function compareOne(x: unknown, y: unknown, dir: Direction): number {
  if (x === null && y === null) return 0;
  const nullsFirst = dir.endsWith('NullsFirst');
  if (x === null) return nullsFirst ? -1 : 1;
  if (y === null) return nullsFirst ? 1 : -1;
  const asc = dir.startsWith('Asc') ? 1 : -1;
  if (typeof x === 'number' && typeof y === 'number') return asc * (x - y);
  // Timestamps are stored as ISO 8601 in UTC with milliseconds, so they compare as strings; text
  // compares by code unit here, where PostgreSQL uses the database's collation (unverified).
  const sx = String(x);
  const sy = String(y);
  return asc * (sx < sy ? -1 : sx > sy ? 1 : 0);
}
