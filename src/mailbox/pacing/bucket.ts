/**
 * One mailbox's token bucket, as arithmetic over the instants of its sends: a daily cap per local
 * day (ramped), a ceiling per rolling hour, a gap after each send, and the working day's hours.
 * No state of its own survives a process: a bucket is rebuilt from the sends the store counts
 * (claimed requests, see dispatch/usage.ts) each time it is needed, so a restart changes nothing.
 *
 * The gap after a send is drawn (seeded by mailbox, local date and the send's rank that day) from
 * a triangular distribution on [gapMin, gapMax]. On a day with more time than sends (a ramping
 * mailbox with a cap of 5, say), the distribution is stretched towards the time left divided by
 * the sends left (bounded so that those sends still fit in the day): the day's budget spreads over
 * the working day instead of leaving in the first hour. Replaying the same sends gives the same gaps, so re-planning a day after some of
 * its sends went out at their planned instants reproduces the rest of the plan.
 */
import { HOUR_MS } from '../../calendar/civil.ts';
import { triangular, unit } from './draw.ts';
import { LocalDays } from './local-day.ts';
import { dailyCapOn, type Ramp } from './ramp.ts';
import type { CompiledPacing } from './settings.ts';
import { workingDay, type WorkingDay } from './working-day.ts';

/** What pacing needs to know about a mailbox (the store's row, validated). */
export interface MailboxPacing {
  id: string;
  /** A valid IANA zone: the mailbox's own, else its workspace's, else UTC. */
  zone: string;
  dailyCap: number;
  hourlyCap: number | null;
  ramp: Ramp | null;
  rampStartedAt: number | null;
  pacing: CompiledPacing;
  /**
   * The warmup placement's cap factor (warmup_member.cap_factor, below 1 when placement dropped):
   * the day's cap, ramp included, is multiplied by it (rounded down, at least 1 while the cap is),
   * and a refusal at the cap says so with capReason.
   */
  capFactor?: number;
  capReason?: string;
}

/**
 * A cap under the warmup placement's factor: rounded down, but at least 1 while the cap is (a
 * lowered mailbox keeps sending a little, so its placement can recover). The one formula for
 * pacing and for the mailbox list.
 */
export function scaledCap(cap: number, factor: number | null | undefined): number {
  const f = factor ?? 1;
  return f < 1 && cap > 0 ? Math.max(1, Math.floor(cap * f)) : cap;
}

export type SendCheck = { ok: true; day: number } | { ok: false; reason: string; retryAt: number };

/** nextOpen gives up after this many steps; each step moves forward by at least a millisecond, in practice by a day part. */
const MAX_STEPS = 100_000;

export class MailboxBucket {
  readonly days: LocalDays;
  private readonly rampStartDay: number | null;
  private readonly plans = new Map<number, WorkingDay | null>();
  private readonly perDay = new Map<number, number>();
  /** Every send recorded (counted ones, then planned ones), ascending. */
  private readonly sends: number[] = [];
  /** Earliest instant of the next send: the last send plus its drawn gap. */
  private earliest = -Infinity;

  constructor(
    readonly mb: MailboxPacing,
    counted: readonly number[] = [],
  ) {
    this.days = new LocalDays(mb.zone);
    this.rampStartDay = mb.rampStartedAt === null ? null : this.days.dayOf(mb.rampStartedAt);
    for (const t of [...counted].sort((a, b) => a - b)) this.record(t);
  }

  plan(day: number): WorkingDay | null {
    let p = this.plans.get(day);
    if (p === undefined) {
      p = workingDay(this.mb.id, this.days, day, this.mb.pacing, this.mb.hourlyCap);
      this.plans.set(day, p);
    }
    return p;
  }

  /**
   * Whether instant t is inside the mailbox's working hours: its working day of t's local date, not
   * at lunch. Caps, the hourly ceiling and gaps aside: the hours a person behind the mailbox is at
   * work (the warmup receiver answers in them, warmup/receive/recogniser.ts).
   */
  working(t: number): boolean {
    const plan = this.plan(this.days.dayOf(t));
    if (plan === null || t < plan.start || t >= plan.end) return false;
    return !(plan.lunch && t >= plan.lunch.start && t < plan.lunch.end);
  }

  /** The daily cap on local day `day`, ramp included. */
  cap(day: number): number {
    return scaledCap(dailyCapOn(this.mb.dailyCap, this.mb.ramp, this.rampStartDay, day), this.mb.capFactor);
  }

  sentOn(day: number): number {
    return this.perDay.get(day) ?? 0;
  }

  get last(): number | null {
    return this.sends.length ? this.sends[this.sends.length - 1]! : null;
  }

  /** Sends in the rolling hour (t - 1 h, t], later ones included (a skewed clock must not let more through). */
  inHour(t: number): number {
    return this.sends.length - this.firstAfter(t - HOUR_MS);
  }

