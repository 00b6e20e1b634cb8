/**
 * The planner's guarantees as properties over random mailboxes (zones on both hemispheres, days
 * the clocks change, ramps, hourly caps, sends already made), random requests (due times, prospect
 * zones and windows, holidays) and shared caps. Local dates and times are checked with luxon, an
 * oracle independent of the calendar code the planner uses.
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { isAllowed, parseWindow, type CalendarSpec } from '../../calendar/index.ts';
import { LocalDays } from './local-day.ts';
import { toMailboxPacing } from './mailbox.ts';
import { planSends, type PlanInput, type PlanMailbox, type PlanRequest, type SharedCap } from './planner.ts';
import { workingDay } from './working-day.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const MAILBOX_ZONES = ['America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/Santiago', 'UTC', 'Asia/Tokyo'];
const PROSPECT_ZONES = ['America/New_York', 'America/Los_Angeles', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Sydney', 'UTC'];
// Days around clock changes in those zones, and ordinary days.
const DATES = ['2026-03-08', '2026-11-01', '2026-03-29', '2026-10-25', '2026-04-05', '2026-10-04', '2026-04-04', '2026-09-06', '2026-06-10', '2026-12-24', '2027-01-15'];
const WINDOWS = ['any', 'Mon-Fri 08:00-18:00', 'Mon-Sun 00:00-24:00', 'Tue,Thu 10:00-12:00', 'Mon-Sat 22:00-02:00', 'Mon-Fri 09:00-17:00'];

const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

interface MailboxCase {
  zone: string;
  dailyCap: number;
  hourlyCap: number | null;
  ramp: { start: number; step: number; target?: number } | null;
  rampDaysAgo: number;
  startMin: number;
  lengthMin: number;
  jitter: number;
  workDays: number[];
  lunch: boolean;
  gap: [number, number];
  hourly: [number, number];
  pickup: number;
  blocked: boolean;
  countedAgo: number[];
}

const mailboxArb: fc.Arbitrary<MailboxCase> = fc.record({
  zone: fc.constantFrom(...MAILBOX_ZONES),
  dailyCap: fc.integer({ min: 0, max: 40 }),
  hourlyCap: fc.option(fc.integer({ min: 0, max: 10 }), { nil: null }),
  ramp: fc.option(
    fc.record({ start: fc.integer({ min: 0, max: 10 }), step: fc.integer({ min: 0, max: 5 }) }).chain((r) =>
      fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }).map((target) => (target === undefined ? r : { ...r, target })),
    ),
    { nil: null },
  ),
  rampDaysAgo: fc.integer({ min: -2, max: 10 }),
  // A day from 00:30 (so a 01:00-03:00 clock change falls inside it) to late evening.
  startMin: fc.integer({ min: 30, max: 600 }),
  lengthMin: fc.integer({ min: 120, max: 1380 }),
  jitter: fc.integer({ min: 0, max: 30 }),
  workDays: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }),
  lunch: fc.boolean(),
  gap: fc.tuple(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 30 })).map(([a, b]): [number, number] => [a, a + b]),
  hourly: fc.tuple(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 4 })).map(([a, b]): [number, number] => [a, a + b]),
  pickup: fc.integer({ min: 0, max: 10 }),
  blocked: fc.integer({ min: 0, max: 4 }).map((x) => x === 0),
  countedAgo: fc.array(fc.integer({ min: 1, max: 30 * 60 }), { maxLength: 6 }),
});

interface Case {
  date: string;
  hour: number;
  horizonDays: number;
  mailboxes: MailboxCase[];
  requests: Array<{ mailbox: number; seq: number; dueOffsetMin: number; zone: string; country: string | null }>;
  windows: [string, string];
  seqCaps: [number | null, number | null];
  wsCap: number | null;
  wsZone: string;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    date: fc.constantFrom(...DATES),
    hour: fc.integer({ min: -12, max: 30 }),
    horizonDays: fc.integer({ min: 1, max: 4 }),
    mailboxes: fc.array(mailboxArb, { minLength: 1, maxLength: 3 }),
    windows: fc.tuple(fc.constantFrom(...WINDOWS), fc.constantFrom(...WINDOWS)),
    seqCaps: fc.tuple(fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }), fc.option(fc.integer({ min: 0, max: 30 }), { nil: null })),
    wsCap: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
    wsZone: fc.constantFrom(...MAILBOX_ZONES),
    nRequests: fc.integer({ min: 0, max: 60 }),
  })
  .chain((c) =>
    fc
      .array(
        fc.record({
          mailbox: fc.integer({ min: 0, max: c.mailboxes.length - 1 }),
          seq: fc.integer({ min: 0, max: 1 }),
          dueOffsetMin: fc.integer({ min: -24 * 60, max: 3 * 24 * 60 }),
          zone: fc.constantFrom(...PROSPECT_ZONES),
          country: fc.constantFrom<string | null>(null, null, 'US', 'GB', 'DE'),
        }),
        { minLength: c.nRequests, maxLength: c.nRequests },
      )
      .map((requests) => ({ ...c, requests })),
  );

function build(c: Case): { input: PlanInput; specs: Map<string, CalendarSpec> } {
  const now = DateTime.fromISO(c.date, { zone: c.mailboxes[0]!.zone }).toMillis() + c.hour * HOUR;
  const mailboxes: PlanMailbox[] = c.mailboxes.map((m, i) => ({
    pacing: toMailboxPacing(
      {
        id: `mb${i}`,
        daily_cap: m.dailyCap,
        hourly_cap: m.hourlyCap,
        ramp: m.ramp ?? {},
        ramp_started_at: m.ramp ? new Date(now - m.rampDaysAgo * DAY) : null,
        time_zone: m.zone,
        settings: {
          pacing: {
            dayStart: hhmm(m.startMin),
            dayEnd: hhmm(Math.min(m.startMin + m.lengthMin, 1410)),
            dayJitterMinutes: Math.min(m.jitter, Math.floor((Math.min(m.startMin + m.lengthMin, 1410) - m.startMin - 60) / 2), m.startMin, 1440 - Math.min(m.startMin + m.lengthMin, 1410)),
            workDays: m.workDays,
            lunch: m.lunch ? { at: hhmm(m.startMin + Math.floor(m.lengthMin / 2)), jitterMinutes: 20, minutes: [20, 50], probability: 0.7 } : null,
            gapMinutes: m.gap,
            hourlyCeiling: m.hourly,
            pickupMinutes: m.pickup,
          },
        },
        health: 'ok',
        health_reason: null,
      },
      { time_zone: c.wsZone, settings: {} },
    ),
    workspaceId: 'ws',
    blocked: m.blocked ? 'paused: test' : null,
    counted: m.countedAgo.map((a) => now - a * MIN),
  }));
  const specs = new Map<string, CalendarSpec>();
  const requests: PlanRequest[] = c.requests.map((r, i) => {
    const spec: CalendarSpec = { zone: r.zone, window: parseWindow(c.windows[r.seq]!), skipHolidays: r.country !== null, jitterMinutes: 0, ...(r.country ? { country: r.country } : {}) };
    const id = `r${String(i).padStart(3, '0')}`;
    specs.set(id, spec);
    return { id, mailboxId: `mb${r.mailbox}`, dueAt: now + r.dueOffsetMin * MIN, sequenceId: `seq${r.seq}`, calendar: spec };
  });
  // Shared usage consistent with the counted sends: every counted send belonged to seq0.
  const wsDays = new LocalDays(c.wsZone);
  const used = new Map<number, number>();
  for (const m of mailboxes) for (const t of m.counted) used.set(wsDays.dayOf(t), (used.get(wsDays.dayOf(t)) ?? 0) + 1);
  const workspaceCaps = new Map<string, SharedCap>();
  if (c.wsCap !== null) workspaceCaps.set('ws', { zone: c.wsZone, cap: c.wsCap, used: new Map(used) });
  const sequenceCaps = new Map<string, SharedCap>();
  c.seqCaps.forEach((cap, i) => {
    if (cap !== null) sequenceCaps.set(`seq${i}`, { zone: c.wsZone, cap, used: i === 0 ? new Map(used) : new Map() });
  });
  return { input: { now, horizonDays: c.horizonDays, mailboxes, requests, workspaceCaps, sequenceCaps }, specs };
}

const localDate = (t: number, zone: string) => DateTime.fromMillis(t, { zone }).toISODate()!;

/** The ramp's cap on a local date, computed from luxon dates (not the planner's day numbers). */
function capOn(m: MailboxCase, rampStart: number, date: string): number {
  if (!m.ramp) return m.dailyCap;
  const n = Math.max(0, DateTime.fromISO(date, { zone: 'UTC' }).diff(DateTime.fromISO(localDate(rampStart, m.zone), { zone: 'UTC' }), 'days').days);
  return Math.max(0, Math.min(m.dailyCap, m.ramp.target ?? m.dailyCap, m.ramp.start + m.ramp.step * n));
}

