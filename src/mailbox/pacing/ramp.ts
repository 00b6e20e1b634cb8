/**
 * Ramp-up of a new mailbox: providers judge a new sender by how fast its volume grows, so a new
 * mailbox starts small and adds a few sends a day (`mailbox.ramp` = {start, step, target?},
 * counted from the local date of `mailbox.ramp_started_at`, or of `created_at` when that is not
 * set: a ramp with no start date is taken to have begun when the mailbox was added).
 *
 *   cap(day n of the ramp, n = 0, 1, …) = min(daily_cap, target ?? daily_cap, start + step × n)
 *
 * daily_cap stays the hard ceiling: a target above it does not raise it. Days are calendar days
 * (the ramp follows the calendar, not the days the mailbox happened to send). A day before the
 * ramp's first day gets `start`.
 */
import { cadenzaError } from '../../common/errors.ts';

export interface Ramp {
  start: number;
  step: number;
  target?: number;
}

function nonNegInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 1_000_000;
}

/** Reads `mailbox.ramp`: {} (or null) means no ramp. Throws INVALID_INPUT naming the problem. */
export function parseRamp(raw: unknown, where = 'mailbox.ramp'): Ramp | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw cadenzaError('INVALID_INPUT', `${where} must be an object {start, step, target?}`, { field: 'ramp', input: raw });
  }
  const r = raw as Record<string, unknown>;
  if (Object.keys(r).length === 0) return null;
  const problems: string[] = [];
  for (const k of Object.keys(r)) if (k !== 'start' && k !== 'step' && k !== 'target') problems.push(`unknown key '${k}'`);
  if (!nonNegInt(r.start)) problems.push('start must be an integer >= 0');
  if (!nonNegInt(r.step)) problems.push('step must be an integer >= 0');
  if (r.target !== undefined && r.target !== null && !nonNegInt(r.target)) problems.push('target must be an integer >= 0');
  if (problems.length) throw cadenzaError('INVALID_INPUT', `invalid ${where}: ${problems.join('; ')}`, { field: 'ramp', problems, input: raw });
  const ramp: Ramp = { start: r.start as number, step: r.step as number };
  if (typeof r.target === 'number') ramp.target = r.target;
  return ramp;
}

/** The daily cap on local day `day` (a day number), given the ramp's first local day (null: no ramp). */
export function dailyCapOn(dailyCap: number, ramp: Ramp | null, rampStartDay: number | null, day: number): number {
  if (ramp === null || rampStartDay === null) return dailyCap;
  const n = Math.max(0, day - rampStartDay);
  return Math.max(0, Math.min(dailyCap, ramp.target ?? dailyCap, ramp.start + ramp.step * n));
}