  /** Index of the first send > x (binary search). */
  private firstAfter(x: number): number {
    let lo = 0;
    let hi = this.sends.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sends[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Counts a send at t (a counted one from the store, or one the planner places) and draws the gap after it. */
  record(t: number): void {
    const day = this.days.dayOf(t);
    this.perDay.set(day, this.sentOn(day) + 1);
    if (this.sends.length && t < this.sends[this.sends.length - 1]!) {
      this.sends.splice(this.firstAfter(t), 0, t);
    } else {
      this.sends.push(t);
    }
    if (t === this.last) this.earliest = t + this.gapAfter(t, day);
  }

  /** The gap after the k-th send of `day` made at t (k counted already). */
  private gapAfter(t: number, day: number): number {
    const p = this.mb.pacing;
    const k = this.sentOn(day);
    const plan = this.plan(day);
    const mid = (p.gapMinMs + p.gapMaxMs) / 2;
    let hi = p.gapMaxMs;
    const left = this.cap(day) - k;
    if (p.spreadDay && plan !== null && left > 0 && t < plan.end) {
      const lunchLeft = plan.lunch && plan.lunch.end > t ? plan.lunch.end - Math.max(t, plan.lunch.start) : 0;
      const room = plan.end - t - lunchLeft;
      const spacing = room / (left + 0.5);
      // Stretched, but never so far that the sends left could no longer fit in the day at the
      // minimum gap: a quiet day's budget is spread over it, not pushed into the next one.
      if (spacing > mid) hi = Math.max(p.gapMaxMs, Math.min(2 * spacing - p.gapMinMs, room - (left - 1) * p.gapMinMs));
    }
    return Math.floor(triangular(`${this.mb.id}:${this.days.iso(day)}:${k}:gap`, p.gapMinMs, hi));
  }

  /**
   * The earliest instant ≥ from at which the mailbox may send: inside a working day, not at lunch,
   * under the day's cap and the rolling hour's ceiling, and after the gap since the last send (the
   * drawn gap; or only the minimum gap when `minGapOnly`, as the claim-time check uses).
   * Infinity when there is none before `until`.
   */
  nextOpen(from: number, until: number, minGapOnly = false): number {
    const last = this.last;
    const gapFloor = minGapOnly ? (last === null ? -Infinity : last + this.mb.pacing.gapMinMs) : this.earliest;
    let t = Math.max(from, gapFloor);
    for (let i = 0; i < MAX_STEPS; i++) {
      if (t >= until) return Infinity;
      const d = this.days.dayOf(t);
      const plan = this.plan(d);
      if (plan === null || plan.hourlyCeiling <= 0 || this.sentOn(d) >= this.cap(d) || t >= plan.end) {
        t = Math.max(t + 1, this.days.start(d + 1));
        continue;
      }
      if (t < plan.start) t = plan.start;
      if (plan.lunch && t >= plan.lunch.start && t < plan.lunch.end) {
        t = plan.lunch.end;
        continue;
      }
      const n = this.inHour(t);
      if (n >= plan.hourlyCeiling) {
        // One more fits once the send `ceiling` places from the end has left the window; waiting
        // exactly that long would repeat the previous hour's pattern to the millisecond, so a
        // seeded delay of up to a minimum gap follows.
        const leaving = this.sends[this.sends.length - plan.hourlyCeiling]!;
        const delay = Math.floor(unit(`${this.mb.id}:${leaving}:hourly`) * this.mb.pacing.gapMinMs);
        t = Math.max(t + 1, leaving + HOUR_MS + delay);
        continue;
      }
      return t;
    }
    return Infinity;
  }

  /**
   * The claim-time check: may the mailbox send at `now`? A refusal names the limit in words a user
   * can read and the earliest instant it would allow (Infinity when none before `until`).
   */
  check(now: number, until: number): SendCheck {
    const d = this.days.dayOf(now);
    const plan = this.plan(d);
    const retry = () => this.nextOpen(now, until, true);
    const date = this.days.iso(d);
    if (plan === null) return { ok: false, reason: `${date} is not a working day of the mailbox`, retryAt: retry() };
    if (now < plan.start || now >= plan.end) return { ok: false, reason: `outside the mailbox's working day of ${date}`, retryAt: retry() };
    if (plan.lunch && now >= plan.lunch.start && now < plan.lunch.end) return { ok: false, reason: `the mailbox's lunch break`, retryAt: retry() };
    const cap = this.cap(d);
    if (this.sentOn(d) >= cap) {
      const scaled = (this.mb.capFactor ?? 1) < 1 ? `, cap × ${this.mb.capFactor} for ${this.mb.capReason ?? 'warmup placement'}` : '';
      return { ok: false, reason: `daily cap reached (${this.sentOn(d)} of ${cap} on ${date}${scaled})`, retryAt: retry() };
    }
    const n = this.inHour(now);
    if (n >= plan.hourlyCeiling) return { ok: false, reason: `hourly ceiling reached (${n} of ${plan.hourlyCeiling} in the last hour)`, retryAt: retry() };
    const last = this.last;
    if (last !== null && now - last < this.mb.pacing.gapMinMs) {
      return { ok: false, reason: `last send ${Math.round((now - last) / 1000)} s ago, under the minimum gap of ${Math.round(this.mb.pacing.gapMinMs / 60_000)} min`, retryAt: retry() };
    }
    return { ok: true, day: d };
  }
}
