/**
 * The due instant of a step, computed once when the previous step happens (ARCHITECTURE promise 4).
 *
 * 1. base = addDelay(from, delay).
 * 2. The slot of the window that contains base, or else the next one; start = max(base, slot start).
 * 3. due = start + floor(jitter × spread), where spread is the smallest of
 *    - jitterMinutes,
 *    - what is left of the slot after start (so due is always inside the window: jitter < 1),
 *    - a tenth of the delay, only when base was already allowed and the delay is elapsed time
 *      (minutes/hours): "reply to this in 20 minutes" stays within 2 minutes of 20, and a delay
 *      of 0 is sent at once.
 *    A batch that reaches a window opening (08:30) or the same wall time days later thus spreads
 *    over up to jitterMinutes instead of leaving at the same millisecond.
 *
 * Guarantees: isAllowed(due); due ≥ from + the elapsed part of the delay (due ≥ base ≥ from);
 * due < from + elapsed + jitterMinutes when base is allowed; the same inputs give the same due.
 */
import { cadenzaError } from '../common/errors.ts';
import { MINUTE_MS } from './civil.ts';
import { contextOf } from './context.ts';
import { addDelayIn, elapsedPart } from './delay.ts';
import { nextSlotIn } from './allowed.ts';
import type { CalendarSpec, Delay } from './types.ts';
import { checkInstant } from './zone.ts';

export function computeDue(fromMs: number, delay: Delay, spec: CalendarSpec, jitter: number): number {
  checkInstant(fromMs, 'fromMs');
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter < 1)) {
    throw cadenzaError('INVALID_INPUT', `jitter must be a number in [0, 1), got ${String(jitter)}`, { field: 'jitter', value: jitter });
  }
  const ctx = contextOf(spec);
  const jitterMinutes = spec.jitterMinutes;
  if (typeof jitterMinutes !== 'number' || !Number.isFinite(jitterMinutes) || jitterMinutes < 0) {
    throw cadenzaError('INVALID_INPUT', `jitterMinutes must be a number ≥ 0, got ${String(jitterMinutes)}`, {
      field: 'jitterMinutes',
      value: jitterMinutes,
    });
  }
  const base = addDelayIn(ctx, fromMs, delay);
  const slot = nextSlotIn(ctx, base);
  const baseAllowed = slot.start <= base;
  const start = baseAllowed ? base : slot.start;
  let spread = Math.min(jitterMinutes * MINUTE_MS, slot.end - start);
  if (baseAllowed && (delay.unit === 'minutes' || delay.unit === 'hours')) spread = Math.min(spread, elapsedPart(delay) / 10);
  return start + Math.floor(jitter * spread);
}
