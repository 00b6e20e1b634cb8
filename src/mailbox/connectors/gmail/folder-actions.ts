import { gmailApi, type GmailApiConfig } from '../../providers/gmail/api.ts';
import { folderResult } from '../api-folder-result.ts';
import type { FolderActions } from '../connector.ts';

/**
 * The folder actions of a Gmail mailbox (connector.ts FolderActions): one users.messages.modify
 * each (providers/gmail/messages-modify.ts), on the Gmail message id the sync keys messages by,
 * which a label change keeps.
 *   moveToInbox  +INBOX −SPAM ("Not spam"; Gmail's folders are labels)
 *   flag         +STARRED +IMPORTANT
 *   markRead     −UNREAD
 * They need the gmail.modify scope, which Google classes as restricted (an app used beyond its own
 * Workspace or test users needs Google's verification and a security assessment; a self-hosted
 * Cadenza registers its own OAuth client, docs/mailboxes.md): a grant made without it is answered
 * 403 insufficientPermissions, which is `forbidden` here.
 */
const grantCodes = new Set(['insufficientPermissions', 'PERMISSION_DENIED', 'forbidden', 'domainPolicy', 'authError']);

export function gmailFolderActions(cfg: GmailApiConfig): FolderActions {
  const api = gmailApi(cfg);
  const modify = async (key: string, add: string[], remove: string[], signal?: AbortSignal) =>
    folderResult(await api.modify({ id: key, add, remove }, signal ? { signal } : {}), 'Gmail API', grantCodes, (m) => m.id);
  return {
    moveToInbox: (key, o) => modify(key, ['INBOX'], ['SPAM'], o?.signal),
    flag: (key, o) => modify(key, ['STARRED', 'IMPORTANT'], [], o?.signal),
    markRead: (key, o) => modify(key, [], ['UNREAD'], o?.signal),
    // Nothing to release: every request has its own connection (providers/http.ts).
    close: async () => undefined,
  };
}
