import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { dueWeek, isoWeekOf, reportInstant } from './week.ts';

const at = (iso: string) => DateTime.fromISO(iso, { setZone: true }).toMillis();

describe('weekly report: when it is due', () => {
  it('is due from its weekday and hour in the zone, until the ISO week ends', () => {
    // Monday 08:00 in Berlin, winter (UTC+1): 07:00 UTC.
    expect(dueWeek(at('2026-03-23T06:59:59Z'), 'Europe/Berlin', 1, 8)).toBeNull();
    expect(dueWeek(at('2026-03-23T07:00:00Z'), 'Europe/Berlin', 1, 8)).toBe('2026-W13');
    expect(dueWeek(at('2026-03-29T21:59:59Z'), 'Europe/Berlin', 1, 8)).toBe('2026-W13');
    // Sunday 23:00 UTC is Monday 01:00 in Berlin: the next ISO week, before its hour.
    expect(dueWeek(at('2026-03-29T23:00:00Z'), 'Europe/Berlin', 1, 8)).toBeNull();
  });

  it('is not due in the week the schedule was saved after its hour (turned on on a Wednesday: the next Monday, as GET …/weekly-report says)', () => {
    const saved = at('2026-03-25T10:00:00Z');
    expect(dueWeek(at('2026-03-25T10:05:00Z'), 'Europe/Berlin', 1, 8, saved)).toBeNull();
    expect(dueWeek(at('2026-03-30T05:59:59Z'), 'Europe/Berlin', 1, 8, saved)).toBeNull();
    expect(dueWeek(at('2026-03-30T06:00:00Z'), 'Europe/Berlin', 1, 8, saved)).toBe('2026-W14');
    // Saved before the hour of its week: due that week.
    expect(dueWeek(at('2026-03-23T07:00:00Z'), 'Europe/Berlin', 1, 8, at('2026-03-23T06:00:00Z'))).toBe('2026-W13');
  });

  it('keeps the local hour across a daylight-saving change', () => {
    // The clocks went forward on Sunday 29 March 2026: Monday 08:00 is now 06:00 UTC.
    expect(reportInstant(at('2026-03-31T12:00:00Z'), 'Europe/Berlin', 1, 8)).toBe(at('2026-03-30T06:00:00Z'));
    expect(reportInstant(at('2026-03-24T12:00:00Z'), 'Europe/Berlin', 1, 8)).toBe(at('2026-03-23T07:00:00Z'));
    // New York went forward on 8 March 2026: Friday 17:00 is 22:00 UTC before, 21:00 after.
    expect(reportInstant(at('2026-03-06T12:00:00Z'), 'America/New_York', 5, 17)).toBe(at('2026-03-06T22:00:00Z'));
    expect(reportInstant(at('2026-03-13T12:00:00Z'), 'America/New_York', 5, 17)).toBe(at('2026-03-13T21:00:00Z'));
  });

  it('an hour the clocks skip comes at the first instant after the gap', () => {
    // Berlin, Sunday 29 March 2026: 02:00 does not exist; 03:00 CEST is 01:00 UTC.
    expect(reportInstant(at('2026-03-29T12:00:00Z'), 'Europe/Berlin', 7, 2)).toBe(at('2026-03-29T01:00:00Z'));
  });

  it('names ISO weeks by their week-year (29 December 2025 is in 2026-W01)', () => {
    expect(isoWeekOf(at('2025-12-29T12:00:00Z'), 'UTC')).toBe('2026-W01');
    expect(isoWeekOf(at('2027-01-01T12:00:00Z'), 'UTC')).toBe('2026-W53');
  });
});
