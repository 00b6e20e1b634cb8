import { sql, type RawBuilder } from 'kysely';
import { DateTime, IANAZone } from 'luxon';
import { realSpanMs, type Clock } from '../common/clock.ts';
import type { Db, Tx } from '../store/store.ts';
import { emailStep, isMeeting } from './figure-facts.ts';
import { readFolded, windowFacts, type Level } from './figure-rollup.ts';
import { NO_ARM } from '../common/no-arm.ts';

export { isMeeting };

/**
 * The figures a person sees, each defined once here, and the named queries that compute them from
 * the store. The API's analytics routes (and through them the web app's Analytics screen),
 * `cadenza status`, the demo's progress and `GET /metrics` all read them from this file; issue 11
 * had a headline of 22 sends beside a funnel of 345, and issue 12 a reply-to-stop read two ways.
 *
 * Source: the engine's journal (`event`), which records every transition once, in the transaction
 * that made it; `.ignored` rows are transitions the engine refused and never count.
 *
 * - **sent**: an applied `step_sent` of an email step. A send settled as possibly sent counts (the
 *   sequence went on as if sent); a resend by hand does not (the step was already counted). By
 *   step: its own step; by variant and mailbox: its send request's.
 * - **replied**: an applied `reply` (the enrollment stopped as replied; a second reply, or one to an
 *   enrollment already stopped, is ignored by the engine). By step, variant and mailbox: credited to
 *   the last email sent to the enrollment before it (a call step in between takes no credit); one
 *   before any email is unattributed.
 * - **bounces, unsubscribes**: applied `bounce` (hard or soft) and `unsubscribe`. Per mailbox, the
 *   bounces of its send requests by kind (`send_request.bounced_at`), which health is judged on.
 * - **reply-to-stop**: for every inbound message that stopped or paused its enrollment (a reply, a
 *   bounce, an unsubscribe or complaint, an out-of-office or needs-review pause; the pipeline's
 *   `stoppedOrPaused`), the time from the server's receipt (IMAP INTERNALDATE, Gmail internalDate,
 *   Graph receivedDateTime) to the end of the ingestion transaction that stopped it, in real
 *   milliseconds (`stopLatencyMs`). Ingestion measures it once and stores it with the stop
 *   (`message.stop_latency_ms`, `stopLatenciesUpdate`); the same number goes into the process's
 *   HDR histogram, `cadenza_reply_to_stop_ms` on /metrics (ops/metrics.ts). The stored figure is
 *   the durable, workspace-scoped one (every process, any window); /metrics is what this process
 *   committed since it started, every workspace together.
 *
 * Window and clock: the last `days` UTC days up to `asOf`, the later of the clock's now and the
 * workspace's latest journal entry (a demo's accelerated clock stamps its work ahead of the real
 * date; once it ends the API reads the real clock again, and a window ending "today" would miss
 * it). Journal rows count by their `at`, reply-to-stop by the message's receipt. Durations are real
 * milliseconds even for work done on an accelerated clock (`realSpanMs`).
 *
 * Percentiles: nearest rank (`nearestRank`), the method HDR histograms use, so /metrics and the
 * API agree exactly below 2,048 ms (the histogram keeps 3 significant digits above).
 *
 * Why in ops/: /metrics (ops/metrics.ts) takes its percentile method from here, and ops/ sits below
 * the domains; this file reads their tables by SQL and imports nothing but store/ and common/.
 * /metrics' other counters (`cadenza_sends_total`, `cadenza_ingest_actions_total`) count attempts
 * and decisions in one process, not these figures.
 */

/** The percentiles every reply-to-stop figure reports (the API, status, the demo, /metrics). */
export const REPLY_TO_STOP_PERCENTILES = [50, 90, 99] as const;

/** `message.stop_latency_ms` is an integer column: a latency past it (24.8 days) is stored as its top. */
export const MAX_STOP_LATENCY_MS = 2_147_483_647;

/**
 * The 1-based rank of the p-th percentile of `count` values by the nearest-rank method: the smallest
 * value with at least p % of the values at or below it. Computed as (p × count) / 100 so that
 * integers stay exact (0.07 × 100 is 7.000000000000001 in floating point, and would round up to 8).
 */
export function nearestRank(count: number, p: number): number {
  return Math.min(count, Math.max(1, Math.ceil((p * count) / 100)));
}

export interface ReplyToStop {
  count: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
}

/**
 * Reply-to-stop of one message: from the server's receipt to `stoppedAt` (both stamps of `clock`),
 * in whole real milliseconds, at least 0 (a server clock ahead of ours) and at most the column's top.
 */
export function stopLatencyMs(clock: Clock, receivedAt: number, stoppedAt: number): number {
  return Math.min(MAX_STOP_LATENCY_MS, Math.max(0, Math.round(realSpanMs(clock, stoppedAt - receivedAt))));
}

/**
 * Stores each stop's latency with its message, in the transaction that stopped it: the statement,
 * for the caller to run with its others in one round trip (null: no stop).
 */
// -- name: figures-record-stop-latencies
export function stopLatenciesUpdate(stops: ReadonlyArray<{ messageRowId: string; ms: number }>): RawBuilder<unknown> | null {
  if (stops.length === 0) return null;
  return sql`
    update message m set stop_latency_ms = u.ms
    from unnest(${stops.map((s) => s.messageRowId)}::uuid[], ${stops.map((s) => s.ms)}::int[]) as u(id, ms)
    where m.id = u.id`;
}

