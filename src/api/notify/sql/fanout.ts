/**
 * The fan-out's statements: claim events not yet handed out (skip locked, so API processes share
 * them), read the workspace's members and their choices, write each member's notification and
 * Slack post (unique per member and event: a second fan-out of one event adds nothing), and mark
 * the events handed out, all in one transaction.
 */
import { sql } from 'kysely';
import type { Tx } from '../../../store/store.ts';
import type { Channels, NotificationKind } from '../kinds.ts';
import type { Delivery, PlanEvent, PlanMember } from '../plan.ts';

// -- name: notify-claim-events
export async function claimEvents(tx: Tx, limit: number): Promise<Array<PlanEvent & { workspaceId: string }>> {
  const r = await sql<{ id: number; workspace_id: string; kind: NotificationKind; user_id: string | null }>`
    select id, workspace_id, kind, user_id from notification_event
    where fanned_out_at is null
    order by id limit ${limit}
    for update skip locked`.execute(tx);
  return r.rows.map((e) => ({ id: Number(e.id), workspaceId: e.workspace_id, kind: e.kind, userId: e.user_id }));
}

// -- name: notify-members
export async function membersOf(tx: Tx, workspaceId: string): Promise<PlanMember[]> {
  const users = await tx
    .selectFrom('app_user as u')
    .leftJoin('notification_setting as s', (j) => j.onRef('s.workspace_id', '=', 'u.workspace_id').onRef('s.user_id', '=', 'u.id'))
    .select(['u.id', 'u.role', 's.scope', 's.slack_url_sealed', 's.slack_disabled_at'])
    .where('u.workspace_id', '=', workspaceId)
    .orderBy('u.id')
    .execute();
  const prefs = await tx.selectFrom('notification_preference').selectAll().where('workspace_id', '=', workspaceId).execute();
  const byUser = new Map<string, Partial<Record<NotificationKind, Channels>>>();
  for (const p of prefs) {
    const m = byUser.get(p.user_id) ?? {};
    m[p.kind] = { inApp: p.in_app, browser: p.browser, email: p.email, slack: p.slack };
    byUser.set(p.user_id, m);
  }
  return users.map((u) => ({ userId: u.id, role: u.role, scope: u.scope ?? 'mine', channels: byUser.get(u.id) ?? {}, hasSlack: u.slack_url_sealed != null && u.slack_disabled_at == null }));
}

// -- name: notify-write-deliveries
export async function writeDeliveries(tx: Tx, workspaceId: string, ds: readonly Delivery[], now: Date): Promise<void> {
  const bell = ds.filter((d) => d.inApp || d.browser || d.email);
  if (bell.length) {
    await tx
      .insertInto('notification')
      .values(bell.map((d) => ({ workspace_id: workspaceId, user_id: d.userId, event_id: d.eventId, in_app: d.inApp, browser: d.browser, email_state: d.email ? ('pending' as const) : ('none' as const), created_at: now })))
      .onConflict((oc) => oc.columns(['user_id', 'event_id']).doNothing())
      .execute();
  }
  const slack = ds.filter((d) => d.slack);
  if (slack.length) {
    await tx
      .insertInto('notification_slack')
      .values(slack.map((d) => ({ workspace_id: workspaceId, user_id: d.userId, event_id: d.eventId, next_attempt_at: now })))
      .onConflict((oc) => oc.columns(['user_id', 'event_id']).doNothing())
      .execute();
  }
}

export async function markFannedOut(tx: Tx, ids: number[], now: Date): Promise<void> {
  if (ids.length) await tx.updateTable('notification_event').set({ fanned_out_at: now }).where('id', 'in', ids).execute();
}
