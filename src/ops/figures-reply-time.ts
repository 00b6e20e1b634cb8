import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import { creditedEnrollment, isReply, lastEmailEnrollmentBefore, lastEmailSentAtBefore } from './figure-facts.ts';
import { ofSequence, type SequenceFilter, type Span } from './figures.ts';

/**
 * Reply time after send (issue 18): for every reply in the window (the journal's applied `reply`,
 * `isReply`: the enrollment's first), the time since the email it is credited to was sent (the last
 * email sent to the enrollment before it, `lastEmailSentAtBefore`, the rule every figure credits
 * replies by). A reply with no email before it has no reply time: counted apart.
 *
 * Cost: the journal rows of the window (its primary key leads with `at`) filtered to the
 * workspace's replies, and per reply one backwards step on `event_enrollment` (enrollment_id, at).
 * Replies are a few in a hundred journal rows; the rollup cannot hold this (a duration, not a count).
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The buckets, in order: each holds times in [fromMs, toMs) (toMs null: no end). */
export const REPLY_TIME_BUCKETS = [
  { key: 'lt1h', label: 'Under 1 hour', fromMs: 0, toMs: HOUR },
  { key: '1to4h', label: '1–4 hours', fromMs: HOUR, toMs: 4 * HOUR },
  { key: '4to24h', label: '4–24 hours', fromMs: 4 * HOUR, toMs: DAY },
  { key: '1to3d', label: '1–3 days', fromMs: DAY, toMs: 3 * DAY },
  { key: '3to7d', label: '3–7 days', fromMs: 3 * DAY, toMs: 7 * DAY },
  { key: 'gt7d', label: 'Over 7 days', fromMs: 7 * DAY, toMs: null },
] as const;

export interface ReplyTimes {
  /** Replies with an email before them (the buckets' sum). */
  count: number;
  /** Replies in the window with no email sent before them. */
  noEmailBefore: number;
  /** The median reply time by nearest rank (ops/figures.ts nearestRank), null: no reply. */
  medianMs: number | null;
  buckets: Array<{ key: string; label: string; fromMs: number; toMs: number | null; count: number }>;
}

// -- name: figures-reply-times
export async function replyTimes(db: Db, workspaceId: string, span: Span, o: SequenceFilter = {}): Promise<ReplyTimes> {
  const cases = sql.join(
    REPLY_TIME_BUCKETS.map((b) => sql`(count(*) filter (where ms >= ${b.fromMs} ${b.toMs === null ? sql`` : sql`and ms < ${b.toMs}`}))::int`),
    sql`, `,
  );
  // The enrollment whose email a reply answered decides its sequence only when one is asked for:
  // without a sequence it is not looked up (a second walk of the lineage per reply, a third of the
  // request's time at 1M enrollments).
  const creditedTo = o.sequenceId ? lastEmailEnrollmentBefore(sql`r.enrollment_id`, sql`r.at`) : sql`null::uuid`;
  const r = await sql<{ no_email: number; count: number; median: number | null; b: number[] }>`
    with credited as (
      select r.at, r.enrollment_id, ${lastEmailSentAtBefore(sql`r.enrollment_id`, sql`r.at`)} as sent_at, ${creditedTo} as credited_to
      from (
        -- From the enrollment the reply was addressed to (figure-facts.ts creditedEnrollment).
        select e.at, ${creditedEnrollment(sql`e`)} as enrollment_id
        from event e
        where e.workspace_id = ${workspaceId} and ${isReply(sql`e`)} and e.at >= ${span.since} and e.at < ${span.until}
      ) r
    ), replied as (
      -- A reply after a move counts for the sequence whose email it answered (as every figure credits
      -- it: figure-facts.ts emailCredit); one with no email before it, for its own.
      select c.at, c.sent_at from credited c where true ${ofSequence(o, sql`coalesce(c.credited_to, c.enrollment_id)`)}
    ), timed as (
      select (extract(epoch from (at - sent_at)) * 1000)::bigint as ms from replied where sent_at is not null
    )
    select (select count(*) from replied where sent_at is null)::int as no_email,
      (select count(*) from timed)::int as count,
      -- percentile_disc(0.5) is the smallest time with at least half at or below it: the nearest rank.
      (select percentile_disc(0.5) within group (order by ms) from timed) as median,
      (select array[${cases}] from timed) as b`.execute(db);
  const x = r.rows[0]!;
  const counts = (x.b ?? []).map(Number);
  return {
    count: Number(x.count),
    noEmailBefore: Number(x.no_email),
    medianMs: x.median === null ? null : Number(x.median),
    buckets: REPLY_TIME_BUCKETS.map((b, i) => ({ ...b, count: counts[i] ?? 0 })),
  };
}