/** A span of journal time: [since, until). */
export interface Span {
  since: Date;
  until: Date;
}

/** Everything the journal holds (the demo's progress, the all-time reply rate per variant). */
export const ALL_TIME: Span = { since: new Date(0), until: new Date(Date.UTC(9999, 11, 31)) };

/** The window of the figures: `days` whole days in `zone`, the last one holding `asOf`. */
export interface Window extends Span {
  days: number;
  /** The IANA time zone whose calendar days the figures are counted by ('UTC' unless asked). */
  zone: string;
  /** The window's days, 'YYYY-MM-DD' in `zone`, oldest first. */
  dayKeys: string[];
  asOf: number;
}

/**
 * `days` whole calendar days of `zone`, the last one holding `asOf`. A day runs from one local
 * midnight to the next, so a day on which the clocks change lasts 23 or 25 hours (luxon's calendar
 * arithmetic; PostgreSQL's `at time zone` buckets by the same rule).
 */
export function calendarWindow(asOf: number, days: number, zone: string): Window {
  const lastDay = DateTime.fromMillis(asOf, { zone }).startOf('day');
  if (!lastDay.isValid) throw new Error(`unknown time zone: ${zone}`);
  const firstDay = lastDay.minus({ days: days - 1 });
  const dayKeys = Array.from({ length: days }, (_, i) => firstDay.plus({ days: i }).toISODate()!);
  return { days, zone, dayKeys, since: firstDay.toJSDate(), until: lastDay.plus({ days: 1 }).toJSDate(), asOf };
}

/**
 * The day of `w` an instant falls on, in SQL (null outside the window): its place among the days'
 * first instants (luxon's local midnights, the rule `at time zone` follows) found by binary search,
 * instead of a time zone conversion per row, which took a third of the headline's read in New
 * York's zone at 1M enrollments.
 */
export function dayKeyOf(w: Window, at: RawBuilder<unknown>): RawBuilder<string> {
  const starts = w.dayKeys.map((d) => DateTime.fromISO(d, { zone: w.zone }).toUTC().toISO()!);
  return sql<string>`(${w.dayKeys}::text[])[width_bucket(${at}, ${starts}::timestamptz[])]`;
}

/** The `days` calendar days just before `w`: the period a window is compared with. */
export function precedingWindow(w: Window): Window {
  return calendarWindow(w.since.getTime() - 1, w.days, w.zone);
}

/** Whether `zone` names a time zone both the figures' calendar and PostgreSQL know by its IANA name. */
export function isKnownZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

// -- name: figures-window
export async function figuresWindow(db: Db, workspaceId: string, now: number, days: number, zone = 'UTC'): Promise<Window> {
  const r = await sql<{ latest: Date | null }>`select max(at) as latest from event where workspace_id = ${workspaceId}`.execute(db);
  const latest = r.rows[0]?.latest ? new Date(r.rows[0].latest).getTime() : null;
  return calendarWindow(latest !== null && latest > now ? latest : now, days, zone);
}

/** Figures of one sequence only (its enrollments' facts); none: the whole workspace. */
export interface SequenceFilter {
  sequenceId?: string;
}

/** `and <enrollmentId> is one of the sequence's enrollments`, or nothing without a sequence. */
export function ofSequence(o: SequenceFilter, enrollmentId: ReturnType<typeof sql>) {
  // Per row, through the enrollment's primary key: the rows a window holds are far fewer than a
  // sequence's enrollments (a semi-join would hash all of them each time).
  return o.sequenceId ? sql`and exists (select 1 from enrollment n where n.id = ${enrollmentId} and n.sequence_id = ${o.sequenceId})` : sql``;
}

/** The series of the per-day figures, in the order they are shown and exported. */
export const DAY_SERIES = ['sends', 'opened', 'openedAutomatically', 'clicked', 'replies', 'positiveReplies', 'meetings', 'bounces', 'unsubscribes'] as const;
export type DaySeries = (typeof DAY_SERIES)[number];
export type Totals = Record<DaySeries, number>;
export type DayCounts = { day: string } & Totals;

/**
 * Every per-day series of the window, each counted on the day (in the window's zone) it happened:
 *
 * - **sends, replies, bounces, unsubscribes**: the journal's applied `step_sent` (email steps),
 *   `reply`, `bounce`, `unsubscribe` (the definitions at the top of this file);
 * - **opened**: emails (send requests) opened by a person as far as the tracker can tell (verdict
 *   human or unknown), on the day of their first such open; **openedAutomatically**: emails whose
 *   tracking image an image proxy or scanner fetched, on the day of the first such fetch (an email
 *   can be in both: a proxy fetches it at delivery, the prospect opens it later);
 * - **clicked**: emails with a link followed by a person (not a link scanner), on the first such day;
 * - **positiveReplies**: enrollments whose prospect wrote a reply classified `interested`, on the
 *   day the first one was received (the server's receipt);
 * - **meetings**: `isMeeting` journal rows.
 */
