import { describe, expect, it } from 'vitest';
import { hasHolidayCalendar, isHoliday } from './holidays.ts';
import { thrown } from '../../test/calendar/instants.ts';

// Every expectation below was checked against what date-holidays 3.37 returns (type, date,
// substitute flag) before being written down.
describe('isHoliday', () => {
  it('US: Independence Day, Thanksgiving, and substitute days', () => {
    expect(isHoliday('2025-07-04', 'US')).toBe(true);
    expect(isHoliday('2025-11-27', 'US')).toBe(true); // Thanksgiving
    expect(isHoliday('2025-11-28', 'US')).toBe(false); // day after: an 'observance'
    expect(isHoliday('2025-12-24', 'US')).toBe(false); // Christmas Eve: 'optional'
    expect(isHoliday('2025-02-14', 'US')).toBe(false); // Valentine's: 'observance'
    expect(isHoliday('2026-07-03', 'US')).toBe(true); // Independence Day (substitute day), July 4 is a Saturday
    expect(isHoliday('2021-12-31', 'US')).toBe(true); // New Year's Day 2022 observed the year before
  });

  it('GB: Christmas, Boxing Day, Easter Monday, substitutes; England adds the Summer bank holiday', () => {
    expect(isHoliday('2025-12-25', 'GB')).toBe(true);
    expect(isHoliday('2025-12-26', 'GB')).toBe(true);
    expect(isHoliday('2025-04-21', 'GB')).toBe(true); // Easter Monday
    expect(isHoliday('2025-04-18', 'GB')).toBe(true); // Good Friday
    expect(isHoliday('2027-12-27', 'GB')).toBe(true); // Christmas Day (substitute day)
    expect(isHoliday('2027-12-28', 'GB')).toBe(true); // Boxing Day (substitute day)
    expect(isHoliday('2025-08-25', 'GB')).toBe(false); // not common to all of GB
    expect(isHoliday('2025-08-25', 'GB', 'ENG')).toBe(true);
    expect(isHoliday('2026-04-06', 'GB', 'SCT')).toBe(false); // no Easter Monday in Scotland
    expect(isHoliday('2026-01-02', 'GB', 'SCT')).toBe(true);
  });

  it('DE: Tag der Deutschen Einheit; Bavaria adds Epiphany; the Christmas Eve half-day "bank" holiday does not count', () => {
    expect(isHoliday('2025-10-03', 'DE')).toBe(true);
    expect(isHoliday('2025-01-06', 'DE')).toBe(false);
    expect(isHoliday('2025-01-06', 'DE', 'BY')).toBe(true);
    expect(isHoliday('2025-01-06', 'de', 'de-by')).toBe(true); // ISO 3166-2 form, any case
    expect(isHoliday('2025-12-24', 'DE')).toBe(false);
    expect(isHoliday('2025-12-25', 'DE')).toBe(true);
  });

  it('FR: 14 juillet, 1er mai, 8 mai', () => {
    expect(isHoliday('2025-07-14', 'FR')).toBe(true);
    expect(isHoliday('2025-05-01', 'FR')).toBe(true);
    expect(isHoliday('2025-05-08', 'FR')).toBe(true);
    expect(isHoliday('2025-07-15', 'FR')).toBe(false);
  });

  it('IN: Republic Day and Independence Day', () => {
    expect(isHoliday('2026-01-26', 'IN')).toBe(true);
    expect(isHoliday('2025-08-15', 'IN')).toBe(true);
    expect(isHoliday('2025-08-14', 'IN')).toBe(false);
  });

  it('AU: Australia Day (moved to Monday when on a Sunday) and ANZAC Day', () => {
    expect(isHoliday('2026-01-26', 'AU')).toBe(true);
    expect(isHoliday('2025-01-26', 'AU')).toBe(false); // a Sunday: date-holidays lists Monday the 27th
    expect(isHoliday('2025-01-27', 'AU')).toBe(true);
    expect(isHoliday('2025-04-25', 'AU')).toBe(true); // ANZAC Day
    expect(isHoliday('2026-10-05', 'AU', 'NSW')).toBe(true); // Labour Day in NSW
    expect(isHoliday('2026-08-03', 'AU', 'NSW')).toBe(false); // NSW Bank Holiday: banks only ('bank')
  });

  it('counts every date of a holiday lasting several days (KR Chuseok, 3 days, plus its substitute)', () => {
    for (const d of ['2025-10-05', '2025-10-06', '2025-10-07', '2025-10-08']) expect(isHoliday(d, 'KR'), d).toBe(true);
    expect(isHoliday('2025-10-10', 'KR')).toBe(false);
  });

  it('refuses unknown countries and regions instead of answering "no holidays"', () => {
    expect(thrown(() => isHoliday('2025-07-04', 'XX')).code).toBe('INVALID_INPUT');
    expect(thrown(() => isHoliday('2025-07-04', 'USA')).message).toMatch(/ISO 3166-1 alpha-2/);
    const e = thrown(() => isHoliday('2025-07-04', 'DE', 'ZZ'));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toMatch(/known: .*BY/);
    expect(hasHolidayCalendar('DE', 'BY')).toBe(true);
    expect(hasHolidayCalendar('XX')).toBe(false);
    expect(thrown(() => isHoliday('2025-02-30', 'US')).code).toBe('INVALID_INPUT');
  });

  it('answers from its cache: 100k lookups over 10 years take well under a second', () => {
    const dates: string[] = [];
    for (let y = 2020; y < 2030; y++) for (let m = 1; m <= 12; m++) dates.push(`${y}-${String(m).padStart(2, '0')}-15`);
    const flags = dates.map((d) => isHoliday(d, 'US')); // expands the years once
    expect(flags.filter(Boolean).length).toBeGreaterThan(0); // MLK Day / Washington's Birthday fall on the 15th some years
    const t0 = performance.now();
    let n = 0;
    let expected = 0;
    for (let i = 0; i < 100_000; i++) {
      if (isHoliday(dates[i % dates.length] as string, 'US')) n++;
      if (flags[i % dates.length]) expected++;
    }
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(n).toBe(expected);
  });
});
