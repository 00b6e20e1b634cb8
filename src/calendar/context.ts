/**
 * A CalendarSpec made ready for the hot path: the zone's cached offsets, the compiled window and
 * the holiday calendar (null when holidays are not skipped or no country is known). Built once per
 * public call, so addDelay, the slot search and the jitter of one computeDue share it.
 */
import { cadenzaError } from '../common/errors.ts';
import { type HolidayCalendar, holidayCalendar, isHolidayDay } from './holidays.ts';
import type { CalendarSpec } from './types.ts';
import { type CompiledWindow, compileWindow } from './window.ts';
import { type ZoneState, zoneState } from './zone.ts';

export interface CalendarContext {
  readonly zone: ZoneState;
  readonly window: CompiledWindow;
  readonly holidays: HolidayCalendar | null;
}

export function contextOf(spec: CalendarSpec): CalendarContext {
  if (spec === null || typeof spec !== 'object') {
    throw cadenzaError('INVALID_INPUT', 'calendar spec must be an object', { field: 'spec' });
  }
  const zone = zoneState(spec.zone);
  const window = compileWindow(spec.window);
  // skipHolidays defaults to true; without a country there is no holiday calendar to skip.
  const holidays =
    spec.skipHolidays !== false && typeof spec.country === 'string' && spec.country !== ''
      ? holidayCalendar(spec.country, spec.region)
      : null;
  return { zone, window, holidays };
}

export function isHolidayIn(ctx: CalendarContext, day: number): boolean {
  return ctx.holidays !== null && isHolidayDay(ctx.holidays, day);
}
