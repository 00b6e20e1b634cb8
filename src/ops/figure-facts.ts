import { sql, type RawBuilder } from 'kysely';
import { countedTracking, trackingSeries } from '../store/counted-tracking.ts';

/**
 * The counted facts of the analytics, one row each: what ops/figures.ts defines (its file comment
 * says what each series counts), written once here as SQL so that the window's raw count and the
 * folded buckets (ops/figure-rollup.ts) come from the same text.
 *
 * A fact row: (at, workspace_id, sequence_id, step_id, variant_id, mailbox_id, series, n). `n` is
 * +1, or -1 where a tracking event recorded late moves an email's first open or click earlier
 * (the fact leaves the time it had and comes at the new one). sequence_id is the enrollment's;
 * step_id, variant_id and mailbox_id are the email's the fact is credited to (its send request's;
 * the mailbox, where the request recorded none, the enrollment's).
 */

type Expr = ReturnType<typeof sql>;

/** The series a journal, tracking or positive-reply fact belongs to. */
export const FACT_SERIES = ['sends', 'opened', 'openedAutomatically', 'clicked', 'replies', 'positiveReplies', 'meetings', 'bounces', 'bouncesHard', 'unsubscribes'] as const;

/** Whether a step id (text) is an email step: only emails count as sends. */
export function emailStep(stepIdText: Expr) {
  return sql`exists (select 1 from step k where k.id = (${stepIdText})::uuid and k.kind = 'email')`;
}

/**
 * Whether journal row `e` is a meeting booked: the prospect's `meeting_booked`, or a call given the
 * outcome `meeting_booked`, applied or ignored (a meeting on a sequence that meetings do not stop, or
 * after the reply that stopped it, is still a meeting). Analytics and experiments both count by it.
 */
export function isMeeting(e: Expr) {
  return sql`(${e}.type in ('meeting_booked', 'meeting_booked.ignored')
    or (${e}.type in ('call_outcome', 'call_outcome.ignored') and ${e}.payload->'event'->>'outcome' = 'meeting_booked'))`;
}


/** Which rows of a source: ids in (after, upTo] (upTo null: every later one), times in [since, until). */
export interface FactRange {
  /** One workspace, or every workspace (the fold). */
  workspaceId: string | null;
  after: Expr | bigint;
  upTo: bigint | null;
  since: Date;
  until: Date;
}

/** An id bound as SQL: a bigint travels as text (the drivers differ on BigInt parameters). */
const idOf = (x: Expr | bigint) => (typeof x === 'bigint' ? sql`${x.toString()}::bigint` : x);
const idRange = (alias: Expr, r: FactRange) => sql`${alias}.id > ${idOf(r.after)} ${r.upTo === null ? sql`` : sql`and ${alias}.id <= ${idOf(r.upTo)}`}`;
const inSpan = (at: Expr, r: FactRange) => sql`${at} >= ${r.since} and ${at} < ${r.until}`;
const ofWorkspace = (alias: Expr, r: FactRange) => (r.workspaceId === null ? sql`true` : sql`${alias}.workspace_id = ${r.workspaceId}`);

/** Whether journal row `e` is a send: an applied `step_sent` of an email step (the `sends` series). */
export function isEmailSend(e: Expr) {
  return sql`(${e}.type = 'step_sent' and ${emailStep(sql`(${e}.payload->'event'->>'stepId')`)})`;
}

/**
 * Whether journal row `e` is a reply: an applied `reply`, the enrollment's first (the engine ignores
 * any later one, journalled as `reply.ignored`): the `replies` series.
 */
export function isReply(e: Expr) {
  return sql`(${e}.type = 'reply')`;
}

/**
 * The enrollment a journal row `e`'s fact is credited from: the one the prospect's signal was
 * addressed to. A reply, bounce, unsubscribe or meeting that reaches an enrollment after it was
 * moved to another sequence (by a rep, a branch arm or a reply rule) is applied to the enrollment
 * it moved to (EnrollmentService follows moved_to), whose journal entry names the one it was
 * addressed to (`addressedTo`, written since issue 18's accuracy run; older entries lack it and are
 * credited from their own enrollment). The prospect answered that enrollment's email, not one the
 * successor sent later (found by the analytics accuracy test, src/sim/analytics-accuracy.test.ts).
 */