// -- name: figures-per-day
export async function perDay(db: Db, workspaceId: string, w: Window, o: SequenceFilter = {}): Promise<DayCounts[]> {
  const day = (at: RawBuilder<unknown>) => dayKeyOf(w, at);
  const counts = await readFolded(db, (db, fold) =>
    sql<{ day: string; series: DaySeries; n: number }>`
      select ${day(sql`f.at`)} as day, f.series, sum(f.n)::int as n
      from (${windowFacts(fold, workspaceId, w.since, w.until, o.sequenceId ? 's' : 'w', o.sequenceId)}) f
      where f.series <> 'bouncesHard' ${o.sequenceId ? sql`and f.sequence_id = ${o.sequenceId}` : sql``}
      group by 1, 2`.execute(db),
  );
  const days = w.dayKeys.map((d) => ({ day: d, ...zeroTotals() }));
  const byDay = new Map(days.map((d) => [d.day, d]));
  for (const c of counts.rows) {
    const d = byDay.get(c.day);
    if (d) d[c.series] += Number(c.n);
  }
  return days;
}

function zeroTotals(): Totals {
  return Object.fromEntries(DAY_SERIES.map((k) => [k, 0])) as Totals;
}

/** The headline figures: the sums of the days. */
export function totalsOf(days: readonly Totals[]): Totals {
  const t = zeroTotals();
  for (const d of days) for (const k of DAY_SERIES) t[k] += d[k];
  return t;
}

/** The rates of a row of figures: each per email sent (null: none sent). */
export const RATES = ['openRate', 'clickRate', 'replyRate', 'positiveRate', 'meetingRate', 'bounceRate', 'unsubscribeRate'] as const;
export type Rates = Record<(typeof RATES)[number], number | null>;

export function ratesOf(t: Totals): Rates {
  const per = (n: number) => (t.sends > 0 ? n / t.sends : null);
  return {
    openRate: per(t.opened),
    clickRate: per(t.clicked),
    replyRate: per(t.replies),
    positiveRate: per(t.positiveReplies),
    meetingRate: per(t.meetings),
    bounceRate: per(t.bounces),
    unsubscribeRate: per(t.unsubscribes),
  };
}

/** What a breakdown groups the window's figures by. */
export const BREAKDOWN_BY = ['sequence', 'step', 'variant', 'mailbox', 'rep'] as const;
export type BreakdownBy = (typeof BREAKDOWN_BY)[number];

export interface BreakdownRow extends Totals {
  /** The sequence's, step's, variant's, mailbox's or rep's id; null: the facts none of them can be credited to. */
  key: string | null;
  label: string;
  /** `bounces` split by the bounce's kind (the journal's `hard`). */
  hardBounces: number;
  softBounces: number;
}

/** The label of the row of facts that have no sequence, step, variant, mailbox or rep to be credited to. */
const UNCREDITED: Record<BreakdownBy, string> = {
  sequence: 'No sequence',
  step: 'Not credited to an email',
  variant: 'No variant recorded',
  mailbox: 'No mailbox recorded',
  rep: 'No rep (mailbox owned by nobody)',
};

/**
 * The window's figures per sequence, email step, variant, mailbox or rep: the same facts perDay
 * counts (ops/figure-facts.ts, read through the rollup), each credited to one email, so that the rows always sum to the headline
 * (the facts no email can take are one row, key null):
 *
 * - a **send** to its own email; an **open or click** to the email it tracked; a **reply, bounce,
 *   unsubscribe, interested reply or meeting** to the last email sent to the enrollment before it
 *   (or one that moved into it; `emailCredit`, the rule of the per-step funnel);
 * - **step, variant, mailbox**: that email's (its send request's; the mailbox, where the request
 *   recorded none, the enrollment's); **rep**: the member who owns that mailbox (`mailbox.user_id`,
 *   the mailbox the enrollment sends from); **sequence**: the enrollment's (or, without one, the
 *   credited step's).
 */
/**
 * The fewest keys a breakdown can read (figure-rollup.ts levels): by sequence, step or variant, the
 * buckets without mailboxes; by mailbox or rep, those with mailboxes alone, unless the breakdown is
 * of one sequence (they hold no sequence).
 */
function breakdownLevel(by: BreakdownBy, o: SequenceFilter): Level {
  if (by === 'mailbox' || by === 'rep') return o.sequenceId ? 'x' : 'b';
  return 'v';
}

