import type { ImapFlow } from 'imapflow';
import { imapError } from './errors.ts';
import type { ImapMessageAt } from './message-key.ts';

/**
 * SELECTs the folder of one message (read-write: the caller changes it) and runs fn on its UID
 * while the folder is held, or says why the message is not there: the folder's UIDVALIDITY is not
 * the key's (the UIDs were renumbered, RFC 3501 2.3.1.1: the key names nothing any more), or the
 * UID is gone (expunged, moved by the user). Throws MAILBOX_UNAVAILABLE or
 * MAILBOX_FOLDER_NOT_FOUND when the server refused.
 */
export async function withMessage<T>(client: ImapFlow, at: ImapMessageAt, fn: (uid: number) => Promise<T>): Promise<{ found: true; value: T } | { found: false; reason: string }> {
  let lock;
  try {
    lock = await client.getMailboxLock(at.path);
  } catch (e) {
    throw imapError(e, `SELECT ${at.path}`);
  }
  try {
    const mailbox = client.mailbox;
    if (mailbox && String(mailbox.uidValidity) !== at.uidValidity) {
      return { found: false, reason: `${at.path} has UIDVALIDITY ${String(mailbox.uidValidity)} now, not ${at.uidValidity}: the key is stale` };
    }
    let uids: number[] | false | undefined;
    try {
      uids = await client.search({ uid: String(at.uid) }, { uid: true });
    } catch (e) {
      throw imapError(e, `UID SEARCH in ${at.path}`);
    }
    if (!Array.isArray(uids)) throw imapError(new Error('the search failed'), `UID SEARCH in ${at.path}`);
    if (!uids.includes(at.uid)) return { found: false, reason: `no message with UID ${at.uid} in ${at.path} (expunged or moved)` };
    return { found: true, value: await fn(at.uid) };
  } finally {
    lock.release();
  }
}
