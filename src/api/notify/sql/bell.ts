/**
 * The bell: a member's in-app and browser notifications, newest first, and the bell's unread
 * count; marking read.
 * Only a member's own rows in their workspace are ever read or changed.
 */
import type { Db } from '../../../store/store.ts';
import type { NotificationKind } from '../kinds.ts';

export interface BellItem {
  id: number;
  kind: NotificationKind;
  title: string;
  body: string;
  link: string;
  occurredAt: Date;
  readAt: Date | null;
  /** In the bell (the member may want a kind in the browser only). */
  inApp: boolean;
  /** Shown by the browser's notifications too. */
  browser: boolean;
}

// -- name: notify-bell
export async function listBell(db: Db, workspaceId: string, userId: string, o: { limit: number; unreadOnly: boolean }): Promise<{ items: BellItem[]; unread: number }> {
  let q = db
    .selectFrom('notification as n')
    .innerJoin('notification_event as e', 'e.id', 'n.event_id')
    .select(['n.id', 'e.kind', 'e.title', 'e.body', 'e.link', 'e.occurred_at', 'n.read_at', 'n.in_app', 'n.browser'])
    .where('n.workspace_id', '=', workspaceId)
    .where('n.user_id', '=', userId)
    .where((eb) => eb.or([eb('n.in_app', '=', true), eb('n.browser', '=', true)]));
  if (o.unreadOnly) q = q.where('n.read_at', 'is', null);
  const rows = await q.orderBy('n.id', 'desc').limit(o.limit).execute();
  const count = await db
    .selectFrom('notification')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('in_app', '=', true)
    .where('read_at', 'is', null)
    .executeTakeFirstOrThrow();
  return {
    items: rows.map((r) => ({ id: r.id, kind: r.kind, title: r.title, body: r.body, link: r.link, occurredAt: r.occurred_at, readAt: r.read_at, inApp: r.in_app, browser: r.browser })),
    unread: Number(count.n),
  };
}

/** Marks the given notifications read (all: every unread one); returns how many changed. */
// -- name: notify-mark-read
export async function markRead(db: Db, workspaceId: string, userId: string, which: number[] | 'all', now: Date): Promise<number> {
  let q = db.updateTable('notification').set({ read_at: now }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).where('read_at', 'is', null);
  if (which !== 'all') {
    if (which.length === 0) return 0;
    q = q.where('id', 'in', which);
  }
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}