// -- name: figures-breakdown
export async function breakdown(db: Db, workspaceId: string, w: Span, by: BreakdownBy, o: SequenceFilter = {}): Promise<BreakdownRow[]> {
  const [key, label] = {
    sequence: [sql`q.id::text`, sql`q.name`],
    step: [sql`st.id::text`, sql`sq.name || ' / ' || st.key || case when st.archived_at is not null then ' (removed step)' else '' end`],
    variant: [sql`v.id::text`, sql`sq.name || ' / ' || st.key || ' / ' || upper(v.key)`],
    mailbox: [sql`m.id::text`, sql`case when m.removed_at is null then m.email else m.email || ' (removed mailbox)' end`],
    rep: [sql`u.id::text`, sql`coalesce(u.name, u.email)`],
  }[by];
  // Facts (sequence_id, step_id, variant_id, mailbox_id, series, n), labelled by what they are broken down by.
  const labelled = (facts: RawBuilder<unknown>) => sql<{ key: string | null; label: string | null; series: DaySeries | 'bouncesHard'; n: number }>`
    with f as materialized (${facts})
    select ${key} as key, ${label} as label, f.series, sum(f.n)::int as n
    from f
    left join step st on st.id = f.step_id
    left join sequence sq on sq.id = st.sequence_id
    left join sequence q on q.id = coalesce(f.sequence_id, st.sequence_id)
    left join variant v on v.id = f.variant_id
    left join mailbox m on m.id = f.mailbox_id
    left join app_user u on u.id = m.user_id
    group by 1, 2, 3
    -- A series whose facts cancel out in the window (a first open moved within it: -1 and +1 folded
    -- apart) is no row, as it is none read from the source rows, where the move never happened.
    having sum(f.n) <> 0`;
  const r = await readFolded(db, (db, fold) =>
    labelled(sql`
      select x.sequence_id, x.step_id, x.variant_id, x.mailbox_id, x.series, sum(x.n)::int as n
      from (${windowFacts(fold, workspaceId, w.since, w.until, breakdownLevel(by, o), o.sequenceId)}) x
      ${o.sequenceId ? sql`where x.sequence_id = ${o.sequenceId}` : sql``}
      group by 1, 2, 3, 4, 5`).execute(db),
  );
  const rows = new Map<string | null, BreakdownRow>();
  for (const x of r.rows) {
    let row = rows.get(x.key);
    if (!row) rows.set(x.key, (row = { key: x.key, label: x.key === null ? UNCREDITED[by] : (x.label ?? ''), ...zeroTotals(), hardBounces: 0, softBounces: 0 }));
    const n = Number(x.n);
    if (x.series === 'bouncesHard') row.hardBounces += n;
    else row[x.series] += n;
  }
  for (const row of rows.values()) {
    row.softBounces = row.bounces - row.hardBounces;
  }
  // Most sends first, then by name; the uncredited facts last.
  return [...rows.values()].sort((a, b) => (a.key === null ? 1 : 0) - (b.key === null ? 1 : 0) || b.sends - a.sends || a.label.localeCompare(b.label));
}

export interface StepRow {
  sequenceId: string;
  sequenceName: string;
  stepId: string;
  stepKey: string;
  stepPosition: number;
  /** The step is no longer in its sequence. */
  archived: boolean;
  /** The variant the send request used (null: none recorded). */
  variantKey: string | null;
  /** The mailbox that sent it (null: none recorded, or not asked for: `perMailbox`). */
  mailboxId: string | null;
  sent: number;
  replied: number;
}

/**
 * Sends and credited replies in the span, one row per email step and variant, and per mailbox when
 * asked (`perMailbox`: the rollup's level 'x', ten times the rows of level 'v' at 1M enrollments):
 * the funnel sums a step's rows, the variants a variant's, the mailboxes a mailbox's.
 */
// -- name: figures-per-step
export async function perStep(db: Db, workspaceId: string, span: Span, o: { sequenceId?: string; perMailbox?: boolean } = {}): Promise<StepRow[]> {
  const r = await readFolded(db, (db, fold) => sql<{ sequence_id: string; sequence_name: string; step_key: string; step_id: string; step_position: number; archived: boolean; variant_key: string | null; mailbox_id: string | null; sent: number; replied: number }>`
    with counted as materialized (
      select f.step_id, f.variant_id, ${o.perMailbox ? sql`f.mailbox_id` : sql`null::uuid`} as mailbox_id,
        sum(case when f.series = 'sends' then f.n else 0 end) as sent, sum(case when f.series = 'replies' then f.n else 0 end) as replied
      from (${windowFacts(fold, workspaceId, span.since, span.until, o.perMailbox ? 'x' : 'v', o.sequenceId)}) f
      where f.series in ('sends', 'replies') and f.step_id is not null
      group by 1, 2, 3
    )
    select q.id as sequence_id, q.name as sequence_name, st.key as step_key, st.id as step_id, st.position as step_position,
           st.archived_at is not null as archived, v.key as variant_key, c.mailbox_id,
           sum(c.sent)::int as sent, sum(c.replied)::int as replied
    from counted c
    join step st on st.id = c.step_id and st.kind = 'email'
    join sequence q on q.id = st.sequence_id
    left join variant v on v.id = c.variant_id
    where (c.sent <> 0 or c.replied <> 0) ${o.sequenceId ? sql`and q.id = ${o.sequenceId}` : sql``}
    group by q.id, q.name, q.created_at, st.key, st.id, st.position, st.archived_at, v.key, c.mailbox_id
    order by q.created_at, st.position, v.key, c.mailbox_id`.execute(db));
  return r.rows.map((x) => ({
    sequenceId: x.sequence_id,
    sequenceName: x.sequence_name,
    stepId: x.step_id,
    stepKey: x.step_key,
    stepPosition: Number(x.step_position),
    archived: x.archived,
    variantKey: x.variant_key,
    mailboxId: x.mailbox_id,
    sent: Number(x.sent),
    replied: Number(x.replied),
  }));
}

