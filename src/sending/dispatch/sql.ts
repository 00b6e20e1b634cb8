/**
 * The dispatcher's named queries, each one statement. What counts against a budget is written
 * once, here: a request handed to a server, i.e. claimed (claimed_at set by reserveSlot) and in
 * one of COUNTED_STATES. 'failed' counts because a permanent failure is the server's refusal of a
 * message it was handed, and providers count those against a sender too; 'queued' (sent back by a
 * transient failure or an unknown one not found in Sent) and 'cancelled' (refused before the
 * transport) do not.
 */
import { sql } from 'kysely';
import type { PacedMailboxRow as MailboxRow } from '../../mailbox/pacing/mailbox.ts';
import { calendarColumns } from '../../sequence/sql/calendar-country.ts';
export { inTx, type Conn } from '../../store/in-tx.ts';
export type { MailboxRow };

export const COUNTED_STATES = ['in_flight', 'sent', 'unknown', 'possibly_sent', 'failed'] as const;

/** Advisory lock classes (the first key of pg_advisory_xact_lock(int, int)); the second is hashtext(workspace id). */
export const PLAN_LOCK = 0x0cade1;
export const RESERVE_LOCK = 0x0cade2;

// -- name: plan-mailboxes
export const mailboxesSql = (ids: string[]) => sql<MailboxRow>`
  select m.id, m.workspace_id, m.daily_cap, m.hourly_cap, m.ramp, m.ramp_started_at, m.created_at, m.time_zone, m.settings,
         m.health, m.health_reason, w.time_zone as ws_zone, w.settings as ws_settings, w.daily_cap as ws_cap,
         wm.cap_factor, wm.cap_reason
  from mailbox m join workspace w on w.id = m.workspace_id
  left join warmup_member wm on wm.mailbox_id = m.id
  where m.id = any(${ids}::uuid[])`;

// -- name: mailbox-workspaces
export const mailboxWorkspacesSql = (ids: string[]) => sql<{ id: string; workspace_id: string }>`
  select id, workspace_id from mailbox where id = any(${ids}::uuid[])`;

// -- name: workspace-mailboxes
// The mailboxes of the workspaces that have a shared cap: those are planned together.
export const capWorkspaceMailboxesSql = (workspaceIds: string[]) => sql<{ id: string; workspace_id: string }>`
  select m.id, m.workspace_id from mailbox m join workspace w on w.id = m.workspace_id
  where m.workspace_id = any(${workspaceIds}::uuid[])
    and (w.daily_cap is not null or exists (select 1 from sequence s where s.workspace_id = w.id and s.daily_cap is not null))`;

// -- name: mailbox-usage
// The counted sends of the mailboxes since `since` (the planner needs yesterday's too: the gap and
// the rolling hour reach across midnight). A claimed warmup mail counts like a campaign send: warmup
// and campaigns share the mailbox's bucket (warmup/send/).
export const usageSql = (ids: string[], since: number) => sql<{ mailbox_id: string; claimed_at: Date }>`
  select mailbox_id, claimed_at from send_request
  where mailbox_id = any(${ids}::uuid[]) and claimed_at >= ${new Date(since)}
    and state in ('in_flight', 'sent', 'unknown', 'possibly_sent', 'failed')
  union all
  select sender_mailbox_id as mailbox_id, claimed_at from warmup_mail
  where sender_mailbox_id = any(${ids}::uuid[]) and claimed_at >= ${new Date(since)}`;

// -- name: workspace-usage
// Counted sends of whole workspaces since `since`, with their sequence: the shared caps.
export const workspaceUsageSql = (workspaceIds: string[], since: number) => sql<{ workspace_id: string; sequence_id: string; claimed_at: Date }>`
  select r.workspace_id, e.sequence_id, r.claimed_at
  from send_request r join enrollment e on e.id = r.enrollment_id
  where r.workspace_id = any(${workspaceIds}::uuid[]) and r.claimed_at >= ${new Date(since)}
    and r.state in ('in_flight', 'sent', 'unknown', 'possibly_sent', 'failed')`;

