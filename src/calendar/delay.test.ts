import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { addDelay } from './delay.ts';
import { HOUR, MINUTE, ms, show, spec, thrown } from '../../test/calendar/instants.ts';

const NY = 'America/New_York';
const weekdays = 'Mon-Fri 08:30-17:30';

describe('addDelay: minutes and hours are elapsed time', () => {
  it('counts real minutes across a spring-forward change (New York)', () => {
    const from = ms('2025-03-09T01:30:00-05:00');
    expect(show(addDelay(from, { amount: 60, unit: 'minutes' }, spec(NY, 'any')), NY)).toBe('2025-03-09T03:30:00-04:00');
    expect(addDelay(from, { amount: 24, unit: 'hours' }, spec(NY, 'any')) - from).toBe(24 * HOUR);
  });

  it('counts real minutes across a fall-back change (New York): 01:30 EDT + 60 min is 01:30 EST', () => {
    const from = ms('2025-11-02T01:30:00-04:00');
    expect(show(addDelay(from, { amount: 60, unit: 'minutes' }, spec(NY, 'any')), NY)).toBe('2025-11-02T01:30:00-05:00');
  });

  it('accepts fractional amounts, rounded up to the millisecond', () => {
    expect(addDelay(0, { amount: 1.5, unit: 'hours' }, spec('UTC', 'any'))).toBe(90 * MINUTE);
    expect(addDelay(0, { amount: 1 / 3, unit: 'minutes' }, spec('UTC', 'any'))).toBe(20_000);
    expect(addDelay(0, { amount: 1e-6, unit: 'minutes' }, spec('UTC', 'any'))).toBe(1);
  });
});

describe('addDelay: days keep the local wall-clock time (a DST change never shifts a batch)', () => {
  const cases: Array<[string, string, string, number]> = [
    // zone, from, 3 calendar days later, elapsed hours
    [NY, '2025-03-07T09:14:00-05:00', '2025-03-10T09:14:00-04:00', 71],
    [NY, '2025-10-31T09:14:00-04:00', '2025-11-03T09:14:00-05:00', 73],
    ['Europe/Berlin', '2025-03-28T10:00:00+01:00', '2025-03-31T10:00:00+02:00', 71],
    ['Europe/Berlin', '2025-10-24T10:00:00+02:00', '2025-10-27T10:00:00+01:00', 73],
    ['Europe/London', '2025-03-28T10:00:00+00:00', '2025-03-31T10:00:00+01:00', 71],
    ['Europe/London', '2025-10-24T10:00:00+01:00', '2025-10-27T10:00:00+00:00', 73],
    // southern hemisphere: DST ends in April, starts in October
    ['Australia/Sydney', '2025-04-04T09:14:00+11:00', '2025-04-07T09:14:00+10:00', 73],
    ['Australia/Sydney', '2025-10-03T09:14:00+10:00', '2025-10-06T09:14:00+11:00', 71],
    ['Australia/Adelaide', '2025-04-04T09:14:00+10:30', '2025-04-07T09:14:00+09:30', 73],
    ['Australia/Adelaide', '2025-10-03T09:14:00+09:30', '2025-10-06T09:14:00+10:30', 71],
    ['Asia/Kolkata', '2025-03-07T09:14:00+05:30', '2025-03-10T09:14:00+05:30', 72],
  ];
  for (const [zone, from, expected, hours] of cases) {
    it(`${zone}: ${from} + 3 days = ${expected}`, () => {
      const due = addDelay(ms(from), { amount: 3, unit: 'days' }, spec(zone, 'any'));
      expect(show(due, zone)).toBe(expected);
      expect(due - ms(from)).toBe(hours * HOUR);
      expect(due).toBe(DateTime.fromMillis(ms(from), { zone }).plus({ days: 3 }).toMillis()); // luxon agrees
    });
  }

  it('moves a wall time that does not exist forward by the gap (02:30 → 03:30), as luxon does', () => {
    const cases: Array<[string, string, string]> = [
      [NY, '2025-03-08T02:30:00-05:00', '2025-03-09T03:30:00-04:00'],
      ['Europe/Berlin', '2025-03-29T02:30:00+01:00', '2025-03-30T03:30:00+02:00'],
      ['Australia/Sydney', '2025-10-04T02:30:00+10:00', '2025-10-05T03:30:00+11:00'],
      ['Australia/Adelaide', '2025-10-04T02:30:00+09:30', '2025-10-05T03:30:00+10:30'],
    ];
    for (const [zone, from, expected] of cases) {
      const due = addDelay(ms(from), { amount: 1, unit: 'days' }, spec(zone, 'any'));
      expect(show(due, zone), zone).toBe(expected);
      expect(due).toBe(DateTime.fromMillis(ms(from), { zone }).plus({ days: 1 }).toMillis());
    }
  });

  it('takes the first occurrence of a wall time that exists twice (01:30 on fall-back day is 01:30 EDT)', () => {
    const fromSummer = ms('2025-11-01T01:30:00-04:00');
    expect(show(addDelay(fromSummer, { amount: 1, unit: 'days' }, spec(NY, 'any')), NY)).toBe('2025-11-02T01:30:00-04:00');
    // From a winter instant too; luxon's plus() would pick EST here, following the offset of `from`.
    const fromWinter = ms('2025-01-15T01:30:00-05:00');
    expect(show(addDelay(fromWinter, { amount: 291, unit: 'days' }, spec(NY, 'any')), NY)).toBe('2025-11-02T01:30:00-04:00');
    expect(DateTime.fromMillis(fromWinter, { zone: NY }).plus({ days: 291 }).toISO({ suppressMilliseconds: true })).toBe(
      '2025-11-02T01:30:00-05:00',
    );
  });

  it('returns from itself for 0 days, even inside a repeated hour', () => {
    const from = ms('2025-11-02T01:30:00-05:00'); // the second 01:30
    expect(addDelay(from, { amount: 0, unit: 'days' }, spec(NY, 'any'))).toBe(from);
    expect(addDelay(from, { amount: 0, unit: 'business_days' }, spec(NY, 'any'))).toBe(from);
  });
});

