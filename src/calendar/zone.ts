/**
 * IANA zones: validation, the lead → mailbox → workspace → UTC fallback, and conversion between
 * instants and local wall-clock time.
 *
 * A "wall" value is the local date and time written as epoch milliseconds as if the zone were UTC
 * (wall = instant + offset), so calendar arithmetic on it is plain integer arithmetic (civil.ts).
 *
 * Offsets come from Intl (the ICU tz data Node ships), through one cached DateTimeFormat per zone.
 * Intl is ~1 µs a call, too slow for 100k due times each needing a dozen offsets, so offsets are
 * cached per UTC day: a UTC day whose first and last millisecond have the same offset is taken to
 * have no transition inside (tzdb has no zone that changes twice within a day); a day whose ends
 * differ is marked and answered exactly each time.
 *
 * Wall → instant has two hard cases, resolved deterministically (never from the current date, as
 * luxon's DateTime.fromObject does):
 * - ambiguous wall time (fall-back, e.g. 01:30 on 2025-11-02 in New York): the earlier instant,
 *   i.e. the first occurrence, still on the pre-transition offset (01:30 EDT).
 * - non-existent wall time (spring-forward gap, e.g. 02:30 on 2025-03-09 in New York):
 *   - 'target' (a due time computed by addDelay): moved forward by the length of the gap, as luxon
 *     does (02:30 → 03:30 EDT);
 *   - 'boundary' (the edge of a send window): the first instant whose wall time is at or after it,
 *     i.e. the transition itself (a window opening at 02:30 opens at 03:00 EDT).
 */
import { cadenzaError } from '../common/errors.ts';
import { DAY_MS } from './civil.ts';

export const DEFAULT_ZONE = 'UTC';

/** Instants outside [1900-01-01, 2200-01-01) UTC are refused: no sales step lives there, and Intl's year formatting stays simple. */
export const MIN_INSTANT_MS = Date.UTC(1900, 0, 1);
export const MAX_INSTANT_MS = Date.UTC(2200, 0, 1);

export function checkInstant(ms: number, field: string): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < MIN_INSTANT_MS || ms >= MAX_INSTANT_MS) {
    throw cadenzaError('INVALID_INPUT', `${field} must be epoch milliseconds between 1900 and 2200, got ${String(ms)}`, {
      field,
      value: ms,
    });
  }
}

export interface ZoneState {
  readonly name: string;
  readonly dtf: Intl.DateTimeFormat;
  /** UTC day number → offset in ms for the whole day, or NaN when a transition happens that day. */
  readonly days: Map<number, number>;
}

const zones = new Map<string, ZoneState>();
const invalidZones = new Set<string>();
/** Bounds the caches against hostile input (one entry per distinct string / UTC day). */
const MAX_INVALID = 10_000;
const MAX_ZONES = 2_000; // tzdb has ~600 names; more means case variants or abuse

const MAX_DAYS_PER_ZONE = 200_000;

// Names only: Intl in newer runtimes also accepts offsets such as '+05:00', which are not IANA zones.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;

function createState(name: string): ZoneState | null {
  if (typeof name !== 'string' || !ZONE_NAME.test(name) || invalidZones.has(name)) return null;
  try {
    const dtf = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const state: ZoneState = { name, dtf, days: new Map() };
    if (zones.size >= MAX_ZONES) zones.clear();
    zones.set(name, state);
    return state;
  } catch {
    if (invalidZones.size >= MAX_INVALID) invalidZones.clear();
    invalidZones.add(name);
    return null;
  }
}

/** True when the string is a time zone name the runtime's tz data knows ('Europe/Berlin', 'UTC', 'US/Eastern'). */
export function isValidZone(zone: string): boolean {
  if (typeof zone !== 'string') return false;
  return zones.has(zone) || createState(zone) !== null;
}

/** The cached state of a zone; throws UNKNOWN_TIME_ZONE when the name is not a known IANA zone. */
export function zoneState(zone: string): ZoneState {
  const st = zones.get(zone) ?? createState(zone);
  if (st === null) throw cadenzaError('UNKNOWN_TIME_ZONE', `unknown IANA time zone '${String(zone)}'`, { zone });
  return st;
}

