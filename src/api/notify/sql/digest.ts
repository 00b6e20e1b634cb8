/**
 * The digest's statements: who has notifications waiting for mail, the claim of one member's
 * digest (a lease on notification_setting.digest_next_at, so two API processes never mail the same
 * member at once), the items, and the outcome.
 */
import { sql } from 'kysely';
import type { Db } from '../../../store/store.ts';
import type { BellItem } from './bell.ts';

export interface Waiting {
  workspaceId: string;
  userId: string;
  email: string;
  workspaceName: string;
  everyHours: number;
  nextAt: Date | null;
  oldestPending: Date;
}

// -- name: notify-digest-waiting
export async function waitingDigests(db: Db): Promise<Waiting[]> {
  const r = await sql<{ workspace_id: string; user_id: string; email: string; name: string; every: number | null; next_at: Date | null; oldest: Date }>`
    select n.workspace_id, n.user_id, u.email, w.name, s.digest_every_hours as every, s.digest_next_at as next_at, min(n.created_at) as oldest
    from notification n
    join app_user u on u.id = n.user_id and u.workspace_id = n.workspace_id
    join workspace w on w.id = n.workspace_id
    left join notification_setting s on s.workspace_id = n.workspace_id and s.user_id = n.user_id
    where n.email_state = 'pending'
    group by n.workspace_id, n.user_id, u.email, w.name, s.digest_every_hours, s.digest_next_at
    order by n.workspace_id, n.user_id`.execute(db);
  return r.rows.map((x) => ({ workspaceId: x.workspace_id, userId: x.user_id, email: x.email, workspaceName: x.name, everyHours: Number(x.every ?? 24), nextAt: x.next_at, oldestPending: new Date(x.oldest) }));
}

/** Takes the member's digest for `leaseMs` (a process that dies mid-send leaves it to the next after that). */
// -- name: notify-digest-claim
export async function claimDigest(db: Db, workspaceId: string, userId: string, now: Date, leaseUntil: Date): Promise<boolean> {
  const r = await sql<{ user_id: string }>`
    insert into notification_setting (workspace_id, user_id, digest_next_at, updated_at)
    values (${workspaceId}, ${userId}, ${leaseUntil}, ${now})
    on conflict (workspace_id, user_id) do update set digest_next_at = excluded.digest_next_at
      where notification_setting.digest_next_at is null or notification_setting.digest_next_at <= ${now}
    returning user_id`.execute(db);
  return r.rows.length === 1;
}

/** A notification as the digest lists it: the bell's, less its read and display marks. */
export type DigestItem = Omit<BellItem, 'readAt' | 'inApp' | 'browser'>;

// -- name: notify-digest-items
export async function digestItems(db: Db, workspaceId: string, userId: string): Promise<DigestItem[]> {
  const rows = await db
    .selectFrom('notification as n')
    .innerJoin('notification_event as e', 'e.id', 'n.event_id')
    .select(['n.id', 'e.kind', 'e.title', 'e.body', 'e.link', 'e.occurred_at'])
    .where('n.workspace_id', '=', workspaceId)
    .where('n.user_id', '=', userId)
    .where('n.email_state', '=', 'pending')
    .orderBy('n.id')
    .limit(500)
    .execute();
  return rows.map((r) => ({ id: r.id, kind: r.kind, title: r.title, body: r.body, link: r.link, occurredAt: r.occurred_at }));
}

// -- name: notify-digest-sent
export async function digestSent(db: Db, workspaceId: string, userId: string, ids: number[], now: Date): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('notification').set({ email_state: 'sent' }).where('id', 'in', ids).execute();
    await tx.updateTable('notification_setting').set({ digest_last_at: now, digest_next_at: null, digest_attempts: 0, digest_error: null }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
  });
}

/** Records the failure and when to try again (the retry time from the attempts so far, this one included). */
// -- name: notify-digest-failed
export async function digestFailed(db: Db, workspaceId: string, userId: string, error: string, retryAt: (attempts: number) => Date): Promise<void> {
  const r = await db
    .updateTable('notification_setting')
    .set((eb) => ({ digest_attempts: eb('digest_attempts', '+', 1), digest_error: error }))
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .returning('digest_attempts')
    .executeTakeFirst();
  await db.updateTable('notification_setting').set({ digest_next_at: retryAt(r?.digest_attempts ?? 1) }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
}