/** Email steps of the workspace's sequences that are still in use, for funnel rows with nothing yet. */
// -- name: figures-email-steps
export async function emailSteps(db: Db, workspaceId: string) {
  return db
    .selectFrom('step as st')
    .innerJoin('sequence as s', 's.id', 'st.sequence_id')
    .select(['s.id as sequence_id', 's.name', 'st.key', 'st.id'])
    .where('s.workspace_id', '=', workspaceId)
    .where('st.archived_at', 'is', null)
    .where('st.kind', '=', 'email')
    .orderBy('s.created_at')
    .orderBy('st.position')
    .execute();
}

/** The variants of email steps with more than one live variant (the A/B comparison's rows). */
// -- name: figures-compared-variants
export async function comparedVariants(db: Db, workspaceId: string) {
  const r = await sql<{ sequence_id: string; sequence_name: string; step_key: string; step_id: string; variant_key: string }>`
    select s.id as sequence_id, s.name as sequence_name, st.key as step_key, st.id as step_id, v.key as variant_key
    from variant v join step st on st.id = v.step_id join sequence s on s.id = st.sequence_id
    where s.workspace_id = ${workspaceId} and v.archived_at is null and st.archived_at is null
      and (select count(*) from variant o where o.step_id = v.step_id and o.archived_at is null) > 1
    order by s.created_at, st.position, v.key`.execute(db);
  return r.rows;
}

/** Sent and replied per sequence in the span (replies before any email included), keyed by sequence id. */
// -- name: figures-per-sequence
export async function perSequence(db: Db, workspaceId: string, span: Span): Promise<Map<string, { sent: number; replied: number }>> {
  const r = await sql<{ sequence_id: string; sent: number; replied: number }>`
    select n.sequence_id,
           (count(*) filter (where e.type = 'step_sent' and ${emailStep(sql`(e.payload->'event'->>'stepId')`)}))::int as sent,
           (count(*) filter (where e.type = 'reply'))::int as replied
    from event e join enrollment n on n.id = e.enrollment_id
    where e.workspace_id = ${workspaceId} and e.type in ('step_sent', 'reply') and e.at >= ${span.since} and e.at < ${span.until}
    group by n.sequence_id`.execute(db);
  return new Map(r.rows.map((x) => [x.sequence_id, { sent: Number(x.sent), replied: Number(x.replied) }]));
}

export interface MailboxRow {
  id: string;
  email: string;
  health: string;
  healthReason: string | null;
  settings: unknown;
  syncError: string | null;
  hardBounces: number;
  softBounces: number;
}

/**
 * Every mailbox of the workspace (a removed one labelled so: its history stays) with its send
 * requests' bounces in the window. Sends and replies per mailbox are perStep's rows.
 */
// -- name: figures-mailbox-bounces
export async function mailboxBounces(db: Db, workspaceId: string, span: Span): Promise<MailboxRow[]> {
  const r = await sql<{ id: string; email: string; health: string; health_reason: string | null; settings: unknown; sync_error: string | null; hard: number; soft: number }>`
    select m.id, case when m.removed_at is null then m.email else m.email || ' (removed mailbox)' end as email, m.health, m.health_reason, m.settings,
      (select y.last_error from mailbox_sync y where y.mailbox_id = m.id) as sync_error,
      (select count(*) from send_request r where r.mailbox_id = m.id and r.bounced_at >= ${span.since} and r.bounced_at < ${span.until} and r.bounce_kind = 'hard')::int as hard,
      (select count(*) from send_request r where r.mailbox_id = m.id and r.bounced_at >= ${span.since} and r.bounced_at < ${span.until} and r.bounce_kind = 'soft')::int as soft
    from mailbox m where m.workspace_id = ${workspaceId}
    order by m.email`.execute(db);
  return r.rows.map((x) => ({ id: x.id, email: x.email, health: x.health, healthReason: x.health_reason, settings: x.settings, syncError: x.sync_error, hardBounces: Number(x.hard), softBounces: Number(x.soft) }));
}

/**
 * Reply-to-stop of the messages received in the span that stopped or paused their enrollment: how
 * many, and the latency at each percentile's nearest rank (every stop is ranked, however many).
 */
// -- name: figures-reply-to-stop
export async function replyToStop(db: Db, workspaceId: string, span: Span, o: SequenceFilter = {}): Promise<ReplyToStop> {
  const stops = sql`
    from message
    where workspace_id = ${workspaceId} and direction = 'inbound' and stop_latency_ms is not null
      and coalesce(received_at, at) >= ${span.since} and coalesce(received_at, at) < ${span.until}
      ${ofSequence(o, sql`enrollment_id`)}`;
  const count = Number((await sql<{ n: number }>`select count(*)::int as n ${stops}`.execute(db)).rows[0]?.n ?? 0);
  // The three ranks in one sorted pass.
  const ranks = REPLY_TO_STOP_PERCENTILES.map((p) => nearestRank(count, p));
  const at = count === 0 ? [] : (await sql<{ rn: number; ms: number }>`select rn, ms from (select row_number() over (order by stop_latency_ms) as rn, stop_latency_ms as ms ${stops}) r where rn = any(${ranks}::int[])`.execute(db)).rows;
  const msAt = (p: number) => (count === 0 ? null : Number(at.find((x) => Number(x.rn) === nearestRank(count, p))!.ms));
  const [p50Ms, p90Ms, p99Ms] = [msAt(50), msAt(90), msAt(99)];
  return { count, p50Ms, p90Ms, p99Ms };
}

