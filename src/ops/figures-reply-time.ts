import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import { replyTimeFacts } from './figure-facts.ts';
import { readFolded } from './figure-rollup.ts';
import type { SequenceFilter, Span } from './figures.ts';

/**
 * Reply time after send (issue 18): for every reply in the window (the journal's applied `reply`,
 * `isReply`: the enrollment's first), the time since the email it is credited to was sent (the last
 * email sent to the enrollment it was addressed to before it, `emailCredit`, the rule every figure
 * credits replies by), counted for that email's sequence. A reply with no email before it has no
 * reply time: counted apart.
 *
 * The facts are defined once (figure-facts.ts replyTimeFacts) and folded by the rollup into
 * `reply_time`, a row per reply (migration 0135): a window reads its replies' rows by the index on
 * (workspace, time) and looks up the credit only for the journal's replies past the fold. Looking
 * it up for every reply of the window at each request (a walk of the enrollment's moves and a probe
 * of the journal) was three quarters of the chart's time at 1M enrollments (docs/benchmarks.md).
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
  const ofSequence = (alias: string) => (o.sequenceId ? sql`and ${sql.ref(`${alias}.sequence_id`)} = ${o.sequenceId}` : sql``);
  const r = await readFolded(db, (db, fold) =>
    sql<{ no_email: number; count: number; median: number | null; b: number[] }>`
      with replied as (
        -- Folded up to the fold's position (the bound guards a read inside a caller's transaction,
        -- where a fold may commit between the position and this statement), and the rest from the journal.
        select t.at, t.sent_at from reply_time t
        where t.workspace_id = ${workspaceId} and t.at >= ${span.since} and t.at < ${span.until} and t.event_id <= ${fold.replyTime.toString()}::bigint ${ofSequence('t')}
        union all
        select f.at, f.sent_at from (${replyTimeFacts({ workspaceId, after: fold.replyTime, upTo: null, since: span.since, until: span.until })}) f
        where true ${ofSequence('f')}
      ), timed as (
        select (extract(epoch from (at - sent_at)) * 1000)::bigint as ms from replied where sent_at is not null
      )
      select (select count(*) from replied where sent_at is null)::int as no_email,
        (select count(*) from timed)::int as count,
        -- percentile_disc(0.5) is the smallest time with at least half at or below it: the nearest rank.
        (select percentile_disc(0.5) within group (order by ms) from timed) as median,
        (select array[${cases}] from timed) as b`.execute(db),
  );
  const x = r.rows[0]!;
  const counts = (x.b ?? []).map(Number);
  return {
    count: Number(x.count),
    noEmailBefore: Number(x.no_email),
    medianMs: x.median === null ? null : Number(x.median),
    buckets: REPLY_TIME_BUCKETS.map((b, i) => ({ ...b, count: counts[i] ?? 0 })),
  };
}
