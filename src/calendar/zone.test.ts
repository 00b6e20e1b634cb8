import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { fromWall, isValidZone, resolveZone, toWall } from './zone.ts';
import { ZONES, ms, show, thrown } from '../../test/calendar/instants.ts';

/** Wall time (local date and time as if UTC) of an instant, according to luxon. */
function luxonWall(instant: number, zone: string): number {
  const d = DateTime.fromMillis(instant, { zone });
  return Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute, d.second, d.millisecond);
}

const wallOfText = (text: string): number => Date.parse(`${text}Z`);


describe('isValidZone', () => {
  it('accepts IANA names the tz data knows', () => {
    for (const z of [...ZONES, 'Etc/GMT+5', 'US/Eastern', 'America/Argentina/Buenos_Aires', 'europe/berlin']) {
      expect(isValidZone(z), z).toBe(true);
    }
  });

  it('refuses unknown names, offsets, blanks and non-strings', () => {
    for (const z of ['', 'Foo/Bar', 'Mars/Olympus_Mons', '+05:00', 'GMT+05:30', 'America/New York', ' Europe/Berlin', 'EST-ish']) {
      expect(isValidZone(z), JSON.stringify(z)).toBe(false);
    }
    expect(isValidZone(null as unknown as string)).toBe(false);
    expect(isValidZone(42 as unknown as string)).toBe(false);
  });
});

describe('resolveZone: a prospect whose zone is unknown', () => {
  it("takes the lead's zone when it is valid", () => {
    expect(resolveZone({ lead: 'Asia/Kolkata', mailbox: 'Europe/Berlin', workspace: 'UTC' })).toEqual({
      zone: 'Asia/Kolkata',
      source: 'lead',
    });
  });

  it("falls back to the mailbox's zone, then the workspace's, then UTC", () => {
    expect(resolveZone({ lead: 'Somewhere/Else', mailbox: 'Europe/Berlin', workspace: 'America/New_York' })).toEqual({
      zone: 'Europe/Berlin',
      source: 'mailbox',
    });
    expect(resolveZone({ lead: null, mailbox: '', workspace: 'America/New_York' })).toEqual({
      zone: 'America/New_York',
      source: 'workspace',
    });
    expect(resolveZone({ lead: 'EST-ish', mailbox: 'nope', workspace: '+02:00' })).toEqual({ zone: 'UTC', source: 'default' });
    expect(resolveZone({})).toEqual({ zone: 'UTC', source: 'default' });
  });

  it('ignores surrounding blanks', () => {
    expect(resolveZone({ lead: '  Australia/Adelaide\n' })).toEqual({ zone: 'Australia/Adelaide', source: 'lead' });
  });
});

