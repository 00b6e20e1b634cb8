/**
 * The pure parts of pacing, case by case: settings, the ramp, the working day, the bucket's
 * claim-time check and rotation (the bounce classifier, mailbox health's, is in
 * mailbox/health/bounce-rate.test.ts). The planner's guarantees are properties
 * (planner.property.test.ts).
 */
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { MailboxBucket, type MailboxPacing } from './bucket.ts';
import { LocalDays } from './local-day.ts';
import { toMailboxPacing } from './mailbox.ts';
import { planSends, type PlanRequest } from './planner.ts';
import { dailyCapOn, parseRamp } from './ramp.ts';
import { spreadAssignments } from './rotation.ts';
import { compilePacing, defaultPacingSettings, resolvePacingSettings } from './settings.ts';
import { workingDay } from './working-day.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const NY = 'America/New_York';
const at = (local: string, zone = NY) => DateTime.fromISO(local, { zone }).toMillis();
const show = (t: number, zone = NY) => DateTime.fromMillis(t, { zone }).toFormat('yyyy-MM-dd HH:mm');

function mailbox(over: Partial<Parameters<typeof toMailboxPacing>[0]> = {}, ws: { time_zone: string | null; settings: unknown } = { time_zone: 'UTC', settings: {} }): MailboxPacing {
  return toMailboxPacing(
    { id: 'mb-1', daily_cap: 30, hourly_cap: null, ramp: {}, ramp_started_at: null, time_zone: NY, settings: {}, health: 'ok', health_reason: null, ...over },
    ws,
  );
}

function expectInvalid(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
    expect((e as Error).message).toMatch(pattern);
    return;
  }
  throw new Error('expected INVALID_INPUT');
}

describe('pacing settings', () => {
  it('merges mailbox over workspace over the defaults, field by field', () => {
    const s = resolvePacingSettings({ dayStart: '09:00', gapMinutes: [5, 9], lunch: { at: '13:00' } }, { dayStart: '07:30', lunch: { probability: 1 } });
    expect(s.dayStart).toBe('07:30');
    expect(s.dayEnd).toBe(defaultPacingSettings.dayEnd);
    expect(s.gapMinutes).toEqual([5, 9]);
    expect(s.lunch).toEqual({ ...defaultPacingSettings.lunch, at: '13:00', probability: 1 });
    expect(resolvePacingSettings({}, { lunch: null }).lunch).toBeNull();
  });

  it('refuses bad settings with a message naming each problem', () => {
    expectInvalid(() => resolvePacingSettings({}, { gapMinute: [1, 2] }), /Unrecognized key|gapMinute/);
    expectInvalid(() => resolvePacingSettings({}, { gapMinutes: [15, 8] }), /gapMinutes: expected \[min, max\]/);
    expectInvalid(() => resolvePacingSettings({}, { gapMinutes: [0, 1] }), /gapMinutes/);
    expectInvalid(() => resolvePacingSettings({}, { dayStart: '25:00' }), /dayStart: expected HH:MM/);
    expectInvalid(() => resolvePacingSettings({}, { dayStart: '17:00', dayEnd: '09:00' }), /at least an hour \(and may not cross midnight\)/);
    expectInvalid(() => resolvePacingSettings({}, { workDays: [] }), /at least one working day/);
    expectInvalid(() => resolvePacingSettings('nope', {}), /workspace/);
    expectInvalid(() => mailbox({ ramp: { start: 5 } }), /step must be an integer/);
    expectInvalid(() => mailbox({ daily_cap: -1 }), /daily_cap/);
  });

  it("takes the mailbox's zone, else the workspace's, else UTC", () => {
    expect(mailbox().zone).toBe(NY);
    expect(mailbox({ time_zone: null }, { time_zone: 'Asia/Tokyo', settings: {} }).zone).toBe('Asia/Tokyo');
    expect(mailbox({ time_zone: 'Mars/Olympus' }, { time_zone: 'nope', settings: {} }).zone).toBe('UTC');
  });
});

