import type { MailReader } from '../../mailbox/sql/readable-mailboxes.ts';
import type { WorkspaceAccess } from './access.ts';

/**
 * Whose received mail the caller may read: every mailbox's (admins, owners, members granted
 * 'all'), only the caller's own mailboxes' (other members), or none (a member-role API key, which
 * belongs to nobody). The query files apply it as one condition (mailbox/sql/readable-mailboxes.ts)
 * on every view of inbound mail (the inbox, a lead's timeline).
 */
export function inboxReader(ws: WorkspaceAccess): MailReader {
  return ws.inboxScope === 'all' ? { all: true } : { all: false, workspaceId: ws.workspaceId, userId: ws.userId };
}
