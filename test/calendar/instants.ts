/**
 * Helpers shared by the calendar's tests (src/calendar) and the pacing tests. luxon is the
 * independent oracle: instants are written as ISO strings with explicit offsets, so a test reads
 * as the wall clock a person in that zone would see.
 */
import { DateTime } from 'luxon';
import type { CadenzaError } from '../../src/common/errors.ts';
import { isCadenzaError } from '../../src/common/errors.ts';
import type { CalendarSpec, SendWindow } from '../../src/calendar/types.ts';
import { parseWindow } from '../../src/calendar/window.ts';

/** Epoch ms of an ISO string that carries its offset ('2025-03-09T03:30-04:00'). */
export function ms(iso: string): number {
  const d = DateTime.fromISO(iso, { setZone: true });
  if (!d.isValid) throw new Error(`bad ISO in test: ${iso}`);
  return d.toMillis();
}

/**
 * Epoch ms of an unambiguous local time in a zone. Refuses a local time that does not exist or
 * exists twice (write those with an explicit offset), since luxon would resolve them by guessing.
 */
export function at(local: string, zone: string): number {
  const d = DateTime.fromISO(local, { zone });
  if (!d.isValid) throw new Error(`bad local time in test: ${local}`);
  const wall = d.toFormat("yyyy-MM-dd'T'HH:mm");
  if (!local.startsWith(wall)) throw new Error(`local time ${local} does not exist in ${zone}`);
  for (const shift of [-60, 60]) {
    const other = DateTime.fromMillis(d.toMillis() + shift * 60_000, { zone });
    if (other.toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS") === d.toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS")) {
      throw new Error(`local time ${local} is ambiguous in ${zone}: give an offset`);
    }
  }
  return d.toMillis();
}

/** '2025-03-09T03:30:00-04:00' in the zone. */
export function show(instant: number, zone: string): string {
  return DateTime.fromMillis(instant, { zone }).toISO({ suppressMilliseconds: true }) ?? 'invalid';
}

export function spec(zone: string, window: string | SendWindow, extra: Partial<CalendarSpec> = {}): CalendarSpec {
  return {
    zone,
    window: typeof window === 'string' ? parseWindow(window) : window,
    skipHolidays: true,
    jitterMinutes: 45,
    ...extra,
  };
}

/** The CadenzaError fn throws (fails the test when it throws nothing or something else). */
export function thrown(fn: () => unknown): CadenzaError {
  try {
    fn();
  } catch (e) {
    if (isCadenzaError(e)) return e;
    throw e;
  }
  throw new Error('expected a CadenzaError, nothing was thrown');
}

export const MINUTE = 60_000;
export const HOUR = 3_600_000;

/** Zones the tests sweep: both hemispheres, half- and quarter-hour offsets, a 30-minute DST. */
export const ZONES = [
  'UTC',
  'America/New_York',
  'America/Los_Angeles',
  'America/St_Johns', // -03:30 / -02:30
  'America/Sao_Paulo',
  'America/Santiago', // southern DST, changes at local midnight
  'Europe/London',
  'Europe/Berlin',
  'Asia/Kolkata', // +05:30, no DST
  'Asia/Kathmandu', // +05:45
  'Asia/Tokyo',
  'Australia/Sydney',
  'Australia/Adelaide', // +09:30 / +10:30
  'Australia/Lord_Howe', // +10:30 / +11:00, a 30-minute DST
  'Pacific/Chatham', // +12:45 / +13:45
  'Pacific/Auckland',
];