describe('ramp', () => {
  it('starts small and adds a step a day up to the target, never above daily_cap', () => {
    const ramp = parseRamp({ start: 5, step: 3, target: 20 });
    expect([0, 1, 2, 3, 4, 5, 6, 30].map((d) => dailyCapOn(30, ramp, 100, 100 + d))).toEqual([5, 8, 11, 14, 17, 20, 20, 20]);
    expect(dailyCapOn(12, ramp, 100, 110)).toBe(12);
    expect(dailyCapOn(30, parseRamp({ start: 5, step: 3 }), 100, 200)).toBe(30);
    expect(dailyCapOn(30, ramp, 100, 90)).toBe(5); // before it started
    expect(parseRamp({})).toBeNull();
    expect(dailyCapOn(30, null, null, 5)).toBe(30);
  });

  it("counts ramp days in the mailbox's local dates", () => {
    const mb = mailbox({ ramp: { start: 5, step: 5 }, ramp_started_at: new Date(at('2026-06-01T23:30')) });
    const b = new MailboxBucket(mb);
    // 23:30 on 1 June in New York is 2 June in UTC; the ramp's first day is still 1 June.
    expect(b.cap(b.days.dayOf(at('2026-06-01T12:00')))).toBe(5);
    expect(b.cap(b.days.dayOf(at('2026-06-02T00:30')))).toBe(10);
    // No start date: the ramp began when the mailbox was added.
    const added = new MailboxBucket(mailbox({ ramp: { start: 5, step: 5 }, created_at: new Date(at('2026-06-01T09:00')) }));
    expect(added.cap(added.days.dayOf(at('2026-06-03T12:00')))).toBe(15);
  });
});

describe('working day', () => {
  const p = compilePacing(defaultPacingSettings);
  const days = new LocalDays(NY);
  const mon = days.dayOf(at('2026-06-01T12:00'));

  it('is the same for the same mailbox and date, different across mailboxes and dates, and never on a whole minute', () => {
    const a = workingDay('mb-1', days, mon, p, null)!;
    expect(workingDay('mb-1', days, mon, p, null)).toEqual(a);
    expect(workingDay('mb-2', days, mon, p, null)!.start).not.toBe(a.start);
    expect(workingDay('mb-1', days, mon + 1, p, null)!.start - a.start).not.toBe(24 * HOUR);
    expect(a.start % MIN).not.toBe(0);
    const starts = Array.from({ length: 200 }, (_, i) => workingDay(`mb-${i}`, days, mon, p, null)!);
    for (const w of starts) {
      const s = DateTime.fromMillis(w.start, { zone: NY });
      const e = DateTime.fromMillis(w.end, { zone: NY });
      expect(s.hour * 60 + s.minute).toBeGreaterThanOrEqual(8 * 60 + 20);
      expect(s.hour * 60 + s.minute).toBeLessThan(9 * 60);
      expect(e.hour * 60 + e.minute).toBeGreaterThanOrEqual(17 * 60);
      expect(e.hour * 60 + e.minute).toBeLessThan(17 * 60 + 40);
      if (w.lunch) {
        expect(w.lunch.start).toBeGreaterThan(w.start);
        expect(w.lunch.end).toBeLessThan(w.end);
        expect(w.lunch.end - w.lunch.start).toBeGreaterThanOrEqual(30 * MIN);
      }
      expect(w.hourlyCeiling).toBeGreaterThanOrEqual(6);
      expect(w.hourlyCeiling).toBeLessThanOrEqual(8);
    }
    // About 80 % of days have a lunch break.
    const lunches = starts.filter((w) => w.lunch).length;
    expect(lunches).toBeGreaterThan(140);
    expect(lunches).toBeLessThan(190);
  });

  it('is not planned on days off, and its ceiling never exceeds hourly_cap', () => {
    expect(workingDay('mb-1', days, mon + 5, p, null)).toBeNull(); // Saturday
    expect(workingDay('mb-1', days, mon, p, 2)!.hourlyCeiling).toBe(2);
  });

  it('keeps its local hours on the days the clocks change', () => {
    const all = compilePacing(resolvePacingSettings({}, { dayStart: '00:30', dayEnd: '23:30', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null }));
    const spring = days.dayOf(at('2026-03-08T12:00'));
    const w = workingDay('mb-1', days, spring, all, null)!;
    expect(show(w.start)).toBe('2026-03-08 00:30');
    expect(show(w.end)).toBe('2026-03-08 23:30');
    expect(w.end - w.start).toBe(22 * HOUR); // 23 h of wall clock, one of which does not exist
    const fall = days.dayOf(at('2026-11-01T12:00'));
    const f = workingDay('mb-1', days, fall, all, null)!;
    expect(f.end - f.start).toBe(24 * HOUR);
    expect(days.start(fall + 1) - days.start(fall)).toBe(25 * HOUR);
  });
});

