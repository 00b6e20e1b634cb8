import { describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { isAllowed } from './allowed.ts';
import { computeDue } from './due.ts';
import type { CalendarSpec, Delay } from './types.ts';
import { MINUTE, ZONES, ms, show, spec, thrown } from '../../test/calendar/instants.ts';

const NY = 'America/New_York';
const weekdays = 'Mon-Fri 08:30-17:30';
const due = (from: string, delay: Delay, s: CalendarSpec, jitter: number) => show(computeDue(ms(from), delay, s, jitter), s.zone);

describe('computeDue: where the jitter goes', () => {
  const s = spec(NY, weekdays, { country: 'US', jitterMinutes: 45 });

  it('spreads a step due at an allowed wall time over up to jitterMinutes', () => {
    const from = '2025-07-07T10:00:00-04:00';
    expect(due(from, { amount: 2, unit: 'days' }, s, 0)).toBe('2025-07-09T10:00:00-04:00');
    expect(due(from, { amount: 2, unit: 'days' }, s, 0.5)).toBe('2025-07-09T10:22:30-04:00');
    expect(computeDue(ms(from), { amount: 2, unit: 'days' }, s, 0.999999)).toBeLessThan(ms('2025-07-09T10:45:00-04:00'));
  });

  it('never pushes past the end of the window', () => {
    const from = '2025-07-07T17:20:00-04:00';
    expect(due(from, { amount: 2, unit: 'days' }, s, 0.5)).toBe('2025-07-09T17:25:00-04:00'); // 10 minutes left
    const last = computeDue(ms(from), { amount: 2, unit: 'days' }, s, 0.9999999);
    expect(last).toBeLessThan(ms('2025-07-09T17:30:00-04:00'));
    expect(isAllowed(last, s)).toBe(true);
  });

  it('spreads a batch that waited for the window over the first jitterMinutes after it opens', () => {
    expect(due('2025-07-11T16:00:00-04:00', { amount: 3, unit: 'hours' }, s, 0)).toBe('2025-07-14T08:30:00-04:00');
    expect(due('2025-07-11T16:00:00-04:00', { amount: 3, unit: 'hours' }, s, 0.5)).toBe('2025-07-14T08:52:30-04:00');
    const short = spec(NY, 'Mon-Fri 09:00-09:20', { jitterMinutes: 45 });
    expect(due('2025-07-11T10:00:00-04:00', { amount: 1, unit: 'days' }, short, 0.5)).toBe('2025-07-14T09:10:00-04:00');
  });

  it('keeps an elapsed delay that lands in the window within a tenth of itself', () => {
    const from = '2025-07-07T10:00:00-04:00';
    expect(computeDue(ms(from), { amount: 20, unit: 'minutes' }, s, 0.99) - ms(from)).toBe(20 * MINUTE + Math.floor(0.99 * 2 * MINUTE));
    expect(computeDue(ms(from), { amount: 0, unit: 'minutes' }, s, 0.7)).toBe(ms(from));
    expect(due(from, { amount: 5, unit: 'hours' }, s, 0.5)).toBe('2025-07-07T15:15:00-04:00'); // spread 30 min, not 45
    // landing outside the window, it is a window opening like any other
    expect(due('2025-07-07T17:20:00-04:00', { amount: 20, unit: 'minutes' }, s, 0.5)).toBe('2025-07-08T08:52:30-04:00');
  });

  it('adds nothing when jitterMinutes is 0', () => {
    expect(due('2025-07-11T16:00:00-04:00', { amount: 3, unit: 'hours' }, { ...s, jitterMinutes: 0 }, 0.9)).toBe(
      '2025-07-14T08:30:00-04:00',
    );
  });

  it('is deterministic', () => {
    const from = ms('2025-07-03T16:12:34-04:00');
    const a = computeDue(from, { amount: 1, unit: 'business_days' }, s, 0.123);
    expect(computeDue(from, { amount: 1, unit: 'business_days' }, s, 0.123)).toBe(a);
    // Monday (Friday the 4th is a holiday) at the same wall time, plus floor(0.123 × 45 min) = 5 min 32.1 s
    expect(a).toBe(ms('2025-07-07T16:18:06.100-04:00'));
  });
});

describe('computeDue: a DST change never shifts a batch', () => {
  const batches: Array<[string, string, string]> = [
    // zone, enrolled (a Friday), due 3 days later (the Monday, after the change)
    [NY, '2025-03-07T10:00:00-05:00', '2025-03-10T10:00:00-04:00'],
    [NY, '2025-10-31T10:00:00-04:00', '2025-11-03T10:00:00-05:00'],
    ['Europe/Berlin', '2025-03-28T10:00:00+01:00', '2025-03-31T10:00:00+02:00'],
    ['Europe/London', '2025-10-24T10:00:00+01:00', '2025-10-27T10:00:00+00:00'],
    ['Australia/Sydney', '2025-04-04T10:00:00+11:00', '2025-04-07T10:00:00+10:00'],
    ['Australia/Adelaide', '2025-10-03T10:00:00+09:30', '2025-10-06T10:00:00+10:30'],
  ];
  for (const [zone, enrolled, monday] of batches) {
    it(`${zone}: a batch enrolled at ${enrolled} goes out on ${monday}, within jitterMinutes`, () => {
      const s = spec(zone, weekdays, { jitterMinutes: 45 });
      const random = seededRandom(`batch ${zone}`);
      for (let i = 0; i < 200; i++) {
        const from = ms(enrolled) + i * 1_000; // enrolled over 200 seconds
        const d = computeDue(from, { amount: 3, unit: 'days' }, s, random.next());
        expect(d).toBeGreaterThanOrEqual(ms(monday) + i * 1_000);
        expect(d).toBeLessThan(ms(monday) + i * 1_000 + 45 * MINUTE);
        expect(isAllowed(d, s)).toBe(true);
      }
      expect(computeDue(ms(enrolled), { amount: 3, unit: 'days' }, s, 0)).toBe(ms(monday));
    });
  }

  it('and a business-day step over a holiday weekend keeps its wall time (US, July 4th)', () => {
    const s = spec(NY, weekdays, { country: 'US' });
    expect(due('2025-07-03T10:00:00-04:00', { amount: 1, unit: 'business_days' }, s, 0)).toBe('2025-07-07T10:00:00-04:00');
  });
});

describe('computeDue: bad input is answered', () => {
  const s = spec(NY, weekdays);
  it('refuses a jitter outside [0, 1) and a negative jitterMinutes', () => {
    for (const j of [1, -0.1, Number.NaN]) {
      expect(thrown(() => computeDue(0, { amount: 1, unit: 'days' }, s, j)).details).toMatchObject({ field: 'jitter' });
    }
    expect(thrown(() => computeDue(0, { amount: 1, unit: 'days' }, { ...s, jitterMinutes: -1 }, 0)).code).toBe('INVALID_INPUT');
  });

  it('refuses a holiday country date-holidays does not know', () => {
    expect(thrown(() => computeDue(0, { amount: 1, unit: 'days' }, { ...s, country: 'XX' }, 0)).details).toMatchObject({
      field: 'country',
    });
  });
});

describe('computeDue: speed', () => {
  it('computes 100k due times well under 2 s (bulk enrollment)', () => {
    const windows = ['Mon-Fri 08:30-17:30', 'any', 'Sun-Thu 22:00-02:00', 'Mon,Wed,Fri 09:00-12:00'];
    const countries = [undefined, 'US', 'GB', 'DE', 'AU', 'IN'];
    const units = ['minutes', 'hours', 'days', 'business_days'] as const;
    const specs = ZONES.flatMap((zone, z) =>
      windows.map((w, i) => spec(zone, w, { country: countries[(z + i) % countries.length], jitterMinutes: 45 })),
    );
    const random = seededRandom('bench');
    const start = ms('2025-01-01T00:00:00Z');
    const inputs = Array.from({ length: 100_000 }, (_, i) => ({
      from: start + random.int(0, 365 * 24 * 60) * MINUTE,
      delay: { amount: random.int(0, 10), unit: units[i % 4] as Delay['unit'] },
      spec: specs[i % specs.length] as CalendarSpec,
      jitter: random.next(),
    }));
    for (const x of inputs.slice(0, 5_000)) computeDue(x.from, x.delay, x.spec, x.jitter); // warm the holiday years
    const t0 = performance.now();
    let sum = 0;
    for (const x of inputs) sum += computeDue(x.from, x.delay, x.spec, x.jitter);
    const elapsed = performance.now() - t0;
    expect(sum).toBeGreaterThan(0);
    expect(elapsed).toBeLessThan(2_000);
  });
});
