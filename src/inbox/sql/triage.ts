/**
 * The team's triage of an inbound message (inbox_state: assignee, snooze, done) and each person's
 * read marks (inbox_read). The routes check first that the caller may read the message (its
 * mailbox is in their inbox scope); these statements take that as given.
 */
import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';

/** Marks messages read or unread for one person. */
// -- name: inbox-mark-read
export async function markRead(db: Db, userId: string, messageIds: readonly string[], read: boolean, now: Date): Promise<void> {
  if (messageIds.length === 0) return;
  if (!read) {
    await db.deleteFrom('inbox_read').where('user_id', '=', userId).where('message_id', 'in', messageIds).execute();
    return;
  }
  await db
    .insertInto('inbox_read')
    .values(messageIds.map((message_id) => ({ message_id, user_id: userId, read_at: now })))
    .onConflict((oc) => oc.columns(['user_id', 'message_id']).doNothing())
    .execute();
}

/** A change of triage: a field left out stays as it is; null clears it. */
export interface TriageChange {
  assigneeUserId?: string | null;
  snoozedUntil?: Date | null;
  done?: boolean;
}

/**
 * Applies a change to one message's triage, creating its row on first use. Done and snoozed are
 * one or the other: marking done ends a snooze, and a snooze (or moving back to the inbox) undoes
 * done. Returns the state after.
 */
// -- name: inbox-set-state
export async function setTriage(db: Db, workspaceId: string, messageId: string, change: TriageChange, now: Date) {
  const doneAt = change.done === undefined ? undefined : change.done ? now : null;
  const snoozedUntil = change.done === true ? null : change.snoozedUntil;
  const clearsDone = change.snoozedUntil !== undefined && change.snoozedUntil !== null;
  // Waking a snooze by hand (snoozedUntil null) ends it now, as if its time had come: the message
  // goes back to the top of the inbox, listed from this moment (src/inbox/sql/list.ts). Done ends
  // a snooze outright.
  const wakes = change.done !== true && change.snoozedUntil === null;
  const set = {
    ...(change.assigneeUserId !== undefined ? { assignee_user_id: change.assigneeUserId } : {}),
    ...(wakes
      ? { snoozed_until: sql<Date | null>`case when inbox_state.snoozed_until > ${now} then ${now}::timestamptz else inbox_state.snoozed_until end` }
      : snoozedUntil !== undefined
        ? { snoozed_until: snoozedUntil }
        : {}),
    ...(doneAt !== undefined ? { done_at: doneAt } : clearsDone ? { done_at: null } : {}),
    updated_at: now,
  };
  return db
    .insertInto('inbox_state')
    .values({ message_id: messageId, workspace_id: workspaceId, assignee_user_id: null, snoozed_until: null, done_at: null, ...set, ...(wakes ? { snoozed_until: null } : {}) })
    .onConflict((oc) => oc.column('message_id').doUpdateSet(set))
    .returning(['assignee_user_id', 'snoozed_until', 'done_at'])
    .executeTakeFirstOrThrow();
}

/** Whether the person has read the message. */
export async function hasRead(db: Db, userId: string, messageId: string): Promise<boolean> {
  return (await db.selectFrom('inbox_read').select('read_at').where('user_id', '=', userId).where('message_id', '=', messageId).executeTakeFirst()) !== undefined;
}

/**
 * Whether the member `userId` may read mail of the mailbox: the rule of the caller's own scope
 * (api/auth/access.ts: owners, admins and members granted 'all' read every mailbox; other members
 * their own). An assignee who could not open the message could not work it.
 */
export async function assigneeCanRead(db: Db, workspaceId: string, userId: string, mailboxId: string | null): Promise<'ok' | 'not_member' | 'out_of_scope'> {
  const u = await db.selectFrom('app_user').select(['role', 'inbox_scope']).where('workspace_id', '=', workspaceId).where('id', '=', userId).executeTakeFirst();
  if (!u) return 'not_member';
  if (u.role !== 'member' || u.inbox_scope === 'all') return 'ok';
  if (!mailboxId) return 'out_of_scope';
  const mb = await db.selectFrom('mailbox').select('user_id').where('id', '=', mailboxId).executeTakeFirst();
  return mb?.user_id === userId ? 'ok' : 'out_of_scope';
}
