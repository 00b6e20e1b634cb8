import { CrmCursorExpiredError, type CrmChangePage } from '../connector.ts';
import type { SalesforceClient } from './client.ts';
import { fieldsOf, streams, toRecords, type Stream } from './records.ts';
import { dateTime, parseDateTime, queryAll, type Row } from './soql.ts';

/**
 * Changes in, by polling SystemModstamp (SOQL), for Contacts, Leads and Opportunities; each deal's
 * contact addresses from its OpportunityContactRoles. Where the org has Change Data Capture, cdc.ts
 * reads by it and comes here for a full sync, a gap, or a replay id older than the events kept; its
 * cursor wraps this one (a cursor of this shape alone is one from before CDC, read as a poll's).
 *
 * Why an overlap: SystemModstamp is stamped when a transaction writes, and the transaction becomes
 * visible when it commits, later. A record stamped just before the last one read may appear only
 * after that read. So each read starts `overlapMs` before the newest stamp seen, and the cursor
 * remembers the (Id, SystemModstamp) pairs it already gave from that stretch, so that they are not
 * given again; a new pair (a record changed again, or a late commit) is. The cursor holds at most
 * about `maxSeen` pairs per object: past that, the stretch is shortened (a read never skips, it
 * may only repeat, which the sync's dedupe absorbs).
 *
 * Paging: `ORDER BY SystemModstamp, Id` with `LIMIT seen + budget + 1`: the seen pairs all sort
 * within the window read, so a read with a row past `seen + budget` has given `budget` new records
 * and has more waiting (`more`); that last row is left for the next read.
 *
 * Deletions: the reads go through the queryAll resource, which also returns deleted records
 * (IsDeleted = true, a new SystemModstamp) while they are in the Recycle Bin (15 days); they are
 * given with `deleted: true`. Records merged away are deleted records too.
 *
 * Expiry: a cursor last used more than 30 days ago is refused (CrmCursorExpiredError), the longest
 * Salesforce keeps deletions retrievable at all (getDeleted's 30 days): past it the sync must
 * resync in full. A deletion emptied from the Recycle Bin before the next read (a cursor more than
 * 15 days old, or a bin emptied by hand) is missed.
 *
 * A change to an OpportunityContactRole alone does not change its Opportunity's SystemModstamp
 * (unverified), so a contact added to a deal shows with the deal's next change.
 */
export const cursorTtlMs = 30 * 24 * 3_600_000;
const maxSeen = 1000;

interface Position {
  /** Read from this SystemModstamp (ms) on. */
  from: number;
  /** `${Id}@${ms}` of what was given from `from` on. */
  seen: string[];
}

interface Cursor {
  v: 1;
  /** When the cursor was made (ms). */
  at: number;
  contacts: Position;
  leads: Position;
  deals: Position;
}

/** A poll's cursor that reads every object from `from` (ms) on, as if made at `now`. */
export function pollCursorFrom(from: number, now: number): string {
  const p: Position = { from: Math.max(0, from), seen: [] };
  return encode({ v: 1, at: now, contacts: p, leads: p, deals: { ...p } });
}

/** The earliest stamp a poll's cursor reads from (ms), and when it was last read; null for a full sync. */
export function pollPosition(text: string | null): { from: number; at: number } | null {
  if (text === null) return null;
  const c = decode(text);
  return { from: Math.min(...streams.map((s) => c[s].from)), at: c.at };
}

/** The objects read, in streams' order: each takes what budget those before it left. */
export async function pollChanges(client: SalesforceClient, cursorText: string | null, limit: number, now: number, overlapMs: number): Promise<CrmChangePage> {
  const start: Position = { from: 0, seen: [] };
  const cursor: Cursor = cursorText === null ? { v: 1, at: now, contacts: start, leads: start, deals: start } : decode(cursorText);
  if (now - cursor.at > cursorTtlMs) throw new CrmCursorExpiredError(`Salesforce: the cursor was made ${new Date(cursor.at).toISOString()}, more than 30 days ago`);
  let left = Math.max(1, limit);
  let more = false;
  const next: Cursor = { ...cursor, at: now };
  const rows: Record<Stream, Row[]> = { contacts: [], leads: [], deals: [] };
  for (const stream of streams) {
    // No budget left: this object waits for the next call.
    if (left <= 0) {
      more = true;
      break;
    }
    const r = await readObject(client, fieldsOf[stream].object, fieldsOf[stream].fields, cursor[stream], left, overlapMs);
    rows[stream] = r.rows;
    next[stream] = r.position;
    left -= r.rows.length;
    more ||= r.full;
  }
  return { ...(await toRecords(client, rows)), cursor: encode(next), more };
}

async function readObject(client: SalesforceClient, object: string, fields: string, pos: Position, budget: number, overlapMs: number): Promise<{ rows: Row[]; position: Position; full: boolean }> {
  const seen = new Set(pos.seen);
  const take = seen.size + budget;
  // One row past `take` says whether more are waiting; it is left for the next read.
  const read = await queryAll(client, `SELECT ${fields} FROM ${object} WHERE SystemModstamp >= ${dateTime(pos.from)} ORDER BY SystemModstamp, Id LIMIT ${take + 1}`, true);
  const full = read.length > take;
  if (full) read.pop();
  const pairs = new Map<string, number>(pos.seen.map((p) => [p, Number(p.slice(p.lastIndexOf('@') + 1))]));
  const fresh: Row[] = [];
  for (const r of read) {
    const ms = parseDateTime(r.SystemModstamp);
    const pair = `${r.Id}@${ms}`;
    if (!seen.has(pair)) fresh.push(r);
    pairs.set(pair, ms);
  }
  return { rows: fresh, position: nextPosition(pos.from, pairs, overlapMs), full };
}

/** The next read's start (overlapMs before the newest stamp) and the pairs it must not give again. */
function nextPosition(from: number, pairs: Map<string, number>, overlapMs: number): Position {
  if (pairs.size === 0) return { from, seen: [] };
  const newest = Math.max(...pairs.values());
  let start = Math.max(from, newest - overlapMs);
  let kept = [...pairs].filter(([, ms]) => ms >= start).sort((a, b) => b[1] - a[1]);
  if (kept.length > maxSeen) {
    // Shorten the stretch to the newest maxSeen pairs, keeping whole groups of one stamp.
    start = kept[maxSeen - 1]![1];
    kept = kept.filter(([, ms]) => ms >= start);
  }
  return { from: start, seen: kept.map(([p]) => p) };
}

function encode(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decode(text: string): Cursor {
  let c: Cursor | undefined;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
  } catch {
    c = undefined;
  }
  const ok = (p: Position | undefined) => !!p && typeof p.from === 'number' && Array.isArray(p.seen);
  // An unreadable cursor (another connector's, a version this code does not know) starts a full resync, as an expired one does.
  if (!c || c.v !== 1 || typeof c.at !== 'number' || !streams.every((k) => ok(c[k]))) throw new CrmCursorExpiredError('Salesforce: the cursor is not one this connector made');
  return c;
}
