import { isCadenzaError } from '../../../common/errors.ts';
import type { Logger } from '../../../common/logger.ts';
import { addFlags } from '../../imap/add-flags.ts';
import type { ImapAccount } from '../../imap/account.ts';
import { withImap } from '../../imap/connect.ts';
import { imapMessageKey, parseImapMessageKey, type ImapMessageAt } from '../../imap/message-key.ts';
import { moveMessage } from '../../imap/move-message.ts';
import { withMessage } from '../../imap/open-message.ts';
import type { FolderActions } from '../connector.ts';
import type { FolderActionResult } from '../outcomes.ts';

/**
 * The folder actions of an SMTP/IMAP mailbox (connector.ts FolderActions), one IMAP connection
 * per action (the warmup feature acts a few times an hour, not worth a connection kept open). The
 * key is the sync's ('<folder>:<uidvalidity>:<uid>', imap/message-key.ts):
 *   moveToInbox  UID MOVE to INBOX (imap/move-message.ts: RFC 6851, or imapflow's COPY + \Deleted
 *                + EXPUNGE fallback); the new key is the copy's UID in INBOX when the server says it
 *                (COPYUID). A key already in INBOX is done without a command.
 *   flag         UID STORE +FLAGS (\Flagged)
 *   markRead     UID STORE +FLAGS (\Seen)
 * A key whose folder changed UIDVALIDITY, or whose UID is gone, is not_found; a server that
 * cannot be reached or refuses the credentials is unavailable (the sender and sync see the same
 * trouble and report it).
 */
export function imapFolderActions(account: ImapAccount, deps: { logger?: Logger } = {}): FolderActions {
  const act = async (key: string, what: string, fn: (at: ImapMessageAt) => Promise<FolderActionResult>): Promise<FolderActionResult> => {
    const at = parseImapMessageKey(key);
    if (!at) return { status: 'not_found', reason: `'${key}' is not an IMAP message key` };
    try {
      return await fn(at);
    } catch (e) {
      if (isCadenzaError(e, 'MAILBOX_FOLDER_NOT_FOUND')) return { status: 'not_found', reason: e.message };
      if (isCadenzaError(e, 'INVALID_INPUT')) throw e;
      deps.logger?.warn({ err: { message: (e as Error).message }, what }, 'imap folder action failed');
      return { status: 'unavailable', reason: (e as Error).message };
    }
  };
  const store = (key: string, flag: string) =>
    act(key, `+FLAGS ${flag}`, async (at) => {
      const r = await withImap(account, (c) => withMessage(c, at, (uid) => addFlags(c, uid, [flag])));
      return r.found ? { status: 'done', key } : { status: 'not_found', reason: r.reason };
    });
  return {
    moveToInbox: (key) =>
      act(key, 'move to INBOX', async (at) => {
        // RFC 3501 5.1: INBOX is case-insensitive, every other name is the server's.
        if (at.path.toUpperCase() === 'INBOX') return { status: 'done', key };
        const r = await withImap(account, (c) => withMessage(c, at, (uid) => moveMessage(c, uid, 'INBOX')));
        if (!r.found) return { status: 'not_found', reason: r.reason };
        const { uid, uidValidity } = r.value;
        return { status: 'done', key: uid !== null && uidValidity !== null ? imapMessageKey('INBOX', uidValidity, uid) : null };
      }),
    flag: (key) => store(key, '\\Flagged'),
    markRead: (key) => store(key, '\\Seen'),
    // Nothing is held open between actions.
    close: async () => undefined,
  };
}
