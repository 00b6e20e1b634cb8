import type { Page, TwentyClient } from './client.ts';

/**
 * One ordered stream of changes of one Twenty object: records by `updatedAt` (changes) or by
 * `deletedAt` (soft deletes), oldest first, read with Twenty's REST filter and order_by, resumable
 * from a position, none skipped.
 *
 * Position. Twenty returns timestamps with milliseconds while PostgreSQL keeps microseconds, and a
 * write of many rows in one statement gives them all the same instant. So a position is a
 * millisecond "bucket" and, inside it, an id:
 *
 *   {t, bucket: false}      every record up to and including millisecond t is read
 *   {t, bucket: true, id}   every record before millisecond t is read, and in t those with an id
 *                           up to `id` (null: none)
 *
 * A read in bucket mode drains the bucket in id order (`F[gte]:t, F[lt]:t+1ms, id[gt]:id`; id is
 * Twenty's default order), then, in either mode, reads on from the next millisecond ordered by F
 * (`order_by=F[AscNullsFirst]`, id last). When that page is cut, the records of its last
 * millisecond may be only part of it in id order, so the next read drains that bucket by id:
 * records at a page boundary are read again, never skipped.
 *
 * Overlap. A change stamped at t may commit after a later one was read (a longer transaction).
 * When a read reaches the end, the next one starts `overlapMs` before the newest change read (the
 * high-water mark), and changes already reported, keyed (id, F), are dropped: `seen` keeps those
 * within the overlap (at most seenMax; past that a change may be reported twice, which the sync
 * dedupes by crmId and updatedAt).
 */
export interface StreamPosition {
  t: string | null;
  bucket: boolean;
  id: string | null;
  /** The newest F read (ISO). */
  hw: string | null;
  /** `id@F` of changes reported within the overlap. */
  seen: string[];
}

export const startPosition: StreamPosition = { t: null, bucket: false, id: null, hw: null, seen: [] };

export interface StreamSpec {
  plural: string;
  field: 'updatedAt' | 'deletedAt';
  /**
   * Added to every filter with and(): for the updatedAt stream, a filter naming deletedAt, so that
   * Twenty lists soft-deleted records too (it does when a filter names deletedAt anywhere); '' for none.
   */
  base: string;
  overlapMs: number;
  seenMax: number;
}

export type StreamRecord = Page['records'][number];

export async function readStream(client: TwentyClient, spec: StreamSpec, from: StreamPosition, limit: number): Promise<{ records: StreamRecord[]; position: StreamPosition; more: boolean }> {
  const F = spec.field;
  const got: StreamRecord[] = [];
  let pos = from;
  const filter = (...preds: string[]) => `and(${[spec.base, ...preds].filter((x) => x !== '').join(',')})`;

  if (pos.bucket && pos.t !== null) {
    const t = pos.t;
    const preds = [`${F}[gte]:"${t}"`, `${F}[lt]:"${plusMs(t, 1)}"`];
    if (pos.id) preds.push(`id[gt]:"${pos.id}"`);
    const a = await client.listPage(spec.plural, { filter: filter(...preds), limit });
    got.push(...a.records);
    if (a.hasNextPage && a.records.length > 0) return finish(spec, from, got, { ...pos, id: a.records.at(-1)!.id }, true);
    pos = { ...pos, bucket: false, id: null };
  }

  const room = limit - got.length;
  if (room > 0) {
    const after = pos.t === null ? [`${F}[is]:NOT_NULL`] : [`${F}[gte]:"${plusMs(pos.t, 1)}"`];
    const b = await client.listPage(spec.plural, { filter: filter(...after), orderBy: `${F}[AscNullsFirst]`, limit: room });
    got.push(...b.records);
    if (b.hasNextPage && b.records.length > 0) {
      return finish(spec, from, got, { ...pos, t: msOf(b.records.at(-1)![F]), bucket: true, id: null }, true);
    }
  } else {
    return finish(spec, from, got, pos, true);
  }
  // At the end: the next read goes back over the overlap.
  const hw = newest(from.hw, got, F);
  const back = hw === null ? null : new Date(Date.parse(hw) - spec.overlapMs).toISOString();
  return finish(spec, from, got, { ...pos, t: back, bucket: false, id: null }, false);
}

function finish(spec: StreamSpec, from: StreamPosition, got: StreamRecord[], pos: StreamPosition, more: boolean) {
  const F = spec.field;
  const old = new Set(from.seen);
  const added = new Set<string>();
  const records: StreamRecord[] = [];
  for (const r of got) {
    const k = keyOf(r, F);
    if (old.has(k) || added.has(k)) continue;
    added.add(k);
    records.push(r);
  }
  const hw = newest(from.hw, got, F);
  const floor = hw === null ? 0 : Date.parse(hw) - spec.overlapMs;
  const seen = [...old, ...added]
    .map((k) => ({ k, ms: Date.parse(k.slice(k.indexOf('@') + 1)) }))
    .filter((x) => x.ms >= floor)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, spec.seenMax)
    .map((x) => x.k);
  return { records, position: { ...pos, hw, seen }, more };
}

export function keyOf(r: StreamRecord, field: string): string {
  return `${r.id}@${String(r[field])}`;
}

function newest(hw: string | null, got: StreamRecord[], F: string): string | null {
  let best = hw;
  for (const r of got) {
    const v = r[F];
    if (typeof v === 'string' && (best === null || Date.parse(v) > Date.parse(best))) best = new Date(Date.parse(v)).toISOString();
  }
  return best;
}

/** The millisecond a timestamp falls in, as ISO (Twenty answers with milliseconds; a finer one is truncated). */
function msOf(v: unknown): string {
  const ms = Date.parse(String(v));
  if (!Number.isFinite(ms)) throw new Error(`Twenty: a record with no readable timestamp (${String(v)})`);
  return new Date(ms).toISOString();
}

function plusMs(iso: string, n: number): string {
  return new Date(Date.parse(iso) + n).toISOString();
}
