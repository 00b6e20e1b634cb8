/**
 * Properties over random instants (2015-2035), zones (test/calendar/instants.ts ZONES: both hemispheres,
 * half- and quarter-hour offsets), windows, holiday countries and delays.
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { isAllowed, nextAllowed } from './allowed.ts';
import { addDelay } from './delay.ts';
import { computeDue } from './due.ts';
import { isHoliday } from './holidays.ts';
import type { CalendarSpec, Delay, SendWindow, Weekday } from './types.ts';
import { HOUR, MINUTE, ZONES } from '../../test/calendar/instants.ts';

const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
const toMinutes = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));

const windowArb: fc.Arbitrary<SendWindow> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<SendWindow>({ kind: 'any' }) },
  {
    weight: 4,
    arbitrary: fc
      .record({
        days: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }),
        // mostly quarter hours, sometimes any minute
        start: fc.oneof(fc.integer({ min: 0, max: 95 }).map((q) => q * 15), fc.integer({ min: 0, max: 1439 })),
        end: fc.oneof(fc.integer({ min: 1, max: 96 }).map((q) => q * 15), fc.integer({ min: 1, max: 1440 })),
      })
      .filter((w) => w.start !== w.end)
      .map(({ days, start, end }): SendWindow => ({
        kind: 'hours',
        days: [...days].sort((a, b) => a - b) as Weekday[],
        start: hhmm(start),
        end: hhmm(end),
      })),
  },
);

const specArb: fc.Arbitrary<CalendarSpec> = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    window: windowArb,
    holidays: fc.constantFrom<[string | undefined, string | undefined]>(
      [undefined, undefined],
      ['US', undefined],
      ['GB', 'ENG'],
      ['DE', 'BY'],
      ['FR', undefined],
      ['IN', undefined],
      ['AU', 'NSW'],
    ),
    skipHolidays: fc.boolean(),
    jitterMinutes: fc.integer({ min: 0, max: 120 }),
  })
  .map(({ zone, window, holidays: [country, region], skipHolidays, jitterMinutes }) => {
    const s: CalendarSpec = { zone, window, skipHolidays, jitterMinutes };
    if (country !== undefined) s.country = country;
    if (region !== undefined) s.region = region;
    return s;
  });

const delayArb: fc.Arbitrary<Delay> = fc.oneof(
  fc.integer({ min: 0, max: 20_000 }).map((amount): Delay => ({ amount, unit: 'minutes' })),
  fc.double({ min: 0, max: 500, noNaN: true }).map((amount): Delay => ({ amount, unit: 'hours' })),
  fc.integer({ min: 0, max: 60 }).map((amount): Delay => ({ amount, unit: 'days' })),
  fc.integer({ min: 0, max: 25 }).map((amount): Delay => ({ amount, unit: 'business_days' })),
);

const instantArb = fc.integer({ min: Date.UTC(2015, 0, 1), max: Date.UTC(2035, 0, 1) });
const jitterArb = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

const elapsed = (d: Delay) => (d.unit === 'minutes' ? d.amount * MINUTE : d.unit === 'hours' ? d.amount * HOUR : 0);

function holidayOn(s: CalendarSpec, date: DateTime): boolean {
  return s.skipHolidays && s.country !== undefined ? isHoliday(date.toISODate() as string, s.country, s.region) : false;
}

/** isAllowed from its definition on the local wall clock, or undefined within 30 h of a transition. */
function oracleAllowed(t: number, s: CalendarSpec): boolean | undefined {
  const before = DateTime.fromMillis(t - 30 * HOUR, { zone: s.zone }).offset;
  const after = DateTime.fromMillis(t + 30 * HOUR, { zone: s.zone }).offset;
  if (before !== after) return undefined;
  const d = DateTime.fromMillis(t, { zone: s.zone });
  if (s.window.kind === 'any') return !holidayOn(s, d);
  const days = new Set<number>(s.window.days);
  const m = d.hour * 60 + d.minute + d.second / 60 + d.millisecond / 60_000;
  const start = toMinutes(s.window.start);
  const end = toMinutes(s.window.end);
  if (start < end) return days.has(d.weekday) && !holidayOn(s, d) && m >= start && m < end;
  const prev = d.minus({ days: 1 });
  return (
    (m >= start && days.has(d.weekday) && !holidayOn(s, d)) ||
    (m < end && days.has(prev.weekday) && !holidayOn(s, prev) && !holidayOn(s, d))
  );
}