function sameResult(a: ReturnType<typeof planSends>, b: ReturnType<typeof planSends>): void {
  expect([...b.slots].sort()).toEqual([...a.slots].sort());
  expect([...b.unplaced].sort()).toEqual([...a.unplaced].sort());
}

describe('planner properties', () => {
  it('keeps every cap, gap, working day and window, decides every request, and is deterministic', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { input, specs } = build(c);
        const result = planSends(input);
        // Every request decided exactly once.
        expect(result.slots.size + result.unplaced.size).toBe(input.requests.length);
        expect(result.decisions).toBe(input.requests.length);
        for (const id of result.slots.keys()) expect(result.unplaced.has(id)).toBe(false);

        const wsPlanned = new Map<string, number>();
        const seqPlanned = new Map<string, number>();
        input.mailboxes.forEach((m, i) => {
          const mc = c.mailboxes[i]!;
          const zone = m.pacing.zone;
          const mine = input.requests.filter((r) => r.mailboxId === m.pacing.id && result.slots.has(r.id));
          if (mc.blocked) expect(mine).toHaveLength(0);
          const planned = mine.map((r) => result.slots.get(r.id)!).sort((a, b) => a - b);
          const all = [...m.counted, ...planned].sort((a, b) => a - b);
          const days = new LocalDays(zone);
          const horizonEnd = days.start(days.dayOf(input.now) + c.horizonDays);
          const perDate = new Map<string, number>();
          for (const t of all) perDate.set(localDate(t, zone), (perDate.get(localDate(t, zone)) ?? 0) + 1);
          for (const r of mine) {
            const t = result.slots.get(r.id)!;
            // Due, inside the prospect's window, after now, inside the horizon.
            expect(t).toBeGreaterThanOrEqual(r.dueAt);
            expect(t).toBeGreaterThanOrEqual(input.now);
            expect(t).toBeLessThan(horizonEnd);
            expect(isAllowed(t, specs.get(r.id)!)).toBe(true);
            // Daily cap in the mailbox's local date.
            const date = localDate(t, zone);
            expect(perDate.get(date)!).toBeLessThanOrEqual(capOn(mc, m.pacing.rampStartedAt ?? 0, date));
            // Rolling hour.
            const inHour = all.filter((u) => u > t - HOUR && u <= t).length;
            expect(inHour).toBeLessThanOrEqual(Math.min(mc.hourly[1], mc.hourlyCap ?? Infinity));
            // Gap after the previous send, counted or planned.
            const prev = all.filter((u) => u < t).pop();
            if (prev !== undefined) expect(t - prev).toBeGreaterThanOrEqual(mc.gap[0] * MIN);
            expect(all.filter((u) => u === t)).toHaveLength(1);
            // Working day: a working weekday, near the usual hours (±jitter; +1 h on a spring-forward day), not at lunch.
            const local = DateTime.fromMillis(t, { zone });
            expect(mc.workDays).toContain(local.weekday);
            const plan = workingDay(m.pacing.id, days, days.dayOf(t), m.pacing.pacing, m.pacing.hourlyCap)!;
            expect(plan).not.toBeNull();
            expect(t).toBeGreaterThanOrEqual(plan.start);
            expect(t).toBeLessThan(plan.end);
            if (plan.lunch) expect(t < plan.lunch.start || t >= plan.lunch.end).toBe(true);
            const minutes = local.hour * 60 + local.minute;
            const p = m.pacing.pacing;
            const dstSlack = local.startOf('day').offset !== local.endOf('day').offset ? 60 : 0;
            expect(minutes).toBeGreaterThanOrEqual(p.startMin - p.jitterMin - 1);
            expect(minutes).toBeLessThanOrEqual(p.endMin + p.jitterMin + dstSlack);
            const wsDate = localDate(t, c.wsZone);
            wsPlanned.set(wsDate, (wsPlanned.get(wsDate) ?? 0) + 1);
            const k = `${r.sequenceId}|${wsDate}`;
            seqPlanned.set(k, (seqPlanned.get(k) ?? 0) + 1);
          }
        });
        // Shared caps in the workspace's local date, counted sends included.
        const usedOn = (date: string) => input.mailboxes.flatMap((m) => m.counted).filter((t) => localDate(t, c.wsZone) === date).length;
        if (c.wsCap !== null) for (const [date, n] of wsPlanned) expect(n + usedOn(date)).toBeLessThanOrEqual(c.wsCap);
        for (const [k, n] of seqPlanned) {
          const [seq, date] = k.split('|') as [string, string];
          const cap = c.seqCaps[seq === 'seq0' ? 0 : 1];
          if (cap !== null && cap !== undefined) expect(n + (seq === 'seq0' ? usedOn(date) : 0)).toBeLessThanOrEqual(cap);
        }
        // Deterministic, whatever the order of the input.
        sameResult(result, planSends(build(c).input));
        const shuffled = { ...input, requests: [...input.requests].reverse(), mailboxes: [...input.mailboxes].reverse() };
        sameResult(result, planSends(shuffled));
      }),
      { numRuns: 150 },
    );
  });

  it('re-planning after the first sends went out at their slots gives the same remaining slots', () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 10 }), (c, k) => {
        const one: Case = { ...c, mailboxes: [{ ...c.mailboxes[0]!, blocked: false }], requests: c.requests.map((r) => ({ ...r, mailbox: 0 })), seqCaps: [null, null], wsCap: null };
        const { input } = build(one);
        const first = planSends(input);
        const order = [...first.slots].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
        if (order.length <= k) return;
        const done = order.slice(0, k);
        const doneIds = new Set(done.map(([id]) => id));
        const now = done[k - 1]![1];
        // The horizon is counted from the original day so both plans cover the same days.
        const days = new LocalDays(input.mailboxes[0]!.pacing.zone);
        const horizonDays = days.dayOf(input.now) + input.horizonDays - days.dayOf(now);
        if (horizonDays < 1) return;
        const again = planSends({
          ...input,
          now,
          horizonDays,
          mailboxes: [{ ...input.mailboxes[0]!, counted: [...input.mailboxes[0]!.counted, ...done.map(([, t]) => t)] }],
          requests: input.requests.filter((r) => !doneIds.has(r.id)),
        });
        expect([...again.slots].sort()).toEqual(order.slice(k).sort());
      }),
      { numRuns: 150 },
    );
  });
});