export function creditedEnrollment(e: Expr) {
  return sql`coalesce((${e}.payload->>'addressedTo')::uuid, ${e}.enrollment_id)`;
}

/**
 * The enrollment and those it was moved from (up to three moves back, enrollment.moved_to): a
 * signal to an enrollment that has sent nothing yet since a move answers the last email the
 * enrollment it moved from sent, and that email takes the credit, with its sequence, step, variant
 * and mailbox. Only backwards: an email the successor sent later is not the one answered.
 * Indexed by 0080's `enrollment (moved_to)`.
 */
function lineage(enrollmentId: Expr) {
  return sql`(select ${enrollmentId}
              union all select ln1.id from enrollment ln1 where ln1.moved_to = ${enrollmentId}
              union all select ln2.id from enrollment ln1 join enrollment ln2 on ln2.moved_to = ln1.id where ln1.moved_to = ${enrollmentId}
              union all select ln3.id from enrollment ln1 join enrollment ln2 on ln2.moved_to = ln1.id join enrollment ln3 on ln3.moved_to = ln2.id where ln1.moved_to = ${enrollmentId})`;
}

/**
 * When the email last sent to enrollment `enrollmentId` (the one the fact was addressed to,
 * `creditedEnrollment`; or an enrollment it was moved from, `lineage`) at or before `at` went out:
 * the email a reply (or a bounce, an unsubscribe, an interested reply, a meeting) is credited to.
 * Null: none before it.
 *
 * Looked for in the month before `at` first, and in the whole journal only when nothing is there:
 * the journal is partitioned by month, and a search with no lower bound probes every partition's
 * index for every fact (a year of journal: 14 probes per reply, most of the analytics' time at 1M
 * enrollments, docs/benchmarks.md). The answer is the same: the latest send in the month, if there
 * is one, is the latest of all. COALESCE runs the second search only for a null first.
 */
function lastEmailAt(enrollmentId: Expr, at: Expr) {
  const latest = (since: Expr | null) => sql`(select s.at from event s
               where s.enrollment_id in ${lineage(enrollmentId)} and s.at <= ${at} ${since ? sql`and s.at > ${since}` : sql``} and ${isEmailSend(sql`s`)}
               order by s.at desc limit 1)`;
  return sql`coalesce(${latest(sql`${at} - interval '31 days'`)}, ${latest(null)})`;
}

/**
 * A column of that email's journal row `s` (`lastEmailAt`), found at its time, so in one partition
 * (sends at the same instant: the later id, as before).
 */
function lastEmailSend(enrollmentId: Expr, at: Expr, column: Expr) {
  return sql`(select ${column} from event s
               where s.enrollment_id in ${lineage(enrollmentId)} and s.at = ${lastEmailAt(enrollmentId, at)} and ${isEmailSend(sql`s`)}
               order by s.id desc limit 1)`;
}

/** The step of the email a fact at `at` is credited to (`lastEmailSend`). */
export function lastEmailStepBefore(enrollmentId: Expr, at: Expr) {
  return lastEmailSend(enrollmentId, at, sql`(s.payload->'event'->>'stepId')::uuid`);
}

/** When the email a fact at `at` is credited to was sent (`lastEmailAt`): the reply time's start. */
export function lastEmailSentAtBefore(enrollmentId: Expr, at: Expr) {
  return lastEmailAt(enrollmentId, at);
}

/** The enrollment whose email a fact at `at` is credited to (`lastEmailSend`): after a move, the earlier one, whose sequence the fact counts for. */
export function lastEmailEnrollmentBefore(enrollmentId: Expr, at: Expr) {
  return lastEmailSend(enrollmentId, at, sql`s.enrollment_id`);
}