export const CALL_FIGURE_OUTCOMES = ['connected', 'voicemail', 'no_answer', 'busy', 'wrong_number', 'meeting_booked', 'not_interested', 'dropped', 'unlogged'] as const;

/** Calls placed or taken in a window (by when they began), by the outcome they were given. */
export interface CallFigures {
  calls: number;
  /** Per outcome given ('dropped' included); a call with no outcome yet is `unlogged`. */
  outcomes: Record<(typeof CALL_FIGURE_OUTCOMES)[number], number>;
  /** Answered calls and their talk time (answer to end), in ms. */
  answered: number;
  talkMs: number;
}

// -- name: figures-calls
export async function callFigures(db: Db, workspaceId: string, span: Span, o: SequenceFilter = {}): Promise<CallFigures> {
  // One sequence's calls are its enrollments' (a call made outside a sequence belongs to none).
  const rows = await sql<{ outcome: string | null; n: number; answered: number; talk: number }>`
    select outcome, count(*)::int as n, count(answered_at)::int as answered, coalesce(sum(duration_ms), 0)::bigint as talk
    from phone_call
    where workspace_id = ${workspaceId} and created_at >= ${span.since} and created_at < ${span.until}
      ${ofSequence(o, sql`enrollment_id`)}
    group by outcome`.execute(db);
  const outcomes = Object.fromEntries(CALL_FIGURE_OUTCOMES.map((k) => [k, 0])) as CallFigures['outcomes'];
  let calls = 0;
  let answered = 0;
  let talkMs = 0;
  for (const r of rows.rows) {
    calls += r.n;
    answered += r.answered;
    talkMs += Number(r.talk);
    outcomes[(r.outcome ?? 'unlogged') as keyof CallFigures['outcomes']] += r.n;
  }
  return { calls, outcomes, answered, talkMs };
}

/** The headline of a window, as the Analytics screen's totals and `cadenza status` show it. */
export interface Headline {
  window: Window;
  days: DayCounts[];
  totals: Totals;
  /** The same number of days just before the window, for "compared with the previous period". */
  previous: { window: Window; totals: Totals };
  replyToStop: ReplyToStop;
}

export async function headline(db: Db, workspaceId: string, now: number, days: number, zone = 'UTC', o: SequenceFilter = {}): Promise<Headline> {
  return headlineOf(db, workspaceId, await figuresWindow(db, workspaceId, now, days, zone), o);
}

/** The headline of a window already chosen (the weekly report's: the last whole days). */
export async function headlineOf(db: Db, workspaceId: string, window: Window, o: SequenceFilter = {}): Promise<Headline> {
  const { days, zone } = window;
  const before = precedingWindow(window);
  // Both periods in one read (they are contiguous): the rows past the fold are counted once. The
  // reply-to-stop read beside it, at once.
  const [both, stops] = await Promise.all([perDay(db, workspaceId, calendarWindow(window.asOf, 2 * days, zone), o), replyToStop(db, workspaceId, window, o)]);
  const perDays = both.slice(days);
  return {
    window,
    days: perDays,
    totals: totalsOf(perDays),
    previous: { window: before, totals: totalsOf(both.slice(0, days)) },
    replyToStop: stops,
  };
}

export interface FunnelStep {
  sequenceName: string;
  stepKey: string;
  /** The step is no longer in its sequence (it had sends in the window). */
  removed: boolean;
  sent: number;
  replied: number;
}

export interface VariantFigures {
  sequenceName: string;
  stepKey: string;
  variantKey: string;
  sent: number;
  replied: number;
}

/**
 * The Analytics screen's breakdown of the window: each email step still in use (and each removed
 * one with sends), the variants of steps that compare more than one, and how many of the window's
 * replies the steps take (`creditedReplies`: the headline's replies less these came before any
 * email, the route's `unattributedReplies`).
 */
// -- name: figures-funnel
export async function funnel(db: Db, workspaceId: string, w: Window, o: SequenceFilter = {}): Promise<{ funnel: FunnelStep[]; variants: VariantFigures[]; creditedReplies: number }> {
  // Three independent reads at once (a pool of connections on PostgreSQL).
  const [rows, allSteps, allVariants] = await Promise.all([perStep(db, workspaceId, w, o), emailSteps(db, workspaceId), comparedVariants(db, workspaceId)]);
  const mine = (x: { sequence_id: string }) => !o.sequenceId || x.sequence_id === o.sequenceId;
  const steps = new Map(allSteps.filter(mine).map((st) => [st.id, { sequenceName: st.name, stepKey: st.key, removed: false, sent: 0, replied: 0 }]));
  const variants = new Map(allVariants.filter(mine).map((v) => [`${v.step_id}:${v.variant_key}`, { sequenceName: v.sequence_name, stepKey: v.step_key, variantKey: v.variant_key, sent: 0, replied: 0 }]));
  for (const r of rows) {
    let f = steps.get(r.stepId);
    if (!f) steps.set(r.stepId, (f = { sequenceName: r.sequenceName, stepKey: r.stepKey, removed: true, sent: 0, replied: 0 }));
    f.sent += r.sent;
    f.replied += r.replied;
    const v = variants.get(`${r.stepId}:${r.variantKey}`);
    if (v) {
      v.sent += r.sent;
      v.replied += r.replied;
    }
  }
  const credited = [...steps.values()].reduce((n, f) => n + f.replied, 0);
  return { funnel: [...steps.values()], variants: [...variants.values()], creditedReplies: credited };
}

