import { DateTime } from 'luxon';

/**
 * When a workspace's weekly report is due (issue 18): at its weekday and hour in its own time zone,
 * once per ISO week. Pure: the job asks it with the clock's now.
 *
 * The hour is the zone's wall-clock hour on that day, so a daylight-saving change never moves it
 * (Monday 08:00 in Berlin is 07:00 UTC in winter and 06:00 in summer). An hour that does not exist
 * that day (02:00 on the night clocks go forward) comes at the first instant after the gap.
 */

/** The ISO week of an instant in a zone: '2026-W49'. */
export function isoWeekOf(nowMs: number, zone: string): string {
  const local = DateTime.fromMillis(nowMs, { zone });
  return `${local.weekYear}-W${String(local.weekNumber).padStart(2, '0')}`;
}

/** The instant of the week's report: its ISO weekday (1 Monday … 7 Sunday) at `hour` in `zone`, in the ISO week holding `nowMs`. */
export function reportInstant(nowMs: number, zone: string, weekday: number, hour: number): number {
  // startOf('week') is the ISO week's Monday (luxon's default, whatever the locale).
  const monday = DateTime.fromMillis(nowMs, { zone }).startOf('week');
  return monday.plus({ days: weekday - 1 }).set({ hour, minute: 0, second: 0, millisecond: 0 }).toMillis();
}

/**
 * The ISO week whose report is due at `nowMs` (its instant has come), or null while it is still
 * ahead. `savedMs`: when the schedule was saved; a week whose instant came before it is not due (a
 * report turned on on a Wednesday goes out the next Monday, as the settings say, not at once).
 */
export function dueWeek(nowMs: number, zone: string, weekday: number, hour: number, savedMs = Number.NEGATIVE_INFINITY): string | null {
  const instant = reportInstant(nowMs, zone, weekday, hour);
  return nowMs >= instant && savedMs <= instant ? isoWeekOf(nowMs, zone) : null;
}
