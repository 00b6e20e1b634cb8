/**
 * Adding a step's delay to an instant.
 *
 * - minutes, hours: elapsed time, whatever the clocks do (90 minutes across a DST change is 90
 *   real minutes). Fractional amounts are allowed; the result is rounded up to the millisecond.
 * - days: the same local wall-clock time N calendar dates later in the spec's zone (what luxon's
 *   plus({ days }) does), so a step sent at 09:14 is followed at 09:14 whether or not a DST change
 *   came in between: a DST change never shifts a batch.
 * - business_days: the same local wall-clock time N business days later (business-days.ts): days
 *   outside the window's days (Saturday and Sunday for 'any') and skipped holidays do not count.
 *   Counting starts from the local date of `fromMs`, so Saturday + 1 business day is Monday.
 *
 * When the target wall time does not exist (02:30 on a spring-forward day) it moves forward by the
 * gap (03:30), as luxon does; when it exists twice (01:30 on a fall-back day) the first occurrence,
 * on the earlier (pre-transition) offset, is taken (zone.ts). luxon's plus() would instead pick the
 * occurrence matching the offset of the starting instant, which depends on the season of `fromMs`.
 * Zero days or business days return fromMs unchanged. The window itself is not applied here:
 * computeDue does that.
 */
import { cadenzaError } from '../common/errors.ts';
import { addBusinessDays } from './business-days.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from './civil.ts';
import { type CalendarContext, contextOf } from './context.ts';
import type { CalendarSpec, Delay } from './types.ts';
import { checkInstant, instantOfWall, wallOf } from './zone.ts';

const UNITS = new Set(['minutes', 'hours', 'days', 'business_days']);

function checkDelay(delay: Delay): void {
  if (delay === null || typeof delay !== 'object' || !UNITS.has(delay.unit)) {
    throw cadenzaError('INVALID_INPUT', `delay unit must be one of minutes, hours, days, business_days`, {
      field: 'delay',
      value: delay,
    });
  }
  const { amount, unit } = delay;
  const whole = unit === 'days' || unit === 'business_days';
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0 || (whole && !Number.isInteger(amount))) {
    throw cadenzaError('INVALID_INPUT', `delay amount must be a ${whole ? 'whole ' : ''}number ≥ 0, got ${String(amount)}`, {
      field: 'delay.amount',
      value: amount,
    });
  }
}

/** The elapsed milliseconds of a minutes/hours delay; 0 for days and business days (calendar time). */
export function elapsedPart(delay: Delay): number {
  if (delay.unit === 'minutes') return Math.ceil(delay.amount * MINUTE_MS);
  if (delay.unit === 'hours') return Math.ceil(delay.amount * HOUR_MS);
  return 0;
}

export function addDelayIn(ctx: CalendarContext, fromMs: number, delay: Delay): number {
  checkDelay(delay);
  let result: number;
  if (delay.unit === 'minutes' || delay.unit === 'hours') {
    result = fromMs + elapsedPart(delay);
  } else if (delay.amount === 0) {
    return fromMs;
  } else {
    const wall = wallOf(ctx.zone, fromMs);
    const day = Math.floor(wall / DAY_MS);
    const timeOfDay = wall - day * DAY_MS;
    const target = delay.unit === 'days' ? day + delay.amount : addBusinessDays(ctx, day, delay.amount);
    result = instantOfWall(ctx.zone, target * DAY_MS + timeOfDay, 'target');
  }
  checkInstant(result, 'due time');
  return result;
}

/** fromMs plus the delay, in the spec's zone and business days; see the header for the rules. */
export function addDelay(fromMs: number, delay: Delay, spec: CalendarSpec): number {
  checkInstant(fromMs, 'fromMs');
  return addDelayIn(contextOf(spec), fromMs, delay);
}