/**
 * The email fact row `f` (with `at`, `type`) is credited to, as a lateral join giving
 * `credit.enrollment_id`, `credit.step_id` and `credit.sent_at` (`lastEmailSend`'s rule from
 * enrollment `from`, `f.enrollment_id` unless given; null: none). A send is its own email: for it
 * the lookup is skipped (a one-time filter), not run.
 */
export function emailCredit(f: Expr, from: Expr = sql`${f}.enrollment_id`) {
  return sql`left join lateral (
      select cs.enrollment_id, (cs.payload->'event'->>'stepId')::uuid as step_id, cs.at as sent_at from event cs
      where ${f}.type <> 'step_sent' and cs.enrollment_id in ${lineage(from)} and cs.at = ${lastEmailAt(from, sql`${f}.at`)} and ${isEmailSend(sql`cs`)}
      order by cs.id desc limit 1) credit on true`;
}

/**
 * Where a fact credited to row `c`'s enrollment and step counts: that enrollment's sequence, the
 * step, and the step's send request's variant and mailbox (without one, the enrollment's mailbox).
 * `columns` gives (sequence_id, step_id, variant_id, mailbox_id); `joins` the joins they read,
 * as enrollment `n` and send request `q`.
 */
function creditedPlace(c: Expr) {
  return {
    columns: sql`n.sequence_id, ${c}.step_id, q.variant_id, coalesce(q.mailbox_id, n.mailbox_id) as mailbox_id`,
    joins: sql`left join enrollment n on n.id = ${c}.enrollment_id
    left join send_request q on ${c}.step_id is not null and q.enrollment_id = ${c}.enrollment_id and q.step_id = ${c}.step_id`,
  };
}

/**
 * The journal's facts among rows in the range: applied `step_sent` of an email step (sends, by the
 * step and its send request's variant and mailbox), `reply`, `bounce`, `unsubscribe` and meetings
 * (`isMeeting`), each credited to the last email sent before it to the enrollment it was addressed
 * to (`creditedEnrollment`; or one that enrollment was moved from), with that email's enrollment's
 * sequence and its variant and mailbox (`emailCredit`); without an email, the addressed
 * enrollment's sequence and mailbox. A hard bounce is also a `bouncesHard` fact (the breakdown splits bounces by
 * kind; the per-day series leave it out). A journal row is written once and never changes, so
 * each fact is +1.
 */
export function journalFacts(r: FactRange): RawBuilder<unknown> {
  return sql`
    select j.at, j.workspace_id, ${creditedPlace(sql`j`).columns}, x.series, 1 as n
    from (
      select e.at, e.workspace_id, e.type,
        case when ${isMeeting(sql`e`)} then 'meetings' else
          case e.type when 'step_sent' then 'sends' when 'reply' then 'replies' when 'bounce' then 'bounces' else 'unsubscribes' end end as series,
        e.type = 'bounce' and coalesce((e.payload->'event'->>'hard')::boolean, false) as hard,
        case when e.type = 'step_sent' then e.enrollment_id else coalesce(credit.enrollment_id, ${creditedEnrollment(sql`e`)}) end as enrollment_id,
        case when e.type = 'step_sent' then (e.payload->'event'->>'stepId')::uuid else credit.step_id end as step_id
      from event e
      ${emailCredit(sql`e`, creditedEnrollment(sql`e`))}
      where ${ofWorkspace(sql`e`, r)} and ${idRange(sql`e`, r)} and ${inSpan(sql`e.at`, r)}
        and (e.type in ('bounce', 'unsubscribe') or ${isReply(sql`e`)} or ${isEmailSend(sql`e`)} or ${isMeeting(sql`e`)})
    ) j
    cross join lateral (select j.series union all select 'bouncesHard' where j.hard) as x(series)
    ${creditedPlace(sql`j`).joins}`;
}

/**
 * The tracking facts the range's rows make: an email (send request) counts in a series once, at
 * its first counted row of that series (opened: by a person as far as the tracker can tell;
 * openedAutomatically: an image proxy's or scanner's fetch; clicked: a person's click). For each
 * (email, series) a row in the range touches, the first is taken over the rows up to the range's
 * end and compared with the first over the rows before it: a new first is +1 at its time, and when
 * it comes before an earlier-counted first, that one is -1 at its time.
 *
 * `touchedInSpan`: only rows inside the time span can touch (true when nothing was counted before
 * the range, i.e. `after` is 0: a first inside the span is then a row inside the span).
 */
