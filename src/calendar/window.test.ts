import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileWindow, formatWindow, parseWindow } from './window.ts';
import type { SendWindow, Weekday } from './types.ts';
import { thrown } from '../../test/calendar/instants.ts';

describe('parseWindow, text', () => {
  it("reads 'any'", () => {
    expect(parseWindow('any')).toEqual({ kind: 'any' });
    expect(parseWindow('  ANY ')).toEqual({ kind: 'any' });
  });

  it('reads a range of days and hours', () => {
    expect(parseWindow('Mon-Fri 08:30-17:30')).toEqual({ kind: 'hours', days: [1, 2, 3, 4, 5], start: '08:30', end: '17:30' });
  });

  it('reads a list of days', () => {
    expect(parseWindow('Mon,Wed,Fri 09:00-12:00')).toEqual({ kind: 'hours', days: [1, 3, 5], start: '09:00', end: '12:00' });
    expect(parseWindow('Monday, Wednesday 9:00 - 12:00')).toEqual({ kind: 'hours', days: [1, 3], start: '09:00', end: '12:00' });
  });

  it('reads a window crossing midnight, and ranges wrapping through Sunday', () => {
    expect(parseWindow('Sun-Thu 22:00-02:00')).toEqual({ kind: 'hours', days: [1, 2, 3, 4, 7], start: '22:00', end: '02:00' });
    expect(parseWindow('fri-mon 9:00-17:00')).toEqual({ kind: 'hours', days: [1, 5, 6, 7], start: '09:00', end: '17:00' });
  });

  it('accepts typographic dashes and 24:00 as an end', () => {
    expect(parseWindow('Mon–Fri 08:30–24:00')).toEqual({ kind: 'hours', days: [1, 2, 3, 4, 5], start: '08:30', end: '24:00' });
  });

  it('reads days alone as the whole day, hours alone as Monday to Friday', () => {
    expect(parseWindow('Sat,Sun')).toEqual({ kind: 'hours', days: [6, 7], start: '00:00', end: '24:00' });
    expect(parseWindow('09:00-17:00')).toEqual({ kind: 'hours', days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' });
  });

  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['Mun-Fri 08:00-17:00', /unknown day 'Mun'/],
    ['Mon-Fri 25:00-26:00', /'25:00' is not a time of day/],
    ['Mon-Fri 08:60-09:00', /'08:60'/],
    ['Mon-Fri 09:00-09:00', /start and end are equal/],
    ['Mon-Fri 24:00-08:00', /'24:00' is not a time of day/],
    ['Mon-Fri 8-17', /cannot read/],
    ['Mon-Wed-Fri 09:00-17:00', /not a day or a range/],
  ];
  for (const [input, message] of bad) {
    it(`refuses ${JSON.stringify(input)} with a clear message`, () => {
      const e = thrown(() => parseWindow(input));
      expect(e.code).toBe('INVALID_INPUT');
      expect(e.message).toMatch(message);
      expect(e.details).toMatchObject({ field: 'window' });
    });
  }
});

describe('parseWindow, object', () => {
  it('reads days as numbers or names, with defaults', () => {
    expect(parseWindow({ days: [3, 1, 1], start: '9:00', end: '12:00' })).toEqual({ kind: 'hours', days: [1, 3], start: '09:00', end: '12:00' });
    expect(parseWindow({ days: ['mon', 'Friday'] })).toEqual({ kind: 'hours', days: [1, 5], start: '00:00', end: '24:00' });
    expect(parseWindow({})).toEqual({ kind: 'hours', days: [1, 2, 3, 4, 5], start: '00:00', end: '24:00' });
    expect(parseWindow({ kind: 'any' })).toEqual({ kind: 'any' });
  });

  it('refuses empty or out-of-range days and unknown kinds', () => {
    expect(thrown(() => parseWindow({ days: [] })).message).toMatch(/no days/);
    expect(thrown(() => parseWindow({ days: [0] })).message).toMatch(/not a weekday/);
    expect(thrown(() => parseWindow({ days: [8] })).message).toMatch(/not a weekday/);
    expect(thrown(() => parseWindow({ kind: 'weekly' })).message).toMatch(/unknown kind/);
    expect(thrown(() => parseWindow(42 as unknown as string)).code).toBe('INVALID_INPUT');
  });
});

describe('formatWindow', () => {
  it('writes ranges of three days or more as ranges', () => {
    expect(formatWindow({ kind: 'any' })).toBe('any');
    expect(formatWindow(parseWindow('Mon-Fri 08:30-17:30'))).toBe('Mon-Fri 08:30-17:30');
    expect(formatWindow(parseWindow('Mon,Wed,Fri 09:00-12:00'))).toBe('Mon,Wed,Fri 09:00-12:00');
    expect(formatWindow(parseWindow('Sun-Thu 22:00-02:00'))).toBe('Mon-Thu,Sun 22:00-02:00');
    expect(formatWindow(parseWindow('Mon,Tue 09:00-12:00'))).toBe('Mon,Tue 09:00-12:00');
  });

  const arbitraryWindow: fc.Arbitrary<SendWindow> = fc.oneof(
    fc.constant<SendWindow>({ kind: 'any' }),
    fc
      .record({
        days: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }),
        start: fc.integer({ min: 0, max: 1439 }),
        end: fc.integer({ min: 1, max: 1440 }),
      })
      .filter((w) => w.start !== w.end)
      .map(({ days, start, end }): SendWindow => ({
        kind: 'hours',
        days: [...days].sort((a, b) => a - b) as Weekday[],
        start: `${String(Math.floor(start / 60)).padStart(2, '0')}:${String(start % 60).padStart(2, '0')}`,
        end: `${String(Math.floor(end / 60)).padStart(2, '0')}:${String(end % 60).padStart(2, '0')}`,
      })),
  );

  it('is read back by parseWindow to the same window', () => {
    fc.assert(
      fc.property(arbitraryWindow, (w) => {
        expect(parseWindow(formatWindow(w))).toEqual(w);
        expect(parseWindow(w as Parameters<typeof parseWindow>[0])).toEqual(w);
      }),
    );
  });
});

describe('compileWindow', () => {
  it('marks windows that cross midnight', () => {
    expect(compileWindow(parseWindow('Mon 22:00-02:00'))).toMatchObject({ startMin: 1320, endMin: 120, crosses: true, dayMask: 1 << 1 });
    expect(compileWindow(parseWindow('Mon 22:00-24:00'))).toMatchObject({ crosses: false, endMin: 1440 });
  });

  it('counts Monday to Friday as business days of an any window', () => {
    expect(compileWindow({ kind: 'any' })).toMatchObject({ dayMask: 0b1111_1110, businessMask: 0b0011_1110 });
  });

  it('refuses malformed windows built by hand', () => {
    expect(thrown(() => compileWindow({ kind: 'hours', days: [1], start: '9:00', end: '17:00' })).code).toBe('INVALID_INPUT');
    expect(thrown(() => compileWindow({ kind: 'hours', days: [9 as Weekday], start: '09:00', end: '17:00' })).code).toBe('INVALID_INPUT');
    expect(thrown(() => compileWindow({ kind: 'hours', days: [1], start: '09:00', end: '09:00' })).code).toBe('INVALID_INPUT');
  });

  it('accepts a window with no days (nextAllowed then reports that nothing is allowed)', () => {
    expect(compileWindow({ kind: 'hours', days: [], start: '09:00', end: '17:00' }).dayMask).toBe(0);
  });
});