describe('wall time ↔ instant', () => {
  it('agrees with luxon on the local time of any instant', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }),
        (zone, instant) => {
          expect(toWall(zone, instant)).toBe(luxonWall(instant, zone));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('agrees with luxon in the minutes around every transition of 2025', () => {
    for (const zone of ZONES) {
      let prev = DateTime.fromMillis(Date.UTC(2025, 0, 1), { zone }).offset;
      for (let t = Date.UTC(2025, 0, 1); t < Date.UTC(2026, 0, 1); t += 6 * 3_600_000) {
        const offset = DateTime.fromMillis(t, { zone }).offset;
        if (offset !== prev) {
          // the transition lies in (t - 6 h, t]
          for (let u = t - 7 * 3_600_000; u <= t + 3_600_000; u += 60_000) expect(toWall(zone, u)).toBe(luxonWall(u, zone));
        }
        prev = offset;
      }
    }
  });

  it('maps a wall time back to an instant showing that wall time, the earliest one', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }),
        (zone, instant) => {
          const wall = toWall(zone, instant);
          const back = fromWall(zone, wall);
          expect(toWall(zone, back)).toBe(wall);
          expect(back).toBeLessThanOrEqual(instant);
          expect(instant - back).toBeLessThanOrEqual(3_600_000); // at most the repeated hour
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('keeps window edges in wall-time order (boundary mode is monotone)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
        fc.integer({ min: 0, max: 3 * 3_600_000 }),
        (zone, w, dw) => {
          expect(fromWall(zone, w, 'boundary')).toBeLessThanOrEqual(fromWall(zone, w + dw, 'boundary'));
        },
      ),
      { numRuns: 1000 },
    );
  });

  describe('a local time that does not exist (spring forward)', () => {
    const cases: Array<[string, string, string, string]> = [
      // zone, wall time in the gap, target (moved forward by the gap), boundary (the transition)
      ['America/New_York', '2025-03-09T02:30:00', '2025-03-09T03:30:00-04:00', '2025-03-09T03:00:00-04:00'],
      ['Europe/Berlin', '2025-03-30T02:30:00', '2025-03-30T03:30:00+02:00', '2025-03-30T03:00:00+02:00'],
      ['Europe/London', '2025-03-30T01:30:00', '2025-03-30T02:30:00+01:00', '2025-03-30T02:00:00+01:00'],
      ['Australia/Sydney', '2025-10-05T02:30:00', '2025-10-05T03:30:00+11:00', '2025-10-05T03:00:00+11:00'],
      ['Australia/Adelaide', '2025-10-05T02:15:00', '2025-10-05T03:15:00+10:30', '2025-10-05T03:00:00+10:30'],
      ['Australia/Lord_Howe', '2025-10-05T02:10:00', '2025-10-05T02:40:00+11:00', '2025-10-05T02:30:00+11:00'],
    ];
    for (const [zone, wall, target, boundary] of cases) {
      it(`${zone} ${wall}: a due time moves forward by the gap, a window edge to the transition`, () => {
        expect(show(fromWall(zone, wallOfText(wall), 'target'), zone)).toBe(target);
        expect(show(fromWall(zone, wallOfText(wall), 'boundary'), zone)).toBe(boundary);
        // luxon resolves a target the same way
        expect(show(DateTime.fromISO(wall, { zone }).toMillis(), zone)).toBe(target);
      });
    }
  });

  describe('a local time that exists twice (fall back) takes its first occurrence', () => {
    const cases: Array<[string, string, string, string]> = [
      ['America/New_York', '2025-11-02T01:30:00', '2025-11-02T01:30:00-04:00', '2025-11-02T05:30:00Z'],
      ['Europe/Berlin', '2025-10-26T02:30:00', '2025-10-26T02:30:00+02:00', '2025-10-26T00:30:00Z'],
      ['Europe/London', '2025-10-26T01:30:00', '2025-10-26T01:30:00+01:00', '2025-10-26T00:30:00Z'],
      ['Australia/Sydney', '2025-04-06T02:30:00', '2025-04-06T02:30:00+11:00', '2025-04-05T15:30:00Z'],
      ['Australia/Adelaide', '2025-04-06T02:30:00', '2025-04-06T02:30:00+10:30', '2025-04-05T16:00:00Z'],
    ];
    for (const [zone, wall, expected, utc] of cases) {
      it(`${zone} ${wall}`, () => {
        for (const mode of ['target', 'boundary'] as const) {
          const t = fromWall(zone, wallOfText(wall), mode);
          expect(show(t, zone)).toBe(expected);
          expect(t).toBe(ms(utc));
        }
      });
    }
  });

  it('has nothing to resolve in a zone without DST (Asia/Kolkata, +05:30)', () => {
    expect(show(fromWall('Asia/Kolkata', wallOfText('2025-03-09T02:30:00')), 'Asia/Kolkata')).toBe('2025-03-09T02:30:00+05:30');
    expect(fromWall('Asia/Kolkata', wallOfText('2025-11-02T01:30:00'))).toBe(ms('2025-11-01T20:00:00Z'));
  });

  it('reports an unknown zone with UNKNOWN_TIME_ZONE', () => {
    expect(thrown(() => toWall('Mars/Olympus_Mons', 0)).code).toBe('UNKNOWN_TIME_ZONE');
  });
});