describe('properties', () => {
  it('computeDue is allowed, never early, within jitterMinutes of the first allowed instant, and deterministic', () => {
    fc.assert(
      fc.property(instantArb, delayArb, specArb, jitterArb, (from, delay, s, jitter) => {
        const due = computeDue(from, delay, s, jitter);
        expect(isAllowed(due, s)).toBe(true);
        expect(due).toBeGreaterThanOrEqual(from + elapsed(delay));
        const first = nextAllowed(addDelay(from, delay, s), s);
        expect(due).toBeGreaterThanOrEqual(first);
        if (s.jitterMinutes === 0) expect(due).toBe(first);
        else expect(due).toBeLessThan(first + s.jitterMinutes * MINUTE);
        expect(computeDue(from, delay, s, jitter)).toBe(due);
      }),
      { numRuns: 1500 },
    );
  });

  it('nextAllowed(x) ≥ x, is allowed, is idempotent, and skips no allowed instant', () => {
    fc.assert(
      fc.property(instantArb, specArb, fc.double({ min: 0, max: 1, noNaN: true }), (x, s, f) => {
        const n = nextAllowed(x, s);
        expect(n).toBeGreaterThanOrEqual(x);
        expect(isAllowed(n, s)).toBe(true);
        expect(nextAllowed(n, s)).toBe(n);
        if (isAllowed(x, s)) expect(n).toBe(x);
        if (n > x) {
          expect(isAllowed(n - 1, s)).toBe(false);
          expect(isAllowed(x + Math.floor(f * (n - x - 1)), s)).toBe(false);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('isAllowed matches the wall-clock definition away from DST transitions', () => {
    let checked = 0;
    fc.assert(
      fc.property(instantArb, specArb, (t, s) => {
        const expected = oracleAllowed(t, s);
        if (expected === undefined) return;
        checked++;
        expect(isAllowed(t, s)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
    expect(checked).toBeGreaterThan(2000);
  });

  it('isAllowed matches the wall-clock definition close to window edges', () => {
    fc.assert(
      fc.property(instantArb, specArb, fc.integer({ min: -2, max: 2 }), fc.boolean(), (t, s, dm, atEnd) => {
        if (s.window.kind === 'any') return;
        // put t on (or a minute around) a window edge of its local date
        const d = DateTime.fromMillis(t, { zone: s.zone });
        const edge = toMinutes(atEnd ? s.window.end : s.window.start) + dm;
        const u = d.startOf('day').plus({ minutes: edge }).toMillis();
        const expected = oracleAllowed(u, s);
        if (expected !== undefined) expect(isAllowed(u, s)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('a days delay lands on the wall time luxon gives, choosing the first of two occurrences', () => {
    fc.assert(
      fc.property(instantArb, fc.integer({ min: 1, max: 400 }), fc.constantFrom(...ZONES), (from, n, zone) => {
        const ours = addDelay(from, { amount: n, unit: 'days' }, { zone, window: { kind: 'any' }, skipHolidays: false, jitterMinutes: 0 });
        const luxon = DateTime.fromMillis(from, { zone }).plus({ days: n });
        const fmt = "yyyy-MM-dd'T'HH:mm:ss.SSS";
        expect(DateTime.fromMillis(ours, { zone }).toFormat(fmt)).toBe(luxon.toFormat(fmt));
        expect(ours).toBeLessThanOrEqual(luxon.toMillis());
      }),
      { numRuns: 1000 },
    );
  });

  it('a business-days delay lands on the n-th business day after, at the same wall time', () => {
    fc.assert(
      fc.property(instantArb, fc.integer({ min: 1, max: 25 }), specArb, (from, n, s) => {
        const due = addDelay(from, { amount: n, unit: 'business_days' }, s);
        const zone = s.zone;
        const start = DateTime.fromMillis(from, { zone });
        const end = DateTime.fromMillis(due, { zone });
        const business = (d: DateTime) =>
          (s.window.kind === 'any' ? d.weekday <= 5 : (s.window.days as number[]).includes(d.weekday)) && !holidayOn(s, d);
        let count = 0;
        let d = start.startOf('day');
        const last = end.startOf('day');
        while (d < last) {
          d = d.plus({ days: 1 });
          if (business(d)) count++;
        }
        expect(count).toBe(n);
        expect(business(end)).toBe(true);
        const sameTime = end.toFormat('HH:mm:ss.SSS') === start.toFormat('HH:mm:ss.SSS');
        const nearTransition = DateTime.fromMillis(due - 3 * HOUR, { zone }).offset !== end.offset;
        expect(sameTime || nearTransition).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
