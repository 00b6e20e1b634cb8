import type { ImapFlow } from 'imapflow';
import { imapError } from './errors.ts';

/**
 * The two ways a Sent copy written before its handover (with a pending keyword, SentProof
 * 'copy_first' in connectors/outcomes.ts) is settled once the server has answered:
 *   'sent'     the server said 250: the keyword is removed (UID STORE -FLAGS, RFC 3501 6.4.6),
 *              and the copy is an ordinary Sent message.
 *   'not_sent' the server certainly refused it (4xx, 5xx, a bounce at RCPT): the copy is removed
 *              (UID STORE +FLAGS \Deleted, then UID EXPUNGE, RFC 4315), so that a later search
 *              reads its absence as "never handed over" and a retry appends a fresh one.
 * The copy is named by its UID from APPENDUID (RFC 4315 UIDPLUS; Dovecot, Gmail, Exchange and
 * most hosts have it). Throws MAILBOX_UNAVAILABLE when the server refused: the caller logs it and
 * the copy stays pending, which a later search reads as "possibly sent", never as "not sent".
 */
export async function settleSentCopy(
  client: ImapFlow,
  copy: { folder: string; uid: number },
  keyword: string,
  outcome: 'sent' | 'not_sent',
): Promise<void> {
  let lock;
  try {
    lock = await client.getMailboxLock(copy.folder);
  } catch (e) {
    throw imapError(e, `SELECT ${copy.folder}`);
  }
  try {
    const range = String(copy.uid);
    // UID EXPUNGE (UIDPLUS) removes only this message, never another client's \Deleted ones.
    const ok =
      outcome === 'sent'
        ? await client.messageFlagsRemove(range, [keyword], { uid: true })
        : await client.messageDelete(range, { uid: true });
    if (!ok) throw new Error(outcome === 'sent' ? 'the server refused the STORE' : 'the server refused the delete');
  } catch (e) {
    throw imapError(e, outcome === 'sent' ? `UID STORE -FLAGS ${keyword} in ${copy.folder}` : `UID EXPUNGE in ${copy.folder}`);
  } finally {
    lock.release();
  }
}
