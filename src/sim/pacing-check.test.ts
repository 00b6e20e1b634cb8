import { describe, expect, it } from 'vitest';
import { capAt, pacingViolation, refusalViolation, type SimPacing } from './pacing-check.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
// Monday 2 March 2026, 09:00 in New York (14:00 UTC).
const MON_9 = Date.UTC(2026, 2, 2, 14, 0);

const base: SimPacing = {
  mailboxId: 'm',
  zone: 'America/New_York',
  dailyCap: 5,
  hourlyCap: null,
  ramp: null,
  rampStartedAt: MON_9,
  dayStart: '08:30',
  dayEnd: '17:00',
  dayJitterMinutes: 10,
  workDays: [1, 2, 3, 4, 5],
  gapMinutes: [10, 20],
  hourlyCeiling: [3, 4],
};
const at = (...minutes: number[]) => minutes.map((m) => MON_9 + m * MIN);

describe('pacing checks (the simulation’s own arithmetic)', () => {
  it('accepts sends that keep every limit', () => {
    expect(pacingViolation(base, at(0, 15, 30, 45 + 60, 200))).toBeNull();
    expect(pacingViolation(base, [])).toBeNull();
  });

  it('names a gap under the minimum, in any input order', () => {
    expect(pacingViolation(base, at(30, 0, 9))).toMatch(/540 s apart, under the minimum gap of 10 min/);
  });

  it('counts the daily cap in the mailbox’s own local day, ramp included', () => {
    // Six sends: five on Monday, one after local midnight (05:00 UTC Tuesday is 00:00 in New York).
    const monday = at(0, 60, 120, 180, 240);
    expect(pacingViolation({ ...base, workDays: [1, 2, 3, 4, 5, 6, 7], dayStart: '00:30', dayEnd: '23:30' }, [...monday, MON_9 + 15 * HOUR + 35 * MIN])).toBeNull();
    expect(pacingViolation({ ...base, workDays: [1, 2, 3, 4, 5, 6, 7], dayStart: '00:30', dayEnd: '23:30' }, [...monday, MON_9 + 7 * HOUR])).toMatch(/6 sends on 2026-03-02.*cap of 5/);
    const ramp = { ...base, ramp: { start: 1, step: 2 }, rampStartedAt: MON_9 - 86_400_000 };
    expect(capAt(ramp, MON_9)).toBe(3);
    expect(capAt({ ...ramp, ramp: { start: 1, step: 2, target: 2 } }, MON_9)).toBe(2);
    expect(capAt({ ...ramp, rampStartedAt: MON_9 + 3 * 86_400_000 }, MON_9)).toBe(1);
    expect(pacingViolation(ramp, at(0, 60, 120, 180))).toMatch(/4 sends on 2026-03-02.*cap of 3/);
  });

  it('holds every rolling hour to the lower of the hourly cap and the ceiling', () => {
    expect(pacingViolation(base, at(0, 15, 30, 45, 59))).toMatch(/5 sends in the hour.*ceiling of 4/);
    expect(pacingViolation({ ...base, hourlyCap: 2 }, at(0, 15, 30))).toMatch(/3 sends in the hour.*ceiling of 2/);
    expect(pacingViolation({ ...base, hourlyCap: 2 }, at(0, 15, 75))).toBeNull();
  });

  it('keeps sends on working days, inside the working hours widened by their jitter', () => {
    expect(pacingViolation(base, [MON_9 - 45 * MIN])).toMatch(/outside the working day 08:30-17:00 ±10 min/);
    expect(pacingViolation(base, [MON_9 - 35 * MIN])).toBeNull();
    expect(pacingViolation(base, [MON_9 + 5 * 86_400_000])).toMatch(/not a working day/); // Saturday
  });

  it('finds a refusal for a budget justified only by sends that count', () => {
    const four = at(0, 60, 120, 180);
    expect(refusalViolation(base, [...four, MON_9 + 4 * HOUR], MON_9 + 5 * HOUR, 'daily cap reached (5 of 5 on 2026-03-02)')).toBeNull();
    expect(refusalViolation(base, four, MON_9 + 5 * HOUR, 'daily cap reached (5 of 5 on 2026-03-02)')).toMatch(/4 counted sends on 2026-03-02, under the cap of 5/);
    expect(refusalViolation(base, at(0, 20, 40), MON_9 + 50 * MIN, 'hourly ceiling reached (3 of 3 in the last hour)')).toBeNull();
    expect(refusalViolation(base, at(0, 20), MON_9 + 50 * MIN, 'hourly ceiling reached (3 of 3 in the last hour)')).toMatch(/2 counted sends in the last hour/);
    expect(refusalViolation(base, at(0, 20, 40), MON_9 + 50 * MIN, 'hourly ceiling reached (3 of 9 in the last hour)')).toMatch(/a ceiling outside the settings/);
    expect(refusalViolation(base, at(0), MON_9 + 5 * MIN, 'last send 300 s ago, under the minimum gap of 10 min')).toBeNull();
    expect(refusalViolation(base, at(0), MON_9 + 15 * MIN, 'last send 900 s ago, under the minimum gap of 10 min')).toMatch(/no counted send in the last 10 min/);
    expect(refusalViolation(base, [], MON_9, "outside the mailbox's working day of 2026-03-02")).toBeNull();
  });
});
