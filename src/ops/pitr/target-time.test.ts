import { describe, expect, it } from 'vitest';
import { parseTargetTime, pgTargetText } from './target-time.ts';

const now = Date.parse('2026-12-03T08:00:00Z');

describe('parseTargetTime: the instant named for a restore and its reconcile', () => {
  it('a wall time is read in the zone given, to the minute or the second', () => {
    expect(parseTargetTime('2026-12-03 07:41', now, 'UTC')).toBe(Date.parse('2026-12-03T07:41:00Z'));
    expect(parseTargetTime('2026-12-03 08:41:30', now, 'Europe/Paris')).toBe(Date.parse('2026-12-03T07:41:30Z'));
  });

  it('ISO 8601 with Z or an offset is that instant whatever the zone', () => {
    expect(parseTargetTime('2026-12-03T07:41:00Z', now, 'Asia/Tokyo')).toBe(Date.parse('2026-12-03T07:41:00Z'));
    expect(parseTargetTime('2026-12-03 09:41:00+02:00', now, 'UTC')).toBe(Date.parse('2026-12-03T07:41:00Z'));
  });

  it('refuses the future, nonsense and a wall time the clocks skip', () => {
    expect(() => parseTargetTime('2026-12-03 08:01', now, 'UTC')).toThrow(/future/);
    expect(() => parseTargetTime('yesterday', now, 'UTC')).toThrow(/not a time/);
    expect(() => parseTargetTime('2026-13-03 07:41', now, 'UTC')).toThrow(/not a valid time/);
    // 2026-03-29 02:30 does not exist in Paris (the clocks go from 02:00 to 03:00).
    expect(() => parseTargetTime('2026-03-29 02:30', now, 'Europe/Paris')).toThrow(/does not exist/);
  });

  it('gives pgBackRest a UTC timestamptz', () => {
    expect(pgTargetText(Date.parse('2026-12-03T07:41:00Z'))).toBe('2026-12-03 07:41:00.000+00');
  });
});
