import { DateTime } from 'luxon';
import { DAY_SERIES, type BreakdownBy, type Totals } from '../ops/figures.ts';
import { REPLY_TIME_BUCKETS, type ReplyTimes } from '../ops/figures-reply-time.ts';
import type { WorldEmail, WorldFact, WorldLog } from './world-log.ts';

/**
 * The analytics' figures computed from a world's own log (sim/world-log.ts), by the definitions
 * docs/api.md "Analytics" states, with its own arithmetic (luxon's calendar, not SQL): what
 * `GET …/analytics`, `…/days.csv` and `…/breakdown` must answer to the unit (issue 18).
 *
 * The rules, each where Cadenza's definition differs from "what the world did":
 * - **sends**: every email that reached a prospect's server; and every pending copy left in a Sent
 *   folder whose message was never handed over (a crash or a timeout between the copy and the
 *   handover): Cadenza cannot know it did not go, settles it as possibly sent and counts it
 *   (docs/api.md: "a send settled as possibly sent counts"). Each counts on the day Cadenza
 *   recorded it (the journal's time, docs/api.md "Window"), not the day it reached the prospect:
 *   the two differ by the sender's record (a group commit waits up to 3 minutes) and, after a
 *   crash between send and record, by the time until the successor found it in the Sent folder.
 * - **replies, bounces**: those the engine took (an enrollment already ended ignores them; the
 *   world records the engine's answer, world-log.ts), on the day Cadenza read them (a reply that
 *   landed a few seconds before the sync read it counts when read: the journal's time).
 * - **unsubscribes**: every one (the engine records each, whatever the state: the address is
 *   suppressed again). **meetings**: every one booked, by the prospect or on a call, whether or not
 *   the engine stopped anything for it.
 * - **positive replies**: an enrollment's first reply the classifier called interested, stored
 *   (its message row), on the day it reached the mailbox (`received_at`), whether or not the
 *   engine took it.
 * - **opens, clicks**: none (the simulation's prospects load no images and follow no links).
 * - **credit** (the breakdown): a send to its own email; anything else to the last email recorded
 *   at or before the instant it counts by the enrollment it was addressed to (the one whose email
 *   the prospect answered, the card the rep acted on), or, where that one has sent none, by the
 *   enrollments it was moved from (up to three moves back; none: the row with key null). Never an
 *   email a successor sent after a move: the prospect did not answer that one. So a reply read
 *   before its email's send was recorded (a prospect who answers within seconds, a crash between
 *   send and record) is credited to the email recorded before (docs/api.md: "the last email sent
 *   to the enrollment before it", by the journal's times). Sequence from the card of the
 *   credited email's enrollment; without an email, sequence and mailbox from the addressed
 *   enrollment's card.
 */

export type Counts = Totals;
export type WorldRow = Counts & { hardBounces: number; softBounces: number };

export interface Counted extends WorldFact {
  /** The instant it counts at. */
  countsAt: number;
  /** The email it is credited to (null: none before it). */
  credit: WorldEmail | null;
  /** When that email counted as sent (its journal time; null: none before it): a reply's time starts there. */
  creditAt: number | null;
  /** The enrollment whose card gives its sequence: the credited email's, else its own. */
  creditEnrollmentId: string;
}

export function zeroCounts(): Counts {
  return Object.fromEntries(DAY_SERIES.map((k) => [k, 0])) as Counts;
}

