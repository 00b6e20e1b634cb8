import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { civilFromDays, dayOfIsoDate, daysFromCivil, isoDateOfDay, weekdayOfDay, DAY_MS } from './civil.ts';
import { thrown } from '../../test/calendar/instants.ts';

describe('civil dates', () => {
  it('numbers days from 1970-01-01, a Thursday', () => {
    expect(daysFromCivil(1970, 1, 1)).toBe(0);
    expect(weekdayOfDay(0)).toBe(4);
    expect(weekdayOfDay(daysFromCivil(2025, 7, 4))).toBe(5); // a Friday
    expect(weekdayOfDay(daysFromCivil(1969, 12, 28))).toBe(7); // before the epoch: a Sunday
    expect(isoDateOfDay(daysFromCivil(2024, 2, 29))).toBe('2024-02-29');
  });

  it('agrees with Date.UTC for every day from 1900 to 2200', () => {
    fc.assert(
      fc.property(fc.integer({ min: daysFromCivil(1900, 1, 1), max: daysFromCivil(2200, 1, 1) }), (day) => {
        const d = new Date(day * DAY_MS);
        const c = civilFromDays(day);
        expect(c).toEqual({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() });
        expect(daysFromCivil(c.year, c.month, c.day)).toBe(day);
        expect(weekdayOfDay(day)).toBe(((d.getUTCDay() + 6) % 7) + 1);
        expect(dayOfIsoDate(isoDateOfDay(day))).toBe(day);
      }),
    );
  });

  it('refuses dates that are not YYYY-MM-DD or do not exist', () => {
    for (const bad of ['2025-02-30', '2025-13-01', '2025-1-1', '2025-01-01T00:00', '', 'yesterday']) {
      expect(thrown(() => dayOfIsoDate(bad)).code).toBe('INVALID_INPUT');
    }
  });
});
