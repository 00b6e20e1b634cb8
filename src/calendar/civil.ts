/**
 * Civil (proleptic Gregorian) date arithmetic on day numbers: day 0 is 1970-01-01, so a day
 * number times DAY_MS is the UTC midnight of that date, and a "wall" instant (local date and
 * time written as if it were UTC) splits into a day number and a time of day by plain division.
 * No allocation, no Date objects: these run in the hot path of computeDue.
 */
import { cadenzaError } from '../common/errors.ts';
import type { Weekday } from './types.ts';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Day number of a civil date (Howard Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

/** Civil date of a day number (Howard Hinnant's civil_from_days). */
export function civilFromDays(days: number): CivilDate {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

/** ISO weekday of a day number; 1970-01-01 was a Thursday. */
export function weekdayOfDay(days: number): Weekday {
  return ((((days + 3) % 7) + 7) % 7 + 1) as Weekday;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** 'YYYY-MM-DD' of a day number. */
export function isoDateOfDay(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Day number of a strict 'YYYY-MM-DD' date; throws INVALID_INPUT for anything else (2025-02-30 included). */
export function dayOfIsoDate(iso: string): number {
  const m = typeof iso === 'string' ? ISO_DATE.exec(iso) : null;
  if (m) {
    const year = Number(m[1]);
    const month = Number(m[2]);
    const day = Number(m[3]);
    const days = daysFromCivil(year, month, day);
    const back = civilFromDays(days);
    if (month >= 1 && month <= 12 && back.year === year && back.month === month && back.day === day) return days;
  }
  throw cadenzaError('INVALID_INPUT', `invalid date '${String(iso)}': expected YYYY-MM-DD`, { field: 'date', value: iso });
}
