/**
 * When sending is allowed: the window's slots, as absolute intervals.
 *
 * A slot opens on local date d when d's weekday is in the window's days and d is not a holiday.
 * It runs [d start, d end) in wall-clock time, or [d start, d+1 end) when the window crosses
 * midnight; in that case, when d+1 is a holiday, the slot is cut at midnight, so nothing is ever
 * sent during a holiday's local date. For 'any' the slot is the whole local date.
 *
 * Slot edges are wall times turned into instants in 'boundary' mode (zone.ts): an edge that falls
 * in a spring-forward gap is the transition instant, an edge that exists twice is its first
 * occurrence. Edges are thus monotone in wall time, slots of successive dates never overlap and
 * come in order, and a slot swallowed by a gap (02:00-03:00 on a spring-forward day) is empty and
 * skipped. isAllowed and nextAllowed both read these intervals, so they always agree.
 * Intervals are half-open: the end instant is not allowed.
 */
import { cadenzaError } from '../common/errors.ts';
import { DAY_MS, MINUTE_MS, weekdayOfDay } from './civil.ts';
import { type CalendarContext, contextOf, isHolidayIn } from './context.ts';
import type { CalendarSpec } from './types.ts';
import { checkInstant, instantOfWall, wallOf } from './zone.ts';

/** nextAllowed gives up after this many days without a slot (a window with no days, say). */
export const SEARCH_LIMIT_DAYS = 370;

export interface Slot {
  start: number;
  end: number;
}

/** The slot opening on local date `day`, or null when none opens (day not allowed, holiday, or empty). */
export function slotOpenedOn(ctx: CalendarContext, day: number): Slot | null {
  const w = ctx.window;
  if ((w.dayMask & (1 << weekdayOfDay(day))) === 0) return null;
  if (isHolidayIn(ctx, day)) return null;
  const openWall = day * DAY_MS + w.startMin * MINUTE_MS;
  let closeWall: number;
  if (w.crosses) {
    closeWall = isHolidayIn(ctx, day + 1) ? (day + 1) * DAY_MS : (day + 1) * DAY_MS + w.endMin * MINUTE_MS;
  } else {
    closeWall = day * DAY_MS + w.endMin * MINUTE_MS;
  }
  const start = instantOfWall(ctx.zone, openWall, 'boundary');
  const end = instantOfWall(ctx.zone, closeWall, 'boundary');
  return end > start ? { start, end } : null;
}

/**
 * The first slot that ends after `at` (it contains `at` or is the next one), looking at slots that
 * open up to `maxDays` local dates after at's; null when none.
 */
export function slotFrom(ctx: CalendarContext, at: number, maxDays: number): Slot | null {
  const day = Math.floor(wallOf(ctx.zone, at) / DAY_MS);
  // The slot opened the day before can still be running (crossing midnight).
  for (let d = day - 1; d <= day + maxDays; d++) {
    const slot = slotOpenedOn(ctx, d);
    if (slot !== null && slot.end > at) return slot;
  }
  return null;
}

export function isAllowedIn(ctx: CalendarContext, at: number): boolean {
  // A slot opening two dates later starts after `at`, so looking one date ahead is enough.
  const slot = slotFrom(ctx, at, 1);
  return slot !== null && slot.start <= at;
}

export function nextSlotIn(ctx: CalendarContext, at: number): Slot {
  const slot = slotFrom(ctx, at, SEARCH_LIMIT_DAYS);
  if (slot === null) {
    throw cadenzaError('INVALID_INPUT', `the send window allows no time within ${SEARCH_LIMIT_DAYS} days`, {
      field: 'window',
      at,
    });
  }
  return slot;
}

/** True when `atMs` is inside the window, on an allowed day, and not on a holiday. */
export function isAllowed(atMs: number, spec: CalendarSpec): boolean {
  checkInstant(atMs, 'atMs');
  return isAllowedIn(contextOf(spec), atMs);
}

/**
 * The first instant ≥ atMs that isAllowed (atMs itself when allowed; else the next slot's opening,
 * exact to the millisecond). Throws INVALID_INPUT when no slot opens within 370 days.
 */
export function nextAllowed(atMs: number, spec: CalendarSpec): number {
  checkInstant(atMs, 'atMs');
  return Math.max(nextSlotIn(contextOf(spec), atMs).start, atMs);
}