/** The facts the analytics count, each with the instant it counts at and its email. */
export function countedFacts(log: WorldLog): Counted[] {
  const firstPositive = new Map<string, WorldFact>();
  for (const f of log.facts) {
    if (f.series !== 'positiveReplies') continue;
    const was = firstPositive.get(f.enrollmentId);
    if (!was || f.at < was.at) firstPositive.set(f.enrollmentId, f);
  }
  const counts = log.facts.filter((f) => (f.series === 'positiveReplies' ? firstPositive.get(f.enrollmentId) === f : f.series === 'sends' || f.series === 'unsubscribes' || f.series === 'meetings' || f.taken));
  const sends = new Map<string, Counted[]>();
  for (const f of counts) {
    if (f.series !== 'sends') continue;
    const list = sends.get(f.enrollmentId) ?? [];
    list.push({ ...f, countsAt: f.readAt, credit: f.email!, creditAt: f.readAt, creditEnrollmentId: f.enrollmentId });
    sends.set(f.enrollmentId, list);
  }
  return counts.map((f) => {
    if (f.series === 'sends') return { ...f, countsAt: f.readAt, credit: f.email!, creditAt: f.readAt, creditEnrollmentId: f.enrollmentId };
    // The last one recorded at or before it, by its enrollment or one it was moved from (up to
    // three moves back); of two at the same instant, the one recorded last.
    const lineage = [f.enrollmentId];
    for (let e = log.movedFrom.get(f.enrollmentId); e !== undefined && lineage.length < 4; e = log.movedFrom.get(e)) lineage.push(e);
    let best: Counted | null = null;
    for (const s of lineage.flatMap((e) => sends.get(e) ?? [])) {
      if (s.countsAt > f.readAt) continue;
      if (!best || s.countsAt > best.countsAt || (s.countsAt === best.countsAt && s.recordedN! > best.recordedN!)) best = s;
    }
    return { ...f, countsAt: f.readAt, credit: best?.credit ?? null, creditAt: best?.countsAt ?? null, creditEnrollmentId: best?.enrollmentId ?? f.enrollmentId };
  });
}

/** Each series per day of `zone`, for the days given ('YYYY-MM-DD'), as `GET …/analytics` days[]. */
export function worldDays(facts: readonly Counted[], zone: string, dayKeys: readonly string[]): Array<{ day: string } & Counts> {
  const days = new Map(dayKeys.map((d) => [d, { day: d, ...zeroCounts() }]));
  for (const f of facts) {
    const d = days.get(DateTime.fromMillis(f.countsAt, { zone }).toISODate()!);
    if (d) d[f.series] += 1;
  }
  return [...days.values()];
}

/** The breakdown of [since, until) by `by`: rows by key (null: what no email, sequence or owner takes). */
export function worldBreakdown(log: WorldLog, facts: readonly Counted[], by: BreakdownBy, since: number, until: number): Map<string | null, WorldRow> {
  const rows = new Map<string | null, WorldRow>();
  for (const f of facts) {
    if (f.countsAt < since || f.countsAt >= until) continue;
    const card = log.enrollments.get(f.enrollmentId);
    const mailbox = f.credit?.mailboxId ?? card?.mailboxId ?? null;
    const key = {
      sequence: log.enrollments.get(f.creditEnrollmentId)?.sequenceId ?? null,
      step: f.credit?.stepId ?? null,
      variant: f.credit?.variantId ?? null,
      mailbox,
      rep: mailbox === null ? null : (log.owners.get(mailbox) ?? null),
    }[by];
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { ...zeroCounts(), hardBounces: 0, softBounces: 0 }));
    row[f.series] += 1;
    if (f.series === 'bounces') row[f.hard ? 'hardBounces' : 'softBounces'] += 1;
  }
  return rows;
}

/**
 * Reply times in [since, until) (`GET …/analytics/reply-times`): each reply counted there, the time
 * from the email it is credited to (both at their journal times), in the chart's buckets, with the
 * nearest-rank median (the smallest time with at least half at or below it); replies with no email
 * before them apart. `sequenceId`: those counted for it (the credited email's enrollment's card).
 */
export function worldReplyTimes(log: WorldLog, facts: readonly Counted[], since: number, until: number, sequenceId?: string): ReplyTimes {
  const replies = facts.filter((f) => f.series === 'replies' && f.countsAt >= since && f.countsAt < until && (sequenceId === undefined || log.enrollments.get(f.creditEnrollmentId)?.sequenceId === sequenceId));
  const times = replies.flatMap((f) => (f.creditAt === null ? [] : [f.countsAt - f.creditAt])).sort((a, b) => a - b);
  return {
    count: times.length,
    noEmailBefore: replies.length - times.length,
    medianMs: times.length === 0 ? null : times[Math.ceil(times.length / 2) - 1]!,
    buckets: REPLY_TIME_BUCKETS.map((b) => ({ ...b, count: times.filter((t) => t >= b.fromMs && (b.toMs === null || t < b.toMs)).length })),
  };
}