export type ZoneSource = 'lead' | 'mailbox' | 'workspace' | 'default';

/**
 * The zone a prospect's due times are computed in: the first valid IANA zone among the lead's,
 * the sending mailbox's and the workspace's, else UTC. Empty, unknown or malformed strings are
 * skipped (a CSV column of 'EST-ish' must not stop an enrollment), surrounding blanks ignored.
 */
export function resolveZone(candidates: {
  lead?: string | null;
  mailbox?: string | null;
  workspace?: string | null;
}): { zone: string; source: ZoneSource } {
  for (const source of ['lead', 'mailbox', 'workspace'] as const) {
    const raw = candidates[source];
    if (typeof raw !== 'string') continue;
    const zone = raw.trim();
    if (zone !== '' && isValidZone(zone)) return { zone, source };
  }
  return { zone: DEFAULT_ZONE, source: 'default' };
}

/** Offset (wall − instant, ms) at an instant, straight from Intl. */
function exactOffset(st: ZoneState, ms: number): number {
  const s = st.dtf.format(ms); // "M/D/YYYY, HH:MM:SS"
  const parts = [0, 0, 0, 0, 0, 0];
  let idx = 0;
  let inNumber = false;
  for (let i = 0; i < s.length && idx < 6; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c >= 0 && c <= 9) {
      parts[idx] = (parts[idx] as number) * 10 + c;
      inNumber = true;
    } else if (inNumber) {
      idx++;
      inNumber = false;
    }
  }
  const [month, day, year, hour, minute, second] = parts as [number, number, number, number, number, number];
  const asUtc = Date.UTC(year, month - 1, day, hour === 24 ? 0 : hour, minute, second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** Offset (wall − instant, ms) at an instant, cached per UTC day. */
export function offsetIn(st: ZoneState, ms: number): number {
  const k = Math.floor(ms / DAY_MS);
  const cached = st.days.get(k);
  if (cached !== undefined) return Number.isNaN(cached) ? exactOffset(st, ms) : cached;
  const first = exactOffset(st, k * DAY_MS);
  const last = exactOffset(st, k * DAY_MS + DAY_MS - 1);
  if (st.days.size >= MAX_DAYS_PER_ZONE) st.days.clear();
  if (first === last) {
    st.days.set(k, first);
    return first;
  }
  st.days.set(k, Number.NaN);
  return exactOffset(st, ms);
}

/** Local wall time of an instant. */
export function wallOf(st: ZoneState, ms: number): number {
  return ms + offsetIn(st, ms);
}

export type WallMode = 'target' | 'boundary';

/** The instant of a local wall time; see the header for ambiguous and non-existent times. */
export function instantOfWall(st: ZoneState, wall: number, mode: WallMode): number {
  // Offsets a day either side bracket any transition that can touch this wall time (|offset| ≤ 14 h).
  const before = offsetIn(st, wall - DAY_MS);
  const after = offsetIn(st, wall + DAY_MS);
  const tBefore = wall - before;
  if (before === after && offsetIn(st, tBefore) === before) return tBefore;
  const tAfter = wall - after;
  const okBefore = offsetIn(st, tBefore) === before;
  const okAfter = offsetIn(st, tAfter) === after;
  if (okBefore && okAfter) return Math.min(tBefore, tAfter); // ambiguous: first occurrence
  if (okBefore) return tBefore;
  if (okAfter) return tAfter;
  // In a gap. luxon's rule for a target: keep the pre-transition (smaller) offset, which lands
  // after the gap by exactly the gap's length.
  if (mode === 'target') return wall - Math.min(before, after);
  // For a boundary: the first instant whose wall time reaches `wall`, the transition itself.
  let lo = Math.min(tBefore, tAfter); // wall(lo) < wall
  let hi = Math.max(tBefore, tAfter); // wall(hi) >= wall
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid + offsetIn(st, mid) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Convenience wrappers by zone name (tests, debugging). */
export function toWall(zone: string, ms: number): number {
  return wallOf(zoneState(zone), ms);
}

export function fromWall(zone: string, wall: number, mode: WallMode = 'target'): number {
  return instantOfWall(zoneState(zone), wall, mode);
}