describe('addDelay: business days skip weekends and holidays', () => {
  const bd = (zone: string, from: string, amount: number, window = weekdays, extra = {}) =>
    show(addDelay(ms(from), { amount, unit: 'business_days' }, spec(zone, window, extra)), zone);

  it('US: over Independence Day and a weekend', () => {
    expect(bd(NY, '2025-07-03T10:00:00-04:00', 1, weekdays, { country: 'US' })).toBe('2025-07-07T10:00:00-04:00');
    expect(bd(NY, '2025-07-03T10:00:00-04:00', 2, weekdays, { country: 'US' })).toBe('2025-07-08T10:00:00-04:00');
    expect(bd(NY, '2025-07-03T10:00:00-04:00', 1, weekdays, { country: 'US', skipHolidays: false })).toBe('2025-07-04T10:00:00-04:00');
    expect(bd(NY, '2025-07-03T10:00:00-04:00', 1)).toBe('2025-07-04T10:00:00-04:00'); // no country: no holidays
  });

  it('US: over Thanksgiving (the day after is a working day)', () => {
    expect(bd(NY, '2025-11-26T10:00:00-05:00', 1, weekdays, { country: 'US' })).toBe('2025-11-28T10:00:00-05:00');
    expect(bd(NY, '2025-11-26T10:00:00-05:00', 2, weekdays, { country: 'US' })).toBe('2025-12-01T10:00:00-05:00');
  });

  it('GB: over Christmas and Boxing Day, and over Easter', () => {
    const London = 'Europe/London';
    expect(bd(London, '2025-12-24T10:00:00+00:00', 1, weekdays, { country: 'GB' })).toBe('2025-12-29T10:00:00+00:00');
    expect(bd(London, '2025-04-17T10:00:00+01:00', 1, weekdays, { country: 'GB', region: 'ENG' })).toBe('2025-04-22T10:00:00+01:00');
  });

  it('DE, FR, IN, AU: over their national days', () => {
    expect(bd('Europe/Berlin', '2025-10-02T10:00:00+02:00', 1, weekdays, { country: 'DE' })).toBe('2025-10-06T10:00:00+02:00');
    expect(bd('Europe/Paris', '2025-07-11T10:00:00+02:00', 1, weekdays, { country: 'FR' })).toBe('2025-07-15T10:00:00+02:00');
    expect(bd('Asia/Kolkata', '2025-08-14T10:00:00+05:30', 1, weekdays, { country: 'IN' })).toBe('2025-08-18T10:00:00+05:30');
    expect(bd('Australia/Sydney', '2025-04-24T10:00:00+10:00', 1, weekdays, { country: 'AU' })).toBe('2025-04-28T10:00:00+10:00');
    expect(bd('Australia/Sydney', '2025-04-17T10:00:00+10:00', 1, weekdays, { country: 'AU', region: 'NSW' })).toBe(
      '2025-04-22T10:00:00+10:00',
    );
  });

  it('keeps the wall time across DST (Berlin, October)', () => {
    expect(bd('Europe/Berlin', '2025-10-24T10:00:00+02:00', 1, weekdays, { country: 'DE' })).toBe('2025-10-27T10:00:00+01:00');
    expect(bd(NY, '2025-03-07T09:14:00-05:00', 1)).toBe('2025-03-10T09:14:00-04:00');
  });

  it("counts from a weekend day like any other: Saturday + 1 is Monday", () => {
    expect(bd(NY, '2025-07-05T10:00:00-04:00', 1, weekdays, { country: 'US' })).toBe('2025-07-07T10:00:00-04:00');
  });

  it("uses the window's days as the working week, and Monday to Friday for 'any'", () => {
    expect(bd('Asia/Jerusalem', '2025-07-03T10:00:00+03:00', 1, 'Sun-Thu 09:00-17:00')).toBe('2025-07-06T10:00:00+03:00');
    expect(bd(NY, '2025-07-03T10:00:00-04:00', 1, 'any', { country: 'US' })).toBe('2025-07-07T10:00:00-04:00');
  });

  it('lands forward of a DST gap like days do', () => {
    expect(bd(NY, '2025-03-08T02:30:00-05:00', 1, 'Mon-Sun 00:00-24:00')).toBe('2025-03-09T03:30:00-04:00');
  });
});

