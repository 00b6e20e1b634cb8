import { DateTime } from 'luxon';

/**
 * The pacing promises, checked from outside: given a mailbox's settings as the simulated world
 * wrote them, and the instants of the sends the store counts against it, is any limit broken? The
 * arithmetic is done again here, with luxon for the local days, rather than through the pacing
 * code under test (mailbox/pacing/), so that a bug there cannot hide itself.
 *
 *  - daily cap      no local day of the mailbox (its own zone) holds more sends than its cap that
 *                   day, ramp included: min(daily_cap, target, start + step × days since the ramp began);
 *  - hourly ceiling no rolling hour holds more than min(hourly_cap, hourlyCeiling's max);
 *  - gap            two sends are at least gapMinutes' minimum apart;
 *  - window         every send is on one of the mailbox's working days, between its day start and
 *                   end widened by their jitter (lunch is drawn per day and not checked here);
 *  - budget         a claim refused for the daily cap, the hourly ceiling or the gap is refused
 *                   by sends that count: deferred, released or cancelled requests use no budget.
 */
export interface SimPacing {
  mailboxId: string;
  /** The zone the mailbox's days are counted in (its own, else its workspace's, else UTC). */
  zone: string;
  dailyCap: number;
  hourlyCap: number | null;
  ramp: { start: number; step: number; target?: number } | null;
  /** When the ramp began (epoch ms). */
  rampStartedAt: number;
  dayStart: string;
  dayEnd: string;
  dayJitterMinutes: number;
  /** ISO weekdays, 1 = Monday. */
  workDays: number[];
  gapMinutes: [number, number];
  hourlyCeiling: [number, number];
}

const MIN = 60_000;
const HOUR = 60 * MIN;

interface LocalFacts {
  date: string;
  weekday: number;
  /** Minutes since local midnight, with the seconds as a fraction. */
  minutes: number;
  hhmm: string;
  /** Local midnight, as a DateTime (for counting calendar days). */
  day: DateTime;
}

// The same sends are checked after every step: their local facts are computed once per run.
const facts = new Map<string, LocalFacts>();

function local(t: number, zone: string): LocalFacts {
  const key = `${zone}|${t}`;
  let f = facts.get(key);
  if (!f) {
    const d = DateTime.fromMillis(t, { zone });
    f = { date: d.toISODate()!, weekday: d.weekday, minutes: d.hour * 60 + d.minute + d.second / 60, hhmm: d.toFormat('HH:mm'), day: d.startOf('day') };
    if (facts.size >= 50_000) facts.clear();
    facts.set(key, f);
  }
  return f;
}

function minutesOf(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
}

/** The daily cap on the local date of t. */
export function capAt(p: SimPacing, t: number): number {
  if (!p.ramp) return p.dailyCap;
  const day = local(t, p.zone).day;
  const first = local(p.rampStartedAt, p.zone).day;
  // Calendar days between the two local dates (a DST day is still one day).
  const n = Math.max(0, Math.round(day.diff(first, 'days').days));
  return Math.max(0, Math.min(p.dailyCap, p.ramp.target ?? p.dailyCap, p.ramp.start + p.ramp.step * n));
}

function hourlyLimit(p: SimPacing): number {
  return Math.min(p.hourlyCap ?? Infinity, p.hourlyCeiling[1]);
}

const iso = (t: number) => new Date(t).toISOString();

/** The first broken pacing promise among the mailbox's counted sends (instants, any order), or null. */
export function pacingViolation(p: SimPacing, counted: readonly number[]): string | null {
  const sends = [...counted].sort((a, b) => a - b);
  const perDay = new Map<string, number>();
  const lo = minutesOf(p.dayStart) - p.dayJitterMinutes;
  const hi = minutesOf(p.dayEnd) + p.dayJitterMinutes;
  let first = 0;
  for (let i = 0; i < sends.length; i++) {
    const t = sends[i]!;
    const d = local(t, p.zone);
    if (!p.workDays.includes(d.weekday)) return `send at ${iso(t)} on ${d.date}, not a working day of the mailbox (${p.workDays.join(',')})`;
    const m = d.minutes;
    if (m < lo || m >= hi) return `send at ${iso(t)} (${d.hhmm} in ${p.zone}) outside the working day ${p.dayStart}-${p.dayEnd} ±${p.dayJitterMinutes} min`;
    if (i > 0 && t - sends[i - 1]! < p.gapMinutes[0] * MIN) {
      return `sends at ${iso(sends[i - 1]!)} and ${iso(t)} are ${Math.round((t - sends[i - 1]!) / 1000)} s apart, under the minimum gap of ${p.gapMinutes[0]} min`;
    }
    const date = d.date;
    const n = (perDay.get(date) ?? 0) + 1;
    perDay.set(date, n);
    if (n > capAt(p, t)) return `${n} sends on ${date} (the mailbox's local day), over its cap of ${capAt(p, t)}`;
    while (sends[first]! <= t - HOUR) first++;
    if (i - first + 1 > hourlyLimit(p)) return `${i - first + 1} sends in the hour up to ${iso(t)}, over the ceiling of ${hourlyLimit(p)}`;
  }
  return null;
}

/**
 * A claim at `now` refused for `reason` (the bucket's words): when the reason is a budget, the
 * sends that count must fill it. Null when the refusal is justified (or not about a budget).
 */
export function refusalViolation(p: SimPacing, counted: readonly number[], now: number, reason: string): string | null {
  if (/^daily cap reached/.test(reason)) {
    const date = local(now, p.zone).date;
    const n = counted.filter((t) => local(t, p.zone).date === date).length;
    return n >= capAt(p, now) ? null : `refused at ${iso(now)} (${reason}) with ${n} counted sends on ${date}, under the cap of ${capAt(p, now)}`;
  }
  const hourly = /^hourly ceiling reached \((\d+) of (\d+)/.exec(reason);
  if (hourly) {
    const ceiling = Number(hourly[2]);
    const n = counted.filter((t) => t > now - HOUR && t <= now).length;
    if (ceiling > hourlyLimit(p) || ceiling < Math.min(p.hourlyCap ?? Infinity, p.hourlyCeiling[0])) return `refused at ${iso(now)} (${reason}): a ceiling outside the settings`;
    return n >= ceiling ? null : `refused at ${iso(now)} (${reason}) with ${n} counted sends in the last hour`;
  }
  if (/under the minimum gap/.test(reason)) {
    return counted.some((t) => t <= now && now - t < p.gapMinutes[0] * MIN) ? null : `refused at ${iso(now)} (${reason}) with no counted send in the last ${p.gapMinutes[0]} min`;
  }
  return null;
}
