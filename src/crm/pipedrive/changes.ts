import { CrmCursorExpiredError, CrmTransientError } from '../connector.ts';
import type { PipedriveClient, Query } from './client.ts';

/**
 * Reading persons or deals changed since a position, with API v2's `updated_since`,
 * `sort_by=update_time` and cursor paging (the cursor is Pipedrive's `next_cursor` within one
 * call; between calls the position below is what counts).
 *
 * Pipedrive stamps update_time in whole seconds, several records can share one, and a change can
 * become visible to a list after a later one was read. So each read starts `overlapMs` before
 * the newest update_time delivered (the overlap) and skips what it already delivered (the
 * dedupe): the position keeps `since` and the keys `<id>@<update_time>` of what was delivered
 * within the overlap. A record changed again has a new key and is delivered again. Nothing is
 * skipped whatever Pipedrive's order among equal update_times.
 *
 * When more than `maxSeen` changes fall within one overlap window (a bulk edit), the oldest keys
 * are dropped and the next read starts at the oldest key kept (`floor`) instead of a full overlap
 * earlier: re-reading what was dropped would fill every page with repeats and never move on. The
 * cost is a shorter overlap while it lasts; records of the floor's own second may repeat (the
 * sync deduplicates by crmId and updatedAt).
 */
export interface StreamPosition {
  /** The newest update_time delivered (epoch ms), null before the first. */
  since: number | null;
  /** `<id>@<update_time ms>` of what was delivered at or after the read's start. */
  seen: string[];
  /** Set when `seen` was cut short: reads start no earlier than this (epoch ms). */
  floor?: number | null;
}

export interface ChangeCursor {
  v: 1;
  persons: StreamPosition;
  deals: StreamPosition;
}

const maxSeen = 2000;
/** Pages of one list in one call before it stops and says "more" (each page is one request of the burst budget). */
const maxPages = 10;

export function initialCursor(): ChangeCursor {
  return { v: 1, persons: { since: null, seen: [] }, deals: { since: null, seen: [] } };
}

export function encodeCursor(c: ChangeCursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

/** A cursor this connector did not write is useless: the sync starts a full resync. */
export function decodeCursor(s: string): ChangeCursor {
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ChangeCursor;
    const ok = (p: StreamPosition | undefined) => !!p && (p.since === null || Number.isFinite(p.since)) && Array.isArray(p.seen) && (p.floor == null || Number.isFinite(p.floor));
    if (c?.v === 1 && ok(c.persons) && ok(c.deals)) return c;
  } catch {
    // fall through
  }
  throw new CrmCursorExpiredError('Pipedrive: the change cursor is not one this connector wrote');
}

export async function readStream<T extends { id: number; update_time: string }>(
  client: PipedriveClient,
  path: string,
  pos: StreamPosition,
  want: number,
  overlapMs: number,
  extra: Query = {},
): Promise<{ records: T[]; pos: StreamPosition; more: boolean }> {
  const seen = new Set(pos.seen);
  const records: T[] = [];
  let more = false;
  let cursor: string | undefined;
  const since = pos.since === null ? undefined : rfc3339(readStart(pos.since, pos.floor ?? null, overlapMs));
  for (let page = 0; ; page++) {
    if (page === maxPages) {
      more = true;
      break;
    }
    const body = await client.get(path, { ...extra, updated_since: since, sort_by: 'update_time', sort_direction: 'asc', limit: Math.min(500, want + seen.size), cursor });
    if (!Array.isArray(body?.data)) throw new CrmTransientError(`Pipedrive GET ${path}: the answer has no data list`);
    for (const r of body.data as T[]) {
      if (seen.has(keyOf(r))) continue;
      if (records.length === want) {
        more = true;
        break;
      }
      records.push(r);
    }
    cursor = body.additional_data?.next_cursor ?? undefined;
    if (more || !cursor) break;
  }
  let newest = pos.since;
  for (const r of records) newest = Math.max(newest ?? -Infinity, Date.parse(r.update_time));
  if (newest === null) return { records, pos: { since: null, seen: [] }, more };
  // Only keys the next read can meet are kept: those at or after where it will start.
  const start = readStart(newest, pos.floor ?? null, overlapMs);
  const timeOf = (k: string) => Number(k.split('@')[1]);
  const keep = [...pos.seen, ...records.map(keyOf)].filter((k) => timeOf(k) >= start).sort((a, b) => timeOf(a) - timeOf(b));
  if (keep.length <= maxSeen) return { records, pos: { since: newest, seen: keep, floor: pos.floor != null && pos.floor > start ? pos.floor : null }, more };
  const kept = keep.slice(-maxSeen);
  return { records, pos: { since: newest, seen: kept, floor: timeOf(kept[0]!) }, more };
}

/** Where a read after `since` starts: the overlap before it, in Pipedrive's whole seconds, not before the floor. */
function readStart(since: number, floor: number | null, overlapMs: number): number {
  const start = Math.floor((since - overlapMs) / 1000) * 1000;
  return floor !== null && floor > start ? floor : start;
}

function keyOf(r: { id: number; update_time: string }): string {
  return `${r.id}@${Date.parse(r.update_time)}`;
}

export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