describe('bucket check (claim time)', () => {
  const mb = mailbox({ daily_cap: 3, hourly_cap: 2, settings: { pacing: { dayStart: '09:00', dayEnd: '17:00', dayJitterMinutes: 0, lunch: null, gapMinutes: [10, 12] } } });
  const until = at('2026-06-30T00:00');

  it('grants inside the working day under every limit', () => {
    expect(new MailboxBucket(mb).check(at('2026-06-01T10:00'), until)).toEqual({ ok: true, day: new LocalDays(NY).dayOf(at('2026-06-01T10:00')) });
  });

  it('names the limit that refuses and the earliest instant it allows', () => {
    const outside = new MailboxBucket(mb).check(at('2026-06-01T08:00'), until);
    expect(outside).toMatchObject({ ok: false, reason: "outside the mailbox's working day of 2026-06-01", retryAt: at('2026-06-01T09:00') });
    const weekend = new MailboxBucket(mb).check(at('2026-06-06T10:00'), until);
    expect(weekend).toMatchObject({ ok: false, reason: '2026-06-06 is not a working day of the mailbox', retryAt: at('2026-06-08T09:00') });
    const gap = new MailboxBucket(mb, [at('2026-06-01T10:00')]).check(at('2026-06-01T10:05'), until);
    expect(gap).toMatchObject({ ok: false, retryAt: at('2026-06-01T10:10') });
    if (!gap.ok) expect(gap.reason).toBe('last send 300 s ago, under the minimum gap of 10 min');
    const hourly = new MailboxBucket(mb, [at('2026-06-01T10:00'), at('2026-06-01T10:20')]).check(at('2026-06-01T10:40'), until);
    expect(hourly).toMatchObject({ ok: false, reason: 'hourly ceiling reached (2 of 2 in the last hour)' });
    if (!hourly.ok) {
      expect(hourly.retryAt).toBeGreaterThanOrEqual(at('2026-06-01T11:00'));
      expect(hourly.retryAt).toBeLessThan(at('2026-06-01T11:10'));
    }
    const daily = new MailboxBucket(mb, [at('2026-06-01T10:00'), at('2026-06-01T12:00'), at('2026-06-01T14:00')]).check(at('2026-06-01T16:00'), until);
    expect(daily).toMatchObject({ ok: false, reason: 'daily cap reached (3 of 3 on 2026-06-01)', retryAt: at('2026-06-02T09:00') });
  });

  it('counts a send late yesterday evening in the rolling hour and the gap, not in today\'s cap', () => {
    const night = mailbox({ daily_cap: 1, settings: { pacing: { dayStart: '00:30', dayEnd: '23:30', dayJitterMinutes: 0, lunch: null, workDays: [1, 2, 3, 4, 5, 6, 7] } } });
    const b = new MailboxBucket(night, [at('2026-06-01T23:25')]);
    expect(b.check(at('2026-06-02T00:30'), until)).toMatchObject({ ok: true });
    expect(b.sentOn(b.days.dayOf(at('2026-06-02T00:30')))).toBe(0);
  });

  it('halves the daily cap of a mailbox whose warmup placement warned (cap factor 0.5), and says so', () => {
    const settings = { pacing: { dayStart: '09:00', dayEnd: '17:00', dayJitterMinutes: 0, lunch: null, gapMinutes: [10, 12] } };
    const warned = mailbox({ daily_cap: 5, settings, cap_factor: 0.5, cap_reason: 'warmup placement 70% over 7 days' });
    const day = new LocalDays(NY).dayOf(at('2026-06-01T10:00'));
    expect(new MailboxBucket(warned).cap(day)).toBe(2);
    const b = new MailboxBucket(warned, [at('2026-06-01T10:00'), at('2026-06-01T11:00')]);
    expect(b.check(at('2026-06-01T12:00'), until)).toMatchObject({ ok: false, reason: 'daily cap reached (2 of 2 on 2026-06-01, cap × 0.5 for warmup placement 70% over 7 days)' });
    // Factor 1 (placement recovered) or no membership: the cap as set.
    expect(new MailboxBucket(mailbox({ daily_cap: 5, settings, cap_factor: 1 })).cap(day)).toBe(5);
    expect(new MailboxBucket(mailbox({ daily_cap: 5, settings, cap_factor: null })).cap(day)).toBe(5);
    // A cap of 1 halved still sends one; a cap of 0 stays 0.
    expect(new MailboxBucket(mailbox({ daily_cap: 1, settings, cap_factor: 0.5 })).cap(day)).toBe(1);
    expect(new MailboxBucket(mailbox({ daily_cap: 0, settings, cap_factor: 0.5 })).cap(day)).toBe(0);
    expect(() => mailbox({ cap_factor: 2 })).toThrow(/cap factor must be in/);
  });
});

