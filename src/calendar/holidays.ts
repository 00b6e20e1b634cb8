/**
 * Public holidays, from the date-holidays package.
 *
 * The rule: a local date is a holiday for (country, region) when date-holidays lists, for that
 * country and subdivision, a holiday of type 'public' on it, or of type 'bank' in GB (where the
 * days off are the bank holidays). 'observance', 'optional', 'school' and other countries' 'bank'
 * days (DE and AT list Christmas Eve from 14:00 as 'bank') do not count. Substitute days ("in lieu",
 * e.g. US Independence Day observed on Friday 2026-07-03) are listed as 'public' and count.
 * A holiday counts for whole local dates: the date it is listed on, plus following dates when its
 * duration is several days (KR Seollal, Eid in several countries); a half-day public holiday
 * blocks its whole date.
 * Without a region only the holidays common to the whole country count (GB without 'ENG' lacks
 * England's Summer bank holiday; US without a state lacks state holidays).
 *
 * Constructing date-holidays' calendar and expanding a year costs milliseconds, so each
 * (country, region) keeps one instance and the set of holiday dates of each year it has expanded;
 * a lookup is then a Set membership test. A date of year Y expands Y-1, Y and Y+1 once, because a
 * substitute day can fall in the neighbouring year (US New Year's Day 2022 was observed 2021-12-31).
 */
import Holidays from 'date-holidays';
import { cadenzaError } from '../common/errors.ts';
import { DAY_MS, civilFromDays, dayOfIsoDate } from './civil.ts';

/** Countries whose 'bank' holidays are general days off. */
const BANK_HOLIDAYS_ARE_PUBLIC = new Set(['GB']);

export interface HolidayCalendar {
  readonly country: string;
  readonly region: string | undefined;
  /** Years whose neighbourhood (Y-1, Y, Y+1) is expanded into `days`. */
  readonly ready: Set<number>;
  readonly expanded: Set<number>;
  /** Day numbers (civil.ts) of holiday dates. */
  readonly days: Set<number>;
  instance: Holidays | null;
}

const calendars = new Map<string, HolidayCalendar>();
let catalogue: Holidays | null = null;
let countries: Record<string, string> | null = null;

function invalid(message: string, details: Record<string, unknown>): never {
  throw cadenzaError('INVALID_INPUT', message, details);
}

/**
 * The cached calendar of a country and optional subdivision. Country: ISO 3166-1 alpha-2, any case.
 * Region: date-holidays' state code ('BY', 'ENG', 'NSW'), optionally prefixed ISO 3166-2 style
 * ('DE-BY'). Throws INVALID_INPUT when date-holidays has no calendar for them (it would silently
 * answer "no holidays" otherwise).
 */
export function holidayCalendar(country: string, region?: string): HolidayCalendar {
  const key = `${String(country)}|${region ?? ''}`;
  const known = calendars.get(key);
  if (known) return known;

  const c = typeof country === 'string' ? country.trim().toUpperCase() : '';
  catalogue ??= new Holidays();
  countries ??= catalogue.getCountries('en');
  if (!/^[A-Z]{2}$/.test(c) || !(c in countries)) {
    invalid(`no public-holiday calendar for country '${String(country)}' (expected an ISO 3166-1 alpha-2 code such as 'US')`, {
      field: 'country',
      value: country,
    });
  }
  let r: string | undefined;
  if (region !== undefined && region !== null) {
    r = String(region).trim().toUpperCase();
    if (r.startsWith(`${c}-`)) r = r.slice(c.length + 1);
    if (r === '') r = undefined;
  }
  if (r !== undefined) {
    const states = catalogue.getStates(c, 'en') ?? {};
    if (!(r in states)) {
      const codes = Object.keys(states);
      invalid(
        `no public-holiday calendar for region '${String(region)}' of ${c}` +
          (codes.length > 0 ? ` (known: ${codes.slice(0, 20).join(', ')}${codes.length > 20 ? ', …' : ''})` : ' (it has no regions)'),
        { field: 'region', value: region, country: c },
      );
    }
  }
  const cal: HolidayCalendar = { country: c, region: r, ready: new Set(), expanded: new Set(), days: new Set(), instance: null };
  calendars.set(key, cal);
  return cal;
}

function expandYear(cal: HolidayCalendar, year: number): void {
  if (cal.expanded.has(year)) return;
  cal.expanded.add(year);
  cal.instance ??= cal.region === undefined ? new Holidays(cal.country) : new Holidays(cal.country, cal.region);
  const bankCounts = BANK_HOLIDAYS_ARE_PUBLIC.has(cal.country);
  for (const h of cal.instance.getHolidays(year)) {
    if (h.type !== 'public' && !(bankCounts && h.type === 'bank')) continue;
    // h.date is local: 'YYYY-MM-DD hh:mm:ss' with an optional ' -0600' (Islamic days begin at the eve).
    const first = dayOfIsoDate(h.date.slice(0, 10));
    const length = Math.max(1, Math.round((h.end.getTime() - h.start.getTime()) / DAY_MS));
    for (let i = 0; i < length; i++) cal.days.add(first + i);
  }
}

/** Whether a local date (day number) is a holiday in this calendar. */
export function isHolidayDay(cal: HolidayCalendar, day: number): boolean {
  const { year } = civilFromDays(day);
  if (!cal.ready.has(year)) {
    expandYear(cal, year - 1);
    expandYear(cal, year);
    expandYear(cal, year + 1);
    cal.ready.add(year);
  }
  return cal.days.has(day);
}

/** Whether the local date 'YYYY-MM-DD' is a public holiday in the country (and region); see the header for the rule. */
export function isHoliday(localDateISO: string, country: string, region?: string): boolean {
  return isHolidayDay(holidayCalendar(country, region), dayOfIsoDate(localDateISO));
}

/** Whether date-holidays knows the country (and region): validate imports before they reach computeDue. */
export function hasHolidayCalendar(country: string, region?: string): boolean {
  try {
    holidayCalendar(country, region);
    return true;
  } catch {
    return false;
  }
}