describe('planner on days the clocks change', () => {
  const NY = 'America/New_York';
  for (const [date, hours] of [
    ['2026-03-08', 23],
    ['2026-11-01', 25],
  ] as const) {
    it(`counts a ${hours}-hour local day (${date}) as one day, with caps and the rolling hour by the clock`, () => {
      const mb = toMailboxPacing(
        {
          id: 'mb-dst',
          daily_cap: 60,
          hourly_cap: null,
          ramp: {},
          ramp_started_at: null,
          time_zone: NY,
          settings: { pacing: { dayStart: '00:30', dayEnd: '23:30', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [8, 12], hourlyCeiling: [6, 6] } },
          health: 'ok',
          health_reason: null,
        },
        { time_zone: 'UTC', settings: {} },
      );
      const start = DateTime.fromISO(date, { zone: NY }).toMillis();
      const requests: PlanRequest[] = Array.from({ length: 200 }, (_, i) => ({
        id: `r${String(i).padStart(3, '0')}`,
        mailboxId: 'mb-dst',
        dueAt: start,
        sequenceId: 's',
        calendar: { zone: NY, window: { kind: 'any' }, skipHolidays: false, jitterMinutes: 0 },
      }));
      const r = planSends({ now: start, horizonDays: 2, mailboxes: [{ pacing: mb, workspaceId: 'w', blocked: null, counted: [] }], requests });
      const ts = [...r.slots.values()].sort((a, b) => a - b);
      const onDate = ts.filter((t) => localDate(t, NY) === date);
      expect(onDate).toHaveLength(60);
      for (const t of ts) {
        expect(ts.filter((u) => u > t - HOUR && u <= t).length).toBeLessThanOrEqual(6);
        const local = DateTime.fromMillis(t, { zone: NY });
        expect(local.hour * 60 + local.minute).toBeGreaterThanOrEqual(30);
      }
      // Sends run through the changed hour without a hole or a pile-up: the largest gap stays a gap.
      for (let i = 1; i < onDate.length; i++) {
        expect(onDate[i]! - onDate[i - 1]!).toBeGreaterThanOrEqual(8 * MIN);
        expect(onDate[i]! - onDate[i - 1]!).toBeLessThan(2 * HOUR);
      }
    });
  }
});
