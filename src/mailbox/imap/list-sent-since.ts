import type { ImapFlow } from 'imapflow';
import { PENDING_KEYWORD, type SentFolderCopy } from '../connectors/outcomes.ts';
import { imapError } from './errors.ts';
import { uidSearch, withExamined } from './examine.ts';

/**
 * Every message in `folder` (the Sent folder) stored at or after `since` (ms), oldest UID first:
 * UID SEARCH SINCE <date> (RFC 3501 6.4.4; SINCE compares the INTERNALDATE's date only, so the
 * search is a day wide and the hits are filtered here on the INTERNALDATE itself), then a FETCH of
 * their ENVELOPE, INTERNALDATE and FLAGS. The folder is opened read-only (EXAMINE).
 *
 * A copy still carrying PENDING_KEYWORD was APPENDed before its handover and never settled
 * (SentProof 'copy_first'): it is reported `pending`, proof of the attempt and not of the send.
 *
 * Throws MAILBOX_UNAVAILABLE (or MAILBOX_FOLDER_NOT_FOUND) when it could not list: the caller
 * must never read a failed listing as "nothing was sent".
 */
export async function listSentSince(client: ImapFlow, folder: string, since: number): Promise<SentFolderCopy[]> {
  return withExamined(client, folder, async () => {
    const uids = await uidSearch(client, folder, { since: new Date(since) });
    if (uids.length === 0) return [];
    const out: Array<SentFolderCopy & { uid: number }> = [];
    try {
      for await (const m of client.fetch(uids, { uid: true, envelope: true, internalDate: true, flags: true }, { uid: true })) {
        const at = m.internalDate === undefined ? NaN : new Date(m.internalDate).getTime();
        // INTERNALDATE has whole seconds: a copy of the same second as `since` stays in.
        if (!Number.isNaN(at) && at < Math.floor(since / 1000) * 1000) continue;
        const messageId = m.envelope?.messageId?.trim();
        if (!messageId) continue;
        out.push({
          uid: m.uid,
          messageId,
          sentAt: Number.isNaN(at) ? null : at,
          to: (m.envelope?.to ?? []).map((a) => a.address ?? '').filter(Boolean),
          subject: m.envelope?.subject ?? null,
          inReplyTo: m.envelope?.inReplyTo?.trim() || null,
          pending: (m.flags ?? new Set<string>()).has(PENDING_KEYWORD),
        });
      }
    } catch (e) {
      throw imapError(e, `UID FETCH in ${folder}`);
    }
    return out.sort((a, b) => a.uid - b.uid).map(({ uid: _uid, ...c }) => c);
  });
}
