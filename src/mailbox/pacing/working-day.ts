/**
 * A mailbox's working day: when, on one local date, the person behind it would be sending. Drawn
 * from a seed of (mailbox id, local date), so the same day always gets the same plan, and two
 * mailboxes (or two days) differ: a start and an end that move a little around the usual hours,
 * a lunch break on most days, and a ceiling on sends per rolling hour.
 *
 * Times are local wall times turned into instants in the mailbox's zone ('target' mode: a time in
 * a spring-forward gap moves forward by the gap), with millisecond offsets, so no send is released
 * on an exact minute.
 */
import { DAY_MS, MINUTE_MS, weekdayOfDay } from '../../calendar/civil.ts';
import { integer, uniform, unit } from './draw.ts';
import type { LocalDays } from './local-day.ts';
import type { CompiledPacing } from './settings.ts';

export interface WorkingDay {
  /** Local day number (0 = 1970-01-01). */
  day: number;
  /** Local date 'YYYY-MM-DD'. */
  date: string;
  start: number;
  end: number;
  /** A pause inside (start, end); null on a day without one. */
  lunch: { start: number; end: number } | null;
  /** Most sends in any 60 minutes this day (already capped by mailbox.hourly_cap). */
  hourlyCeiling: number;
}

/** The plan for local day `day`; null when the mailbox does not work that weekday (or the day has no room). */
export function workingDay(mailboxId: string, days: LocalDays, day: number, p: CompiledPacing, hourlyCap: number | null): WorkingDay | null {
  if ((p.dayMask & (1 << weekdayOfDay(day))) === 0) return null;
  const date = days.iso(day);
  const seed = `${mailboxId}:${date}`;
  const base = day * DAY_MS;
  const startWall = base + p.startMin * MINUTE_MS + Math.floor(uniform(`${seed}:start`, -p.jitterMin, p.jitterMin) * MINUTE_MS);
  const endWall = base + p.endMin * MINUTE_MS + Math.floor(uniform(`${seed}:end`, -p.jitterMin, p.jitterMin) * MINUTE_MS);
  const start = days.instant(startWall);
  const end = days.instant(endWall);
  if (!(end > start)) return null;
  let lunch: WorkingDay['lunch'] = null;
  if (p.lunch && unit(`${seed}:lunch`) < p.lunch.probability) {
    const l = p.lunch;
    const lunchWall = base + l.atMin * MINUTE_MS + Math.floor(uniform(`${seed}:lunch-at`, -l.jitterMin, l.jitterMin) * MINUTE_MS);
    const length = Math.floor(uniform(`${seed}:lunch-length`, l.minMin, l.maxMin) * MINUTE_MS);
    const ls = days.instant(lunchWall);
    const le = ls + length;
    // A lunch that would not fall inside the day (a short custom day) is skipped, not clipped.
    if (length > 0 && ls > start && le < end) lunch = { start: ls, end: le };
  }
  const ceiling = integer(`${seed}:hourly`, p.hourlyMin, p.hourlyMax);
  return { day, date, start, end, lunch, hourlyCeiling: hourlyCap === null ? ceiling : Math.min(ceiling, hourlyCap) };
}
