import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';

const DAY_MS = 86_400_000;

/**
 * Every figure of the analytics screen, from one definition on one clock (issue 11: a headline of
 * 22 sends beside a funnel of 345, counted from two sources over two spans).
 *
 * - The source is the engine's journal (`event`): a send is an applied `step_sent`, a reply an
 *   applied `reply`, and so on. Per step and per variant, the same rows are grouped further: a
 *   send by its step (and that step's send request's variant), a reply by the last email sent to
 *   the enrollment before it (a call step in between does not take the credit). So the headline,
 *   the chart, the funnel and the variants add up to the same totals.
 * - The span is the last `days` UTC days up to `asOf`: the later of the clock's now and the
 *   workspace's latest journal entry. A demo's accelerated clock stamps its work days ahead of the
 *   real date; once it ends, the API reads the real clock again, and a window ending "today" would
 *   miss what the demo did.
 * - Durations are real milliseconds (message.stop_latency_ms, measured once by ingestion).
 */
export interface Window {
  days: number;
  firstDay: number;
  since: Date;
  until: Date;
  asOf: number;
}

// -- name: analytics-window
export async function analyticsWindow(db: Db, workspaceId: string, now: number, days: number): Promise<Window> {
  const r = await sql<{ latest: Date | null }>`select max(at) as latest from event where workspace_id = ${workspaceId}`.execute(db);
  const latest = r.rows[0]?.latest ? new Date(r.rows[0].latest).getTime() : null;
  const asOf = latest !== null && latest > now ? latest : now;
  const lastDay = Math.floor(asOf / DAY_MS);
  const firstDay = lastDay - days + 1;
  return { days, firstDay, since: new Date(firstDay * DAY_MS), until: new Date((lastDay + 1) * DAY_MS), asOf };
}

// -- name: analytics-per-day
export async function perDay(db: Db, workspaceId: string, w: Window) {
  const counts = await sql<{ day: string; type: string; n: number }>`
    select to_char(date_trunc('day', at at time zone 'UTC'), 'YYYY-MM-DD') as day, type, count(*)::int as n
    from event
    where workspace_id = ${workspaceId} and at >= ${w.since} and at < ${w.until}
      and type in ('step_sent', 'reply', 'bounce', 'unsubscribe')
      and (type <> 'step_sent' or ${emailStep(sql`(payload->'event'->>'stepId')`)})
    group by 1, 2`.execute(db);
  const days = Array.from({ length: w.days }, (_, i) => ({ day: new Date((w.firstDay + i) * DAY_MS).toISOString().slice(0, 10), sends: 0, replies: 0, bounces: 0, unsubscribes: 0 }));
  const byDay = new Map(days.map((d) => [d.day, d]));
  const field = { step_sent: 'sends', reply: 'replies', bounce: 'bounces', unsubscribe: 'unsubscribes' } as const;
  for (const c of counts.rows) {
    const d = byDay.get(c.day);
    const f = field[c.type as keyof typeof field];
    if (d && f) d[f] += Number(c.n);
  }
  return days;
}

/** Whether a step id (text) is an email step: only emails count as sends. */
function emailStep(stepIdText: ReturnType<typeof sql>) {
  return sql`exists (select 1 from step k where k.id = (${stepIdText})::uuid and k.kind = 'email')`;
}

/**
 * Sends and credited replies per email step and variant in the window: one row per (step,
 * variant), variant null for a step without variants. The funnel sums a step's rows.
 */
// -- name: analytics-per-step
export async function perStep(db: Db, workspaceId: string, w: Window) {
  const r = await sql<{ sequence_name: string; step_key: string; step_id: string; archived: boolean; variant_key: string | null; variants: number; sent: number; replied: number }>`
    with sends as (
      select e.enrollment_id, (e.payload->'event'->>'stepId')::uuid as step_id
      from event e
      where e.workspace_id = ${workspaceId} and e.type = 'step_sent' and e.at >= ${w.since} and e.at < ${w.until}
    ), replies as (
      select (select (s.payload->'event'->>'stepId')::uuid from event s
               where s.enrollment_id = e.enrollment_id and s.type = 'step_sent' and s.at <= e.at
                 and ${emailStep(sql`(s.payload->'event'->>'stepId')`)}
               order by s.at desc, s.id desc limit 1) as step_id,
             e.enrollment_id
      from event e
      where e.workspace_id = ${workspaceId} and e.type = 'reply' and e.at >= ${w.since} and e.at < ${w.until}
    ), counted as (
      select enrollment_id, step_id, 1 as sent, 0 as replied from sends
      union all
      select enrollment_id, step_id, 0, 1 from replies where step_id is not null
    )
    select q.name as sequence_name, st.key as step_key, st.id as step_id, st.archived_at is not null as archived, v.key as variant_key,
           (select count(*)::int from variant o where o.step_id = st.id and o.archived_at is null) as variants,
           sum(c.sent)::int as sent, sum(c.replied)::int as replied
    from counted c
    join step st on st.id = c.step_id and st.kind = 'email'
    join sequence q on q.id = st.sequence_id
    left join send_request r on r.enrollment_id = c.enrollment_id and r.step_id = c.step_id
    left join variant v on v.id = r.variant_id
    group by q.name, q.created_at, st.key, st.id, st.position, st.archived_at, v.key
    order by q.created_at, st.position, v.key`.execute(db);
  return r.rows;
}

/** Email steps of the workspace's sequences that are still in use, for funnel rows with nothing yet. */
// -- name: analytics-email-steps
export async function emailSteps(db: Db, workspaceId: string) {
  return db
    .selectFrom('step as st')
    .innerJoin('sequence as s', 's.id', 'st.sequence_id')
    .select(['s.name', 'st.key', 'st.id'])
    .where('s.workspace_id', '=', workspaceId)
    .where('st.archived_at', 'is', null)
    .where('st.kind', '=', 'email')
    .orderBy('s.created_at')
    .orderBy('st.position')
    .execute();
}

/** The variants of email steps with more than one live variant (the A/B comparison's rows). */
// -- name: analytics-variants
export async function comparedVariants(db: Db, workspaceId: string) {
  const r = await sql<{ sequence_name: string; step_key: string; step_id: string; variant_key: string }>`
    select s.name as sequence_name, st.key as step_key, st.id as step_id, v.key as variant_key
    from variant v join step st on st.id = v.step_id join sequence s on s.id = st.sequence_id
    where s.workspace_id = ${workspaceId} and v.archived_at is null and st.archived_at is null
      and (select count(*) from variant o where o.step_id = v.step_id and o.archived_at is null) > 1
    order by s.created_at, st.position, v.key`.execute(db);
  return r.rows;
}

/** Reply to stop, real ms, of the replies ingestion stopped an enrollment for in the window. */
// -- name: analytics-reply-to-stop
export async function replyToStopMs(db: Db, workspaceId: string, w: Window): Promise<number[]> {
  const r = await sql<{ ms: number }>`
    select stop_latency_ms as ms from message
    where workspace_id = ${workspaceId} and direction = 'inbound' and label = 'human_reply' and stop_latency_ms is not null
      and coalesce(received_at, at) >= ${w.since} and coalesce(received_at, at) < ${w.until}
    order by 1
    limit 100000`.execute(db);
  return r.rows.map((x) => Number(x.ms));
}
