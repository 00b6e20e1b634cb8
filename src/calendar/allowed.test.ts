import { describe, expect, it } from 'vitest';
import { isAllowed, nextAllowed } from './allowed.ts';
import { ms, show, spec, thrown } from '../../test/calendar/instants.ts';

const NY = 'America/New_York';
const weekdays = 'Mon-Fri 08:30-17:30';
const allowed = (iso: string, s: Parameters<typeof isAllowed>[1]) => isAllowed(ms(iso), s);
const next = (iso: string, s: Parameters<typeof nextAllowed>[1]) => show(nextAllowed(ms(iso), s), s.zone);

describe('isAllowed / nextAllowed: an hours window', () => {
  const s = spec(NY, weekdays);

  it('includes the start and excludes the end', () => {
    expect(isAllowed(ms('2025-07-07T08:30:00-04:00') - 1, s)).toBe(false);
    expect(allowed('2025-07-07T08:30:00-04:00', s)).toBe(true);
    expect(isAllowed(ms('2025-07-07T17:30:00-04:00') - 1, s)).toBe(true);
    expect(allowed('2025-07-07T17:30:00-04:00', s)).toBe(false);
    expect(allowed('2025-07-12T10:00:00-04:00', s)).toBe(false); // Saturday
  });

  it('returns an allowed instant itself, else the next opening', () => {
    expect(nextAllowed(ms('2025-07-07T12:34:56.789-04:00'), s)).toBe(ms('2025-07-07T12:34:56.789-04:00'));
    expect(next('2025-07-07T06:00:00-04:00', s)).toBe('2025-07-07T08:30:00-04:00');
    expect(next('2025-07-11T18:00:00-04:00', s)).toBe('2025-07-14T08:30:00-04:00');
  });

  it('opens at the same local time on both sides of a DST change', () => {
    expect(next('2025-03-08T12:00:00-05:00', s)).toBe('2025-03-10T08:30:00-04:00');
    expect(next('2025-11-01T12:00:00-04:00', s)).toBe('2025-11-03T08:30:00-05:00');
    const syd = spec('Australia/Sydney', weekdays);
    expect(next('2025-04-05T12:00:00+11:00', syd)).toBe('2025-04-07T08:30:00+10:00');
    expect(next('2025-10-04T12:00:00+10:00', syd)).toBe('2025-10-06T08:30:00+11:00');
    const adl = spec('Australia/Adelaide', 'Mon-Fri 09:00-17:00');
    expect(next('2025-04-05T12:00:00+10:30', adl)).toBe('2025-04-07T09:00:00+09:30');
    expect(next('2025-10-04T12:00:00+09:30', adl)).toBe('2025-10-06T09:00:00+10:30');
    const ldn = spec('Europe/London', weekdays);
    expect(next('2025-03-29T12:00:00+00:00', ldn)).toBe('2025-03-31T08:30:00+01:00');
    const ber = spec('Europe/Berlin', weekdays);
    expect(next('2025-10-25T12:00:00+02:00', ber)).toBe('2025-10-27T08:30:00+01:00');
  });

  it('works in a half-hour zone (Asia/Kolkata)', () => {
    const kol = spec('Asia/Kolkata', 'Mon-Fri 09:00-18:00');
    expect(nextAllowed(ms('2025-03-08T10:00:00+05:30'), kol)).toBe(ms('2025-03-10T03:30:00Z'));
  });
});

describe('isAllowed / nextAllowed: holidays', () => {
  it('skips a holiday and the weekend after it', () => {
    const s = spec(NY, weekdays, { country: 'US' });
    expect(allowed('2025-07-04T10:00:00-04:00', s)).toBe(false);
    expect(next('2025-07-03T18:00:00-04:00', s)).toBe('2025-07-07T08:30:00-04:00');
    expect(next('2025-11-26T18:00:00-05:00', s)).toBe('2025-11-28T08:30:00-05:00'); // Thanksgiving
    expect(allowed('2025-07-04T10:00:00-04:00', { ...s, skipHolidays: false })).toBe(true);
  });

  it("blocks a holiday's whole local date in an 'any' window", () => {
    const s = spec(NY, 'any', { country: 'US' });
    expect(isAllowed(ms('2025-07-04T00:00:00-04:00') - 1, s)).toBe(true);
    expect(allowed('2025-07-04T12:00:00-04:00', s)).toBe(false);
    expect(next('2025-07-04T12:00:00-04:00', s)).toBe('2025-07-05T00:00:00-04:00');
    expect(allowed('2025-07-04T12:00:00-04:00', spec(NY, 'any'))).toBe(true); // no country: nothing to skip
  });

  it("uses the prospect's local date: Republic Day in Kolkata starts while it is still the 25th in New York", () => {
    const s = spec('Asia/Kolkata', 'any', { country: 'IN' });
    expect(allowed('2026-01-25T23:59:00+05:30', s)).toBe(true);
    expect(allowed('2026-01-26T00:00:00+05:30', s)).toBe(false);
  });
});

