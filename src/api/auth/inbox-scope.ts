import { sql, type RawBuilder } from 'kysely';
import type { WorkspaceAccess } from './access.ts';

/**
 * Whose received mail the caller may read, as a condition on a message's mailbox column: every
 * mailbox's (admins, owners, members granted 'all'), only the caller's own mailboxes' (other
 * members), or none (a member-role API key, which belongs to nobody). Every route that shows
 * inbound mail (the inbox, a lead's timeline) filters with this one rule.
 */
export function inboxVisible(ws: WorkspaceAccess, mailboxColumn = 'mailbox_id'): RawBuilder<boolean> {
  if (ws.inboxScope === 'all') return sql<boolean>`true`;
  if (ws.userId === null) return sql<boolean>`false`;
  return sql<boolean>`${sql.ref(mailboxColumn)} in (select id from mailbox where workspace_id = ${ws.workspaceId} and user_id = ${ws.userId})`;
}