export interface QueuedRow {
  id: string;
  mailbox_id: string;
  due_at: Date;
  send_at: Date | null;
  planned_at: Date | null;
  plan_note: string | null;
  sequence_id: string;
  time_zone: string;
  country: string | null;
  region: string | null;
}

// -- name: queued-requests
// Everything the planner needs about each queued request: its due time and its prospect's
// calendar (the enrollment's zone, the holidays country and region of sequence/sql/calendar-country.ts; the window comes with the sequence).
export const queuedSql = (ids: string[]) => sql<QueuedRow>`
  select r.id, r.mailbox_id, r.due_at, r.send_at, r.planned_at, r.plan_note, e.sequence_id, e.time_zone, ${calendarColumns}
  from send_request r
  join enrollment e on e.id = r.enrollment_id
  join lead l on l.id = e.lead_id
  where r.mailbox_id = any(${ids}::uuid[]) and r.state = 'queued'`;

export interface SequenceRow {
  id: string;
  workspace_id: string;
  send_window: unknown;
  settings: unknown;
  daily_cap: number | null;
}

// -- name: sequences
export const sequencesSql = (ids: string[]) => sql<SequenceRow>`
  select id, workspace_id, send_window, settings, daily_cap from sequence where id = any(${ids}::uuid[])`;

// -- name: capped-sequences
export const cappedSequencesSql = (workspaceIds: string[]) => sql<SequenceRow>`
  select id, workspace_id, send_window, settings, daily_cap from sequence
  where workspace_id = any(${workspaceIds}::uuid[]) and daily_cap is not null`;

// -- name: write-plan
// Only requests still queued, and only those no one holds: a claim or a cancel in progress has the
// row locked and is about to take it out of the queue, so it is skipped rather than waited for
// (waiting while holding other rows could deadlock with the engine's cancels).
export const writePlanSql = (ids: string[], sendAt: Array<string | null>, notes: Array<string | null>, now: number) => sql`
  with u as (
    select * from unnest(${ids}::uuid[], ${sendAt}::timestamptz[], ${notes}::text[]) as u(id, send_at, note)
  ), l as (
    select r.id from send_request r where r.id = any(${ids}::uuid[]) and r.state = 'queued' for update skip locked
  )
  update send_request r set send_at = u.send_at, planned_at = ${new Date(now)}, plan_note = u.note
  from u join l on l.id = u.id
  where r.id = u.id`;

// -- name: record-plan
export const recordPlanSql = (ids: string[], replanAt: Array<string | null>, planned: number[], unplaced: number[], now: number) => sql`
  insert into mailbox_plan (mailbox_id, planned_at, replan_at, planned, unplaced)
  select u.id, ${new Date(now)}, u.replan_at, u.planned, u.unplaced
  from unnest(${ids}::uuid[], ${replanAt}::timestamptz[], ${planned}::int[], ${unplaced}::int[]) as u(id, replan_at, planned, unplaced)
  on conflict (mailbox_id) do update
    set planned_at = excluded.planned_at, replan_at = excluded.replan_at, planned = excluded.planned, unplaced = excluded.unplaced`;

// -- name: mailboxes-to-plan
// The first part reads the send_request_unplanned partial index (same predicate, word for word).
export const toPlanSql = (now: number, limit: number) => sql<{ mailbox_id: string }>`
  select mailbox_id from (
    select distinct mailbox_id from send_request
    where state = 'queued' and ((send_at is null and planned_at is null) or send_at < due_at) and mailbox_id is not null
    union
    select mailbox_id from mailbox_plan where replan_at <= ${new Date(now)}
  ) x
  order by mailbox_id
  limit ${limit}`;

// -- name: lock-workspace
export const lockSql = (cls: number, workspaceId: string) => sql`select pg_advisory_xact_lock(${cls}::int, hashtext(${workspaceId}))`;
