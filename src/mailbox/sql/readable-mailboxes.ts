import { sql, type RawBuilder } from 'kysely';

/**
 * Whose received mail a reader may read: every mailbox's of the workspace, or only the mailboxes
 * the reader's workspace user owns (none when the reader is nobody: a member-role API key). The
 * API decides who is which (api/auth/inbox-scope.ts); every query that shows inbound mail (the
 * inbox, a lead's timeline) filters with this one condition.
 */
export type MailReader = { all: true } | { all: false; workspaceId: string; userId: string | null };

/** The condition on a message's mailbox column that keeps only the mail the reader may read. */
export function readableBy(reader: MailReader, mailboxColumn: string): RawBuilder<boolean> {
  if (reader.all) return sql<boolean>`true`;
  if (reader.userId === null) return sql<boolean>`false`;
  return sql<boolean>`${sql.ref(mailboxColumn)} in (select id from mailbox where workspace_id = ${reader.workspaceId} and user_id = ${reader.userId})`;
}