describe('isAllowed / nextAllowed: windows crossing midnight', () => {
  it('gives the part after midnight to the day the window opened (Mon 22:00 - Tue 02:00)', () => {
    const s = spec('Europe/Berlin', 'Mon 22:00-02:00');
    expect(isAllowed(ms('2025-07-07T22:00:00+02:00') - 1, s)).toBe(false);
    expect(allowed('2025-07-07T22:00:00+02:00', s)).toBe(true);
    expect(allowed('2025-07-08T00:00:00+02:00', s)).toBe(true);
    expect(allowed('2025-07-08T01:59:00+02:00', s)).toBe(true);
    expect(allowed('2025-07-08T02:00:00+02:00', s)).toBe(false);
    expect(allowed('2025-07-08T22:00:00+02:00', s)).toBe(false); // Tuesday's evening
    expect(allowed('2025-07-07T01:00:00+02:00', s)).toBe(false); // Sunday's night
    expect(allowed('2025-07-06T23:00:00+02:00', s)).toBe(false);
    expect(next('2025-07-08T03:00:00+02:00', s)).toBe('2025-07-14T22:00:00+02:00');
  });

  it('stops at midnight when the next date is a holiday, and opens nothing on a holiday', () => {
    const us = spec(NY, 'Sun-Thu 22:00-02:00', { country: 'US' });
    expect(allowed('2025-07-03T23:00:00-04:00', us)).toBe(true);
    expect(allowed('2025-07-04T00:00:00-04:00', us)).toBe(false);
    expect(allowed('2025-07-04T01:00:00-04:00', us)).toBe(false);
    expect(next('2025-07-04T00:00:00-04:00', us)).toBe('2025-07-06T22:00:00-04:00');

    const gb = spec('Europe/London', 'Sun-Thu 22:00-02:00', { country: 'GB' });
    expect(allowed('2025-12-24T23:00:00+00:00', gb)).toBe(true);
    expect(allowed('2025-12-25T00:30:00+00:00', gb)).toBe(false);
    expect(allowed('2025-12-25T22:00:00+00:00', gb)).toBe(false); // opens on Christmas Day: no slot
    expect(next('2025-12-25T00:00:00+00:00', gb)).toBe('2025-12-28T22:00:00+00:00');
    expect(allowed('2025-12-29T01:00:00+00:00', gb)).toBe(true);
  });

  it('spans a spring-forward night (5 real hours) and a fall-back night (7 real hours)', () => {
    const s = spec(NY, 'Sat 22:00-04:00');
    expect(allowed('2025-03-09T01:59:00-05:00', s)).toBe(true);
    expect(allowed('2025-03-09T03:30:00-04:00', s)).toBe(true);
    expect(allowed('2025-03-09T04:00:00-04:00', s)).toBe(false);
    expect(ms('2025-03-09T04:00:00-04:00') - ms('2025-03-08T22:00:00-05:00')).toBe(5 * 3_600_000);
    expect(allowed('2025-11-02T01:30:00-05:00', s)).toBe(true);
    expect(allowed('2025-11-02T03:59:00-05:00', s)).toBe(true);
    expect(allowed('2025-11-02T04:00:00-05:00', s)).toBe(false);
  });
});

describe('isAllowed / nextAllowed: window edges on DST days', () => {
  it('opens a window whose start does not exist at the transition (02:30 → 03:00 EDT)', () => {
    expect(next('2025-03-09T00:00:00-05:00', spec(NY, 'Sun 02:30-05:00'))).toBe('2025-03-09T03:00:00-04:00');
  });

  it('skips a window swallowed whole by the gap (02:00-03:00 on spring-forward day)', () => {
    const s = spec(NY, 'Sun 02:00-03:00');
    expect(allowed('2025-03-09T03:00:00-04:00', s)).toBe(false);
    expect(next('2025-03-09T00:00:00-05:00', s)).toBe('2025-03-16T02:00:00-04:00');
  });

  it('opens and closes at the first occurrence of a repeated wall time', () => {
    const opens = spec(NY, 'Sun 01:30-05:00');
    expect(next('2025-11-02T00:00:00-04:00', opens)).toBe('2025-11-02T01:30:00-04:00');
    expect(allowed('2025-11-02T01:15:00-05:00', opens)).toBe(true); // an hour after it opened
    const closes = spec(NY, 'Sun 00:00-01:30');
    expect(allowed('2025-11-02T01:29:00-04:00', closes)).toBe(true);
    expect(allowed('2025-11-02T01:15:00-05:00', closes)).toBe(false); // after it closed
  });
});

describe('isAllowed / nextAllowed: nothing allowed', () => {
  it('throws when no slot opens within 370 days, e.g. a window with no days', () => {
    const s = spec(NY, { kind: 'hours', days: [], start: '09:00', end: '17:00' });
    expect(isAllowed(ms('2025-07-07T10:00:00-04:00'), s)).toBe(false);
    const e = thrown(() => nextAllowed(ms('2025-07-07T10:00:00-04:00'), s));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toMatch(/370 days/);
  });

  it('refuses an instant that is not a number', () => {
    expect(thrown(() => isAllowed(Number.POSITIVE_INFINITY, spec(NY, 'any'))).details).toMatchObject({ field: 'atMs' });
  });
});