export function trackingFacts(r: FactRange, touchedInSpan: boolean): RawBuilder<unknown> {
  const before = (p: Expr) => sql`${p}.id <= ${idOf(r.after)}`;
  const upTo = (p: Expr) => (r.upTo === null ? sql`true` : sql`${p}.id <= ${idOf(r.upTo)}`);
  // The email's rows of the series, found through its enrollment's index (a handful of rows); the
  // rare row with no enrollment through the workspace's. Two branches, not one condition with a
  // CASE: an index is used only for a plain equality.
  const email = (p: Expr, x: Expr) => sql`${p}.send_request_id = ${x}.send_request_id and ${countedTracking(p)} and ${trackingSeries(p)} = ${x}.series`;
  const firstOf = (x: Expr, bound: Expr, withEnrollment: boolean) => sql`(select min(p.at) from tracking_event p
    where ${withEnrollment ? sql`p.enrollment_id = ${x}.enrollment_id` : sql`p.workspace_id = ${x}.workspace_id and p.enrollment_id is null`} and ${email(sql`p`, x)} and ${bound})`;
  return sql`
    with touched as (
      select distinct t.workspace_id, t.enrollment_id, t.send_request_id, ${trackingSeries(sql`t`)} as series
      from tracking_event t
      where ${ofWorkspace(sql`t`, r)} and ${idRange(sql`t`, r)} and ${countedTracking(sql`t`)} ${touchedInSpan ? sql`and ${inSpan(sql`t.at`, r)}` : sql``}
    ), firsts as (
      select x.*, ${firstOf(sql`x`, before(sql`p`), true)} as old_at, ${firstOf(sql`x`, upTo(sql`p`), true)} as new_at
      from touched x where x.enrollment_id is not null
      union all
      select x.*, ${firstOf(sql`x`, before(sql`p`), false)}, ${firstOf(sql`x`, upTo(sql`p`), false)}
      from touched x where x.enrollment_id is null
    ), moved as (
      select new_at as at, workspace_id, enrollment_id, send_request_id, series, 1 as n from firsts where old_at is null or new_at < old_at
      union all
      select old_at, workspace_id, enrollment_id, send_request_id, series, -1 from firsts where old_at is not null and new_at < old_at
    )
    select m.at, m.workspace_id, n.sequence_id, q.step_id, q.variant_id, coalesce(q.mailbox_id, n.mailbox_id) as mailbox_id, m.series, m.n
    from moved m
    left join enrollment n on n.id = m.enrollment_id
    left join send_request q on q.id = m.send_request_id
    where ${inSpan(sql`m.at`, r)}`;
}

/**
 * The positive-reply facts among rows of `positive_fact` in the range (migration 0131): an
 * enrollment counts at its first reply classified `interested` (an inbound message of the
 * enrollment, as migration 0131's trigger reads it), and each change
 * of that time (a reply stored, relabelled, moved or deleted) wrote -1 at the old time and +1 at the
 * new one, so a window's sum is the enrollments whose first interested reply is in it now. Each is
 * credited like a reply (`emailCredit`): to the last email sent to the enrollment at or before it,
 * with that email's enrollment's sequence, step, variant and mailbox, at the fold, as the journal's
 * replies are: the -1 of a relabel goes where its +1 went because no email journalled after a fact
 * was sent before it (the engine stamps its journal with its clock's now).
 */
export function positiveFacts(r: FactRange): RawBuilder<unknown> {
  return sql`
    select c.at, c.workspace_id, ${creditedPlace(sql`c`).columns}, 'positiveReplies' as series, c.n
    from (
      select p.at, p.workspace_id, p.n, coalesce(credit.enrollment_id, p.enrollment_id) as enrollment_id, credit.step_id
      from (select p.*, 'reply' as type from positive_fact p
            where ${ofWorkspace(sql`p`, r)} and ${idRange(sql`p`, r)} and ${inSpan(sql`p.at`, r)}) p
      ${emailCredit(sql`p`)}
    ) c
    ${creditedPlace(sql`c`).joins}`;
}

