import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../store/store.ts';

/**
 * What `cadenza status` shows of a workspace: what it holds (leads, suppressed addresses, live
 * mailboxes, sequences, open tasks), its enrollments and send requests by state, and its timers
 * (live enrollments due by now, and due within the next hour). One count per query, run together.
 */
export async function workspaceStatus(db: Db, workspaceId: string, now: number) {
  const at = new Date(now);
  const hour = new Date(now + 3_600_000);
  const count = async (q: RawBuilder<{ n: number }>) => Number((await q.execute(db)).rows[0]?.n ?? 0);
  const [leads, suppressed, mailboxes, sequences, dueNow, dueHour, openTasks] = await Promise.all([
    count(sql`select count(*)::int as n from lead where workspace_id = ${workspaceId}`),
    count(sql`select count(*)::int as n from suppression where workspace_id = ${workspaceId}`),
    count(sql`select count(*)::int as n from mailbox where workspace_id = ${workspaceId} and removed_at is null`),
    count(sql`select count(*)::int as n from sequence where workspace_id = ${workspaceId}`),
    count(sql`select count(*)::int as n from enrollment where workspace_id = ${workspaceId} and state in ('active','paused') and due_at <= ${at}`),
    count(sql`select count(*)::int as n from enrollment where workspace_id = ${workspaceId} and state in ('active','paused') and due_at > ${at} and due_at <= ${hour}`),
    count(sql`select count(*)::int as n from task where workspace_id = ${workspaceId} and state = 'open'`),
  ]);
  const enrollments = (await sql<{ state: string; n: number }>`select state, count(*)::int as n from enrollment where workspace_id = ${workspaceId} group by state order by state`.execute(db)).rows;
  const sendRequests = (await sql<{ state: string; n: number }>`select state, count(*)::int as n from send_request where workspace_id = ${workspaceId} group by state order by state`.execute(db)).rows;
  return { leads, suppressed, mailboxes, sequences, dueNow, dueHour, openTasks, enrollments, sendRequests };
}