describe('planner, by example', () => {
  const spec = { zone: NY, window: { kind: 'hours' as const, days: [1, 2, 3, 4, 5] as Array<1 | 2 | 3 | 4 | 5>, start: '08:00', end: '18:00' }, skipHolidays: false, jitterMinutes: 0 };
  const reqs = (n: number, mailboxId: string, dueAt: number): PlanRequest[] =>
    Array.from({ length: n }, (_, i) => ({ id: `${mailboxId}-r${String(i).padStart(3, '0')}`, mailboxId, dueAt, sequenceId: 'seq', calendar: spec }));

  it('spreads a small daily cap over the working day instead of sending it in the first hour', () => {
    const mb = mailbox({ daily_cap: 5 });
    const now = at('2026-06-01T06:00');
    const r = planSends({ now, horizonDays: 3, mailboxes: [{ pacing: mb, workspaceId: 'w', blocked: null, counted: [] }], requests: reqs(5, 'mb-1', now) });
    const ts = [...r.slots.values()].sort((a, b) => a - b);
    expect(ts).toHaveLength(5);
    expect(ts[4]! - ts[0]!).toBeGreaterThan(4 * HOUR);
    expect(new Set(ts.map((t) => show(t).slice(0, 10)))).toEqual(new Set(['2026-06-01']));
  });

  it('waits for a due time or a window opening, then picks up within a few minutes, not on the minute', () => {
    const mb = mailbox({ daily_cap: 30, settings: { pacing: { lunch: null } } });
    const now = at('2026-06-01T06:00');
    const due = at('2026-06-01T13:00');
    const r = planSends({ now, horizonDays: 2, mailboxes: [{ pacing: mb, workspaceId: 'w', blocked: null, counted: [] }], requests: reqs(1, 'mb-1', due) });
    const t = r.slots.get('mb-1-r000')!;
    expect(t).toBeGreaterThan(due);
    expect(t - due).toBeLessThan(4 * MIN);
  });

  it('leaves a blocked mailbox and an unknown one unplaced, with the reason', () => {
    const now = at('2026-06-01T06:00');
    const r = planSends({
      now,
      horizonDays: 2,
      mailboxes: [{ pacing: mailbox(), workspaceId: 'w', blocked: 'paused: bounce rate', counted: [] }],
      requests: [...reqs(2, 'mb-1', now), ...reqs(1, 'mb-x', now)],
    });
    expect(r.slots.size).toBe(0);
    expect(r.unplaced.get('mb-1-r000')).toBe('mailbox paused: bounce rate');
    expect(r.unplaced.get('mb-x-r000')).toBe('mailbox not found');
    expect(r.decisions).toBe(3);
  });

  it("reports a prospect calendar it cannot read and plans the rest", () => {
    const now = at('2026-06-01T06:00');
    const bad: PlanRequest = { id: 'bad', mailboxId: 'mb-1', dueAt: now, sequenceId: 'seq', calendar: { ...spec, zone: 'Not/AZone' } };
    const r = planSends({ now, horizonDays: 2, mailboxes: [{ pacing: mailbox(), workspaceId: 'w', blocked: null, counted: [] }], requests: [bad, ...reqs(1, 'mb-1', now)] });
    expect(r.unplaced.get('bad')).toMatch(/cannot read the prospect's calendar: unknown IANA time zone/);
    expect(r.slots.has('mb-1-r000')).toBe(true);
  });
});

describe('rotation rule', () => {
  it('fills mailboxes in proportion to capacity, evening out an unbalanced start, interleaved', () => {
    const out = spreadAssignments(
      [
        { id: 'a', capacity: 30, load: 0 },
        { id: 'b', capacity: 10, load: 0 },
        { id: 'c', capacity: 30, load: 300 },
        { id: 'z', capacity: 0, load: 0 },
      ],
      700,
    );
    const n = (id: string) => out.filter((x) => x === id).length;
    expect(n('z')).toBe(0);
    // Final loads (a, b, c) = (n_a, n_b, 300 + n_c) proportional to 30:10:30.
    expect(n('a')).toBeGreaterThan(295);
    expect(Math.abs(n('a') - 3 * n('b'))).toBeLessThanOrEqual(3);
    expect(Math.abs(n('a') - (300 + n('c')))).toBeLessThanOrEqual(2);
    expect(out.slice(0, 8)).toContain('b');
    expect(spreadAssignments([{ id: 'z', capacity: 0, load: 0 }], 5)).toEqual([]);
  });
});
