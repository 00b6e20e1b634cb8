import { DateTime } from 'luxon';
import { BREAKDOWN_BY, DAY_SERIES, RATES, ratesOf } from '../ops/figures.ts';
import { countedFacts, worldBreakdown, worldDays, worldReplyTimes, zeroCounts, type Counts } from './world-figures.ts';
import type { WorldLog } from './world-log.ts';

/**
 * Asks the analytics API what a simulated world did, as a member would (HTTP routes), and compares
 * every figure with the world's own log (sim/world-figures.ts says the rules): the per-day series
 * and their totals, the previous period, the window's edges and the CSV in each zone, and every
 * breakdown's rows (with hard and soft bounces and the rates), and the reply times (for each
 * sequence too, in the first zone). The answer is the list of
 * disagreements, each naming the zone, the day or row and the series: empty when they agree to the unit.
 *
 * `get` is the HTTP call (Fastify's inject in the test and the bench); `asOf` the server's now.
 */

export type Get = (url: string) => Promise<{ statusCode: number; body: string }>;

export interface AccuracyQuery {
  /** `/api/workspaces/<id>`. */
  base: string;
  asOf: number;
  days: number;
  zones: readonly string[];
}

export interface AccuracyResult {
  mismatches: string[];
  /** Figures compared. */
  compared: number;
}

export async function compareWithWorld(get: Get, log: WorldLog, q: AccuracyQuery): Promise<AccuracyResult> {
  const facts = countedFacts(log);
  const out: AccuracyResult = { mismatches: [], compared: 0 };
  const same = (what: string, api: unknown, world: unknown) => {
    out.compared++;
    if (JSON.stringify(api) !== JSON.stringify(world)) out.mismatches.push(`${what}: API ${JSON.stringify(api)}, world ${JSON.stringify(world)}`);
  };
  const json = async (url: string) => {
    const r = await get(url);
    if (r.statusCode !== 200) throw new Error(`GET ${url} answered ${r.statusCode}: ${r.body}`);
    return r.body;
  };
  for (const zone of q.zones) {
    const query = `days=${q.days}&zone=${encodeURIComponent(zone)}`;
    const a = JSON.parse(await json(`${q.base}/analytics?${query}`));
    const lastDay = DateTime.fromMillis(q.asOf, { zone }).startOf('day');
    const keys = (from: number, n: number) => Array.from({ length: n }, (_, i) => lastDay.minus({ days: from - i }).toISODate()!);
    const dayKeys = keys(q.days - 1, q.days);
    same(`${zone} days`, a.days.map((d: { day: string }) => d.day), dayKeys);
    // Local midnights: the days the clocks change last 23, 23.5, 24.5 or 25 hours.
    same(`${zone} window`, [a.window.since, a.window.until], [lastDay.minus({ days: q.days - 1 }), lastDay.plus({ days: 1 })].map((d) => new Date(d.toMillis()).toISOString()));
    const days = worldDays(facts, zone, dayKeys);
    for (const [i, d] of days.entries()) for (const k of DAY_SERIES) same(`${zone} ${d.day} ${k}`, a.days[i]?.[k], d[k]);
    const totals = sum(days);
    for (const k of DAY_SERIES) same(`${zone} totals ${k}`, a.totals[k], totals[k]);
    const before = sum(worldDays(facts, zone, keys(2 * q.days - 1, q.days)));
    for (const k of DAY_SERIES) same(`${zone} previous ${k}`, a.previous.totals[k], before[k]);
    // The funnel's credited replies plus those before any email are the headline's.
    const credited = a.funnel.reduce((n: number, s: { replied: number }) => n + s.replied, 0);
    same(`${zone} funnel replies + unattributed`, credited + a.unattributedReplies, totals.replies);

    const csv = (await json(`${q.base}/analytics/days.csv?${query}`)).trimEnd().split('\r\n');
    same(`${zone} days.csv`, csv, [['day', ...DAY_SERIES].join(','), ...days.map((d) => [d.day, ...DAY_SERIES.map((k) => d[k])].join(','))]);

    const since = Date.parse(a.window.since);
    const until = Date.parse(a.window.until);
    for (const by of BREAKDOWN_BY) {
      const b = JSON.parse(await json(`${q.base}/analytics/breakdown?by=${by}&${query}`));
      const world = worldBreakdown(log, facts, by, since, until);
      const api = new Map<string | null, Record<string, number | null>>(b.rows.map((r: Record<string, number | null> & { key: string | null }) => [r.key, r]));
      for (const key of new Set([...api.keys(), ...world.keys()])) {
        const w = world.get(key) ?? { ...zeroCounts(), hardBounces: 0, softBounces: 0 };
        const r = api.get(key) ?? {};
        for (const k of [...DAY_SERIES, 'hardBounces', 'softBounces'] as const) same(`${zone} by ${by} ${key ?? '(none)'} ${k}`, r[k] ?? 0, w[k]);
        if (api.has(key)) for (const k of RATES) same(`${zone} by ${by} ${key ?? '(none)'} ${k}`, r[k], ratesOf(w)[k]);
      }
    }
    // The chart's figures, without the window it repeats.
    const replyTimes = async (more = '') => {
      const { count, noEmailBefore, medianMs, buckets } = JSON.parse(await json(`${q.base}/analytics/reply-times?${query}${more}`));
      return { count, noEmailBefore, medianMs, buckets };
    };
    same(`${zone} reply times`, await replyTimes(), worldReplyTimes(log, facts, since, until));
    if (zone === q.zones[0]) {
      for (const sequenceId of new Set([...log.enrollments.values()].map((e) => e.sequenceId))) {
        same(`${zone} reply times of ${sequenceId}`, await replyTimes(`&sequenceId=${sequenceId}`), worldReplyTimes(log, facts, since, until, sequenceId));
      }
    }
  }
  return out;
}

function sum(days: readonly Counts[]): Counts {
  const t = zeroCounts();
  for (const d of days) for (const k of DAY_SERIES) t[k] += d[k];
  return t;
}
