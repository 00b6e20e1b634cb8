/**
 * Calendar arithmetic for due times (ARCHITECTURE promise 4, "Human time"): zones, send windows,
 * business days and public holidays. Pure: instants are epoch milliseconds passed in, randomness
 * is a number in [0, 1) passed in; nothing reads the clock or Math.random.
 *
 * The rules, each explained where it lives:
 * - zone.ts: zone fallback lead → mailbox → workspace → UTC; ambiguous wall times take the first
 *   occurrence, non-existent ones move forward by the gap (window edges: to the transition).
 * - window.ts: the text and object forms of a send window.
 * - allowed.ts: slots; a window crossing midnight belongs to the day it opened; no sending on a
 *   holiday's local date.
 * - holidays.ts: which date-holidays entries count ('public', plus 'bank' in GB), cached per
 *   (country, region, year).
 * - delay.ts: minutes/hours are elapsed time, days/business days keep the local wall time.
 * - due.ts: where the jitter goes.
 */
export type { CalendarSpec, Delay, DelayUnit, SendWindow, Weekday } from './types.ts';
export { formatWindow, parseWindow } from './window.ts';
export { DEFAULT_ZONE, type ZoneSource, isValidZone, resolveZone } from './zone.ts';
export { hasHolidayCalendar, isHoliday } from './holidays.ts';
export { addDelay } from './delay.ts';
export { isAllowed, nextAllowed } from './allowed.ts';
export { computeDue } from './due.ts';