/** Every mailbox with its sends and credited replies (perStep) and its bounces in the window. */
export async function perMailbox(db: Db, workspaceId: string, w: Window): Promise<Array<MailboxRow & { sent: number; replies: number }>> {
  const byMailbox = new Map<string, { sent: number; replies: number }>();
  for (const r of await perStep(db, workspaceId, w, { perMailbox: true })) {
    if (!r.mailboxId) continue;
    const m = byMailbox.get(r.mailboxId) ?? { sent: 0, replies: 0 };
    m.sent += r.sent;
    m.replies += r.replied;
    byMailbox.set(r.mailboxId, m);
  }
  return (await mailboxBounces(db, workspaceId, w)).map((m) => ({ ...m, ...(byMailbox.get(m.id) ?? { sent: 0, replies: 0 }) }));
}

/** Sends and credited replies of each variant over the whole journal, by sequence name, step and variant. */
export async function variantsAllTime(db: Db, workspaceId: string, sequenceId?: string) {
  const byVariant = new Map<string, { sequenceId: string; sequenceName: string; stepKey: string; stepPosition: number; variantKey: string; sent: number; replied: number }>();
  for (const r of await perStep(db, workspaceId, ALL_TIME, sequenceId ? { sequenceId } : {})) {
    if (r.variantKey === null) continue;
    const key = `${r.stepId}:${r.variantKey}`;
    const v = byVariant.get(key) ?? { sequenceId: r.sequenceId, sequenceName: r.sequenceName, stepKey: r.stepKey, stepPosition: r.stepPosition, variantKey: r.variantKey, sent: 0, replied: 0 };
    v.sent += r.sent;
    v.replied += r.replied;
    byVariant.set(key, v);
  }
  return [...byVariant.values()].sort((a, b) => a.sequenceName.localeCompare(b.sequenceName) || a.stepPosition - b.stepPosition || a.variantKey.localeCompare(b.variantKey));
}

/** One experiment arm's exposures grouped by the UTC day their reply window closed (null: still open). */
export interface ExposureRow {
  stepId: string;
  variantId: string;
  /** 'YYYY-MM-DD' of the window's close, null while it is open at `now`. */
  closedDay: string | null;
  /** Enrolled at or after the experiment's declared winner: sent the winner by decision, not by the experiment's draw. */
  afterWinner: boolean;
  exposures: number;
  /** Of those, the ones with the outcome inside the window (counted only once the window closed). */
  replied: number;
  positive: number;
  meetings: number;
}

/**
 * Experiment exposures and their outcomes in the reply window (src/experiments/, docs/experiments.md):
 *
 * - **exposure**: an enrollment's first applied `step_sent` of the experiment's step, with the
 *   variant its send request carried: the arm actually sent, never one recomputed.
 * - **in the window**: an outcome at or after the send and before the send plus the step's reply
 *   window. Each exposure gets the same window, so an arm started earlier has no longer to collect
 *   replies, and a reply that comes after a later step's email still counts for the arm.
 * - **replied**: a journalled `reply`, applied or ignored (a reply to an enrollment already stopped
 *   for another reason is still the prospect's answer); **positive**: an inbound message of the
 *   enrollment whose intent is `interested`, by the server's receipt; **meetings**: `isMeeting`
 *   (a meeting booked, or a call given that outcome, applied or ignored).
 *
 * An exposure enters the rates only once its window has closed at `now`; until then it is counted
 * in `exposures` with a null `closedDay` (the ratio check uses every exposure). Enrollments made
 * after a declared winner (experiment_winner) are marked `afterWinner`: they are no longer part of
 * the experiment.
 */
// -- name: figures-experiment-exposures
export async function experimentExposures(db: Db, workspaceId: string, sequenceId: string, windows: ReadonlyArray<{ stepId: string; days: number }>, now: Date): Promise<ExposureRow[]> {
  if (windows.length === 0) return [];
  return judgedExposures(
    db,
    sql`win as (
      select * from unnest(${windows.map((w) => w.stepId)}::uuid[], ${windows.map((w) => w.days)}::int[]) as w(step_id, days)
    ), sent as (
      select e.enrollment_id, (e.payload->'event'->>'stepId')::uuid as step_id, min(e.at) as sent_at
      from event e join enrollment n on n.id = e.enrollment_id
      where e.workspace_id = ${workspaceId} and n.sequence_id = ${sequenceId} and e.type = 'step_sent'
        and (e.payload->'event'->>'stepId')::uuid in (select step_id from win)
      group by 1, 2
    ), exposure as (
      select s.enrollment_id, s.step_id::text as step_id, r.variant_id::text as variant_id, s.sent_at, s.sent_at + make_interval(days => w.days) as closes_at,
        coalesce(n.created_at >= d.declared_at, false) as after_winner
      from sent s join win w on w.step_id = s.step_id
      join send_request r on r.enrollment_id = s.enrollment_id and r.step_id = s.step_id
      join enrollment n on n.id = s.enrollment_id
      left join experiment_winner d on d.step_id = s.step_id
      where r.variant_id is not null
    )`,
    now,
  );
}