/**
 * The reply-time facts (ops/figures-reply-time.ts, migration 0135), one row per reply (`isReply`)
 * in the range: (event_id, at, workspace_id, sent_at, sequence_id). `sent_at`: when the email it is
 * credited to went out (`emailCredit` from the enrollment it was addressed to; null: no email
 * before it); `sequence_id`: that email's enrollment's sequence (without one, the addressed
 * enrollment's), the sequence the reply counts for in every figure.
 */
export function replyTimeFacts(r: FactRange): RawBuilder<unknown> {
  return sql`
    select r.id as event_id, r.at, r.workspace_id, credit.sent_at, n.sequence_id
    from (
      select e.id, e.at, e.workspace_id, e.type, ${creditedEnrollment(sql`e`)} as enrollment_id
      from event e
      where ${ofWorkspace(sql`e`, r)} and ${idRange(sql`e`, r)} and ${inSpan(sql`e.at`, r)} and ${isReply(sql`e`)}
    ) r
    ${emailCredit(sql`r`, sql`r.enrollment_id`)}
    left join enrollment n on n.id = coalesce(credit.enrollment_id, r.enrollment_id)`;
}

/**
 * The send-hour facts (ops/figures-send-hours.ts), one row each (at, workspace_id, sequence_id,
 * local_hour, series, n): each email sent (`isEmailSend`, series 'sends') and each reply
 * (`isReply`, series 'replies') credited to the email it answers (`lastEmailSentAtBefore`, from the
 * enrollment it was addressed to), both at the time that email went out, with the hour of the week
 * it was then in the prospect's zone (`local_hour`: (ISO weekday − 1) × 24 + hour, 0 … 167). The
 * prospect's zone: the lead's own, as the enrollment resolved it when it was made (source 'lead'),
 * else the workspace's (a mailbox's zone is the rep's, not the prospect's). sequence_id: the sending
 * enrollment's (after a move, the one whose email was answered). A reply with no email before it
 * makes no row. The span is the email's time: a reply to an email of the span counts however long
 * after it came.
 */
export function sendHourFacts(r: FactRange): RawBuilder<unknown> {
  const local = sql`(f.at at time zone coalesce(case when n.zone_source = 'lead' then n.time_zone end, w.time_zone))`;
  return sql`
    with replies as materialized (
      -- Materialized: the credit lookups run once per reply found, not inside the scan's filter,
      -- where the planner costs them for every row and reads whole partitions instead of the ids.
      -- A reply comes after the email it answers: none before the span can answer one in it.
      select e.workspace_id, e.at, ${creditedEnrollment(sql`e`)} as enrollment_id
      from event e
      where ${ofWorkspace(sql`e`, r)} and ${idRange(sql`e`, r)} and e.at >= ${r.since} and ${isReply(sql`e`)}
    ), credited as materialized (
      select r.workspace_id, ${lastEmailSentAtBefore(sql`r.enrollment_id`, sql`r.at`)} as at, ${lastEmailEnrollmentBefore(sql`r.enrollment_id`, sql`r.at`)} as enrollment_id
      from replies r
    )
    select f.at, f.workspace_id, n.sequence_id, ((extract(isodow from ${local})::int - 1) * 24 + extract(hour from ${local})::int) as local_hour, f.series, 1 as n
    from (
      select e.at, e.workspace_id, e.enrollment_id, 'sends' as series
      from event e
      where ${ofWorkspace(sql`e`, r)} and ${idRange(sql`e`, r)} and ${inSpan(sql`e.at`, r)} and ${isEmailSend(sql`e`)}
      union all
      select c.at, c.workspace_id, c.enrollment_id, 'replies' from credited c where c.at is not null and ${inSpan(sql`c.at`, r)}
    ) f
    join workspace w on w.id = f.workspace_id
    left join enrollment n on n.id = f.enrollment_id`;
}
