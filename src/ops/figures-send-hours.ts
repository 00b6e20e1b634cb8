import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import { creditedEnrollment, isEmailSend, isReply, lastEmailEnrollmentBefore, lastEmailSentAtBefore } from './figure-facts.ts';
import { ofSequence, type SequenceFilter, type Span } from './figures.ts';

/**
 * Best send hours in the prospect's time (issue 18): the sends of the window (`isEmailSend`) by the
 * hour of day, and the ISO weekday, in the prospect's zone at the moment of sending, and the replies
 * credited to them (a reply credits the last email sent before it, `lastEmailSentAtBefore`, however
 * long after the window it came).
 *
 * The prospect's zone: the lead's own, as the enrollment resolved it when it was made (an IANA name
 * that was valid, calendar/zone.ts resolveZone: source 'lead'); otherwise the workspace's zone (a
 * mailbox's zone is the rep's, not the prospect's). A send with no enrollment takes the workspace's.
 *
 * Cost: the journal rows of the window (primary key leads with `at`) filtered to the workspace's
 * sends, each joined to its enrollment by primary key; the replies from the window's start on, each
 * with one backwards step on `event_enrollment`. The rollup holds no prospect zone, so this reads
 * the sends themselves: O(sends in the window), which is why the window is at most 90 days.
 */

/** An hour is ranked only with at least this many sends: below it one reply swings the rate by 5 points. */
export const MIN_SENDS_PER_HOUR = 20;
/** At most this many hours are named best. */
const BEST_COUNT = 3;

export interface HourCell {
  /** ISO weekday, 1 Monday … 7 Sunday. */
  weekday: number;
  hour: number;
  sends: number;
  replies: number;
}

export interface HourFigures {
  hour: number;
  sends: number;
  replies: number;
  replyRate: number | null;
}

export interface BestHours {
  /** Whether enough hours had enough sends to compare (at least two with MIN_SENDS_PER_HOUR). */
  enough: boolean;
  minSends: number;
  /** The best hours by reply rate among those with enough sends, best first (empty: not enough). */
  hours: HourFigures[];
  /** What a person reads: which hours did best, or why nothing is said. */
  text: string;
}

/** "9:00–10:00" */
export const hourLabel = (h: number) => `${h}:00–${h + 1}:00`;

/**
 * Which hours did best: among the hours with at least MIN_SENDS_PER_HOUR sends, the highest reply
 * rates (more sends first on a tie); nothing is said when fewer than two hours can be compared.
 */
export function bestHours(hours: readonly HourFigures[]): BestHours {
  const total = hours.reduce((n, h) => n + h.sends, 0);
  const ranked = hours.filter((h) => h.sends >= MIN_SENDS_PER_HOUR);
  if (ranked.length < 2) {
    return {
      enough: false,
      minSends: MIN_SENDS_PER_HOUR,
      hours: [],
      text: `Not enough sends to say which hours do best: ${total} sends in the period, and an hour is compared only with ${MIN_SENDS_PER_HOUR} or more (${ranked.length} ${ranked.length === 1 ? 'hour has' : 'hours have'} that many).`,
    };
  }
  const best = [...ranked].sort((a, b) => b.replyRate! - a.replyRate! || b.sends - a.sends || a.hour - b.hour).slice(0, BEST_COUNT);
  const pct = (r: number) => `${(r * 100).toFixed(1)}%`;
  const named = best.map((h) => `${hourLabel(h.hour)} (${pct(h.replyRate!)} of ${h.sends} sends)`);
  return {
    enough: true,
    minSends: MIN_SENDS_PER_HOUR,
    hours: best,
    text: `Best hours in the prospect's time, by reply rate: ${named.join(', ')}. Compared over the ${ranked.length} hours with ${MIN_SENDS_PER_HOUR} or more sends, ${total} sends in all.`,
  };
}

/** The per-hour figures of the cells (every weekday together), all 24 hours. */
export function byHour(cells: readonly HourCell[]): HourFigures[] {
  const hours = Array.from({ length: 24 }, (_, hour) => ({ hour, sends: 0, replies: 0, replyRate: null as number | null }));
  for (const c of cells) {
    hours[c.hour]!.sends += c.sends;
    hours[c.hour]!.replies += c.replies;
  }
  for (const h of hours) h.replyRate = h.sends > 0 ? h.replies / h.sends : null;
  return hours;
}

// -- name: figures-send-hours
export async function sendHourCells(db: Db, workspaceId: string, span: Span, o: SequenceFilter = {}): Promise<HourCell[]> {
  const zone = sql`coalesce(case when n.zone_source = 'lead' then n.time_zone end, w.time_zone)`;
  const local = (at: ReturnType<typeof sql>) => sql`(${at} at time zone ${zone})`;
  const r = await sql<{ weekday: number; hour: number; sends: number; replies: number }>`
    with sent as (
      select e.enrollment_id, e.at
      from event e
      where e.workspace_id = ${workspaceId} and ${isEmailSend(sql`e`)} and e.at >= ${span.since} and e.at < ${span.until}
        ${ofSequence(o, sql`e.enrollment_id`)}
    ), replies as materialized (
      -- Materialized: the credit lookup runs once per reply found, not inside the scan's filter,
      -- where the planner costs it for every journal row past the window's start (and PostgreSQL
      -- would then spend seconds compiling the plan with JIT).
      -- Not narrowed to the sequence here: a reply after a move counts for the sequence whose email
      -- it answered (the credited one's, as every figure credits it: figure-facts.ts emailCredit),
      -- looked up from the enrollment the reply was addressed to (creditedEnrollment).
      select ${creditedEnrollment(sql`e`)} as enrollment_id, e.at
      from event e
      where e.workspace_id = ${workspaceId} and ${isReply(sql`e`)} and e.at >= ${span.since}
    ), credited as materialized (
      select ${lastEmailEnrollmentBefore(sql`r.enrollment_id`, sql`r.at`)} as enrollment_id, ${lastEmailSentAtBefore(sql`r.enrollment_id`, sql`r.at`)} as at from replies r
    ), both_ as (
      select enrollment_id, at, 1 as sends, 0 as replies from sent
      union all
      select c.enrollment_id, c.at, 0, 1 from credited c where c.at >= ${span.since} and c.at < ${span.until}
        ${ofSequence(o, sql`c.enrollment_id`)}
    )
    select extract(isodow from ${local(sql`b.at`)})::int as weekday, extract(hour from ${local(sql`b.at`)})::int as hour,
      sum(b.sends)::int as sends, sum(b.replies)::int as replies
    from both_ b
    cross join (select time_zone from workspace where id = ${workspaceId}) w
    left join enrollment n on n.id = b.enrollment_id
    group by 1, 2
    order by 1, 2`.execute(db);
  return r.rows.map((x) => ({ weekday: Number(x.weekday), hour: Number(x.hour), sends: Number(x.sends), replies: Number(x.replies) }));
}