/**
 * Exposures of a sequence's own experiments (sequence/arm-view.ts), with `stepId` the
 * experiment's key and `variantId` the arm's key. The arm is the one stored on the enrollment at
 * enrollment, the one the engine applied. The exposure is the moment the arms first part ways:
 *
 * - for a step whose timing an arm sets (delay, send hours, place in an order), when the engine
 *   planned it: the first applied journal entry naming it as the next step. From then on the arms
 *   differ (one waits two days, the other four); counting from the send instead would drop, unevenly,
 *   the prospects who answered during the longer wait, and bias the test against it;
 * - for a step whose variant an arm sets, its first applied `step_sent`, as for a step's own variants.
 *
 * The earliest of these over the experiment's steps opens the window; outcomes are judged as above.
 * Enrollments made after the experiment's declared winner (sequence_experiment_winner) are marked
 * `afterWinner`, as for a step's.
 */
// -- name: figures-sequence-experiment-exposures
export async function sequenceExperimentExposures(
  db: Db,
  workspaceId: string,
  sequenceId: string,
  experiments: ReadonlyArray<{ key: string; days: number; planned: readonly string[]; sent: readonly string[] }>,
  now: Date,
): Promise<ExposureRow[]> {
  if (experiments.length === 0) return [];
  const marks = experiments.flatMap((x) => [...x.planned.map((id) => [x.key, id, 'planned']), ...x.sent.map((id) => [x.key, id, 'sent'])]);
  if (marks.length === 0) return [];
  return judgedExposures(
    db,
    sql`win as (
      select * from unnest(${experiments.map((x) => x.key)}::text[], ${experiments.map((x) => x.days)}::int[]) as w(key, days)
    ), mark as (
      select * from unnest(${marks.map((m) => m[0])}::text[], ${marks.map((m) => m[1])}::text[], ${marks.map((m) => m[2])}::text[]) as m(key, step_id, how)
    ), first as (
      select m.key, n.id as enrollment_id, n.experiment_arms->>m.key as arm, min(e.at) as sent_at
      from enrollment n
      join mark m on n.experiment_arms ? m.key
      join event e on e.enrollment_id = n.id and e.type not like '%.ignored'
        and ((m.how = 'planned' and e.payload->>'nextStepId' = m.step_id)
          or (m.how = 'sent' and e.type = 'step_sent' and e.payload->'event'->>'stepId' = m.step_id))
      where n.workspace_id = ${workspaceId} and n.sequence_id = ${sequenceId} and n.experiment_arms->>m.key <> ${NO_ARM}
      group by 1, 2, 3
    ), exposure as (
      select f.enrollment_id, f.key as step_id, f.arm as variant_id, f.sent_at, f.sent_at + make_interval(days => w.days) as closes_at,
        coalesce(n.created_at >= d.declared_at, false) as after_winner
      from first f join win w on w.key = f.key
      join enrollment n on n.id = f.enrollment_id
      left join sequence_experiment_winner d on d.sequence_id = ${sequenceId} and d.experiment_key = f.key
    )`,
    now,
  );
}

/** Outcomes in each exposure's window, counted by experiment, arm and the UTC day the window closed; `exposures` is a CTE list ending in `exposure`. */
async function judgedExposures(db: Db, exposures: RawBuilder<unknown>, now: Date): Promise<ExposureRow[]> {
  const r = await sql<{ step_id: string; variant_id: string; closed_day: string | null; after_winner: boolean; n: number; replied: number; positive: number; meetings: number }>`
    with ${exposures}, judged as (
      select x.step_id, x.variant_id, x.after_winner,
        case when x.closes_at <= ${now} then to_char(date_trunc('day', x.closes_at at time zone 'UTC'), 'YYYY-MM-DD') end as closed_day,
        exists (select 1 from event o where o.enrollment_id = x.enrollment_id and o.type in ('reply', 'reply.ignored') and o.at >= x.sent_at and o.at < x.closes_at) as replied,
        exists (select 1 from message m where m.enrollment_id = x.enrollment_id and m.direction = 'inbound' and m.intent = 'interested'
                  and coalesce(m.received_at, m.at) >= x.sent_at and coalesce(m.received_at, m.at) < x.closes_at) as positive,
        exists (select 1 from event o where o.enrollment_id = x.enrollment_id and ${isMeeting(sql`o`)} and o.at >= x.sent_at and o.at < x.closes_at) as meeting
      from exposure x
    )
    select step_id, variant_id, closed_day, after_winner, count(*)::int as n,
      (count(*) filter (where replied))::int as replied, (count(*) filter (where positive))::int as positive, (count(*) filter (where meeting))::int as meetings
    from judged group by 1, 2, 3, 4 order by 1, 2, 3, 4`.execute(db);
  return r.rows.map((x) => ({
    stepId: x.step_id,
    variantId: x.variant_id,
    closedDay: x.closed_day,
    afterWinner: x.after_winner,
    exposures: Number(x.n),
    replied: Number(x.replied),
    positive: Number(x.positive),
    meetings: Number(x.meetings),
  }));
}
