/**
 * The shapes the calendar works on. Everything here is plain data: instants are epoch
 * milliseconds, zones are IANA names, randomness arrives as a number in [0, 1).
 */

/** ISO weekday, 1 = Monday … 7 = Sunday. */
export type Weekday = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/**
 * When a step may be sent, in the prospect's local wall-clock time.
 *
 * - `any`: any time, any day (public holidays are still skipped when the spec says so).
 * - `hours`: on the listed days, from `start` (inclusive) to `end` (exclusive), both 'HH:MM'.
 *   `end` may be '24:00' (end of the day). When `end` < `start` the window crosses midnight and
 *   the part after midnight belongs to the day the window opened: days [1] with 22:00-02:00 allows
 *   Monday 22:00 until Tuesday 02:00.
 */
export type SendWindow =
  | { kind: 'any' }
  | { kind: 'hours'; days: Weekday[]; start: string; end: string };

export type DelayUnit = 'minutes' | 'hours' | 'days' | 'business_days';

export interface Delay {
  amount: number;
  unit: DelayUnit;
}

export interface CalendarSpec {
  /** IANA zone, already resolved (see resolveZone). */
  zone: string;
  window: SendWindow;
  /** ISO 3166-1 alpha-2 country whose public holidays are skipped; none skipped when absent. */
  country?: string;
  /** Subdivision in date-holidays' codes ('BY' for Bavaria, 'ENG' for England); 'DE-BY' is accepted too. */
  region?: string;
  /** Skip the country's public holidays (call sites default this to true). */
  skipHolidays: boolean;
  /** Spread of the random offset added to a due time, in minutes (e.g. 45). */
  jitterMinutes: number;
}
