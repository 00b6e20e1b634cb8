/**
 * Business days: the days a slot may open on (the window's days; Monday to Friday for 'any'),
 * minus public holidays when they are skipped.
 */
import { cadenzaError } from '../common/errors.ts';
import { weekdayOfDay } from './civil.ts';
import { type CalendarContext, isHolidayIn } from './context.ts';

export function isBusinessDayIn(ctx: CalendarContext, day: number): boolean {
  return (ctx.window.businessMask & (1 << weekdayOfDay(day))) !== 0 && !isHolidayIn(ctx, day);
}

/** The local date `count` business days after `day` (a non-business start day counts from itself, like any other). */
export function addBusinessDays(ctx: CalendarContext, day: number, count: number): number {
  if (ctx.window.businessMask === 0) {
    throw cadenzaError('INVALID_INPUT', 'the send window has no days, so there are no business days', { field: 'window' });
  }
  let d = day;
  let idle = 0;
  for (let left = count; left > 0; ) {
    d++;
    if (isBusinessDayIn(ctx, d)) {
      left--;
      idle = 0;
    } else if (++idle > 370) {
      // Only reachable if holidays cover every allowed weekday for a year.
      throw cadenzaError('INVALID_INPUT', 'no business day within 370 days', { field: 'delay' });
    }
  }
  return d;
}