describe('addDelay: bad input is answered', () => {
  const s = spec(NY, weekdays);
  it('refuses negative, fractional-day, non-finite amounts and unknown units', () => {
    expect(thrown(() => addDelay(0, { amount: -1, unit: 'minutes' }, s)).code).toBe('INVALID_INPUT');
    expect(thrown(() => addDelay(0, { amount: 1.5, unit: 'days' }, s)).message).toMatch(/whole number/);
    expect(thrown(() => addDelay(0, { amount: Number.NaN, unit: 'hours' }, s)).code).toBe('INVALID_INPUT');
    expect(thrown(() => addDelay(0, { amount: 1, unit: 'weeks' as 'days' }, s)).message).toMatch(/unit/);
  });

  it('refuses instants outside 1900-2200 and unknown zones', () => {
    expect(thrown(() => addDelay(Number.NaN, { amount: 1, unit: 'days' }, s)).details).toMatchObject({ field: 'fromMs' });
    expect(thrown(() => addDelay(Date.UTC(2300, 0, 1), { amount: 1, unit: 'days' }, s)).code).toBe('INVALID_INPUT');
    expect(thrown(() => addDelay(0, { amount: 1, unit: 'days' }, { ...s, zone: 'Nowhere/Town' })).code).toBe('UNKNOWN_TIME_ZONE');
  });

  it('refuses business days when the window has no days', () => {
    const none = spec(NY, { kind: 'hours', days: [], start: '09:00', end: '17:00' });
    expect(thrown(() => addDelay(0, { amount: 1, unit: 'business_days' }, none)).message).toMatch(/no days/);
  });
});
