import type { ImapFlow } from 'imapflow';
import { PENDING_KEYWORD, type SentFolderCopy } from '../connectors/outcomes.ts';
import type { SentPage } from '../connectors/sent-pages.ts';
import { imapError } from './errors.ts';
import { examine, uidSearch } from './examine.ts';

/** UIDs per FETCH: a page of copies in memory at a time, whatever the size of the folder. */
const defaultPageSize = 500;

/**
 * Every message in `folder` (the Sent folder) stored at or after `since` (ms), oldest UID first, a
 * page at a time: UID SEARCH SINCE <date> (RFC 3501 6.4.4; SINCE compares the INTERNALDATE's date
 * only, so the search is a day wide and the hits are filtered here on the INTERNALDATE itself),
 * then a FETCH of ENVELOPE, INTERNALDATE and FLAGS for each `pageSize` UIDs. The folder is opened
 * read-only (EXAMINE) for the whole listing and released when the reader is closed.
 *
 * A copy still carrying PENDING_KEYWORD was APPENDed before its handover and never settled
 * (SentProof 'copy_first'): it is reported `pending`, proof of the attempt and not of the send.
 *
 * Throws MAILBOX_UNAVAILABLE (or MAILBOX_FOLDER_NOT_FOUND) when it could not list: the caller
 * must never read a failed listing as "nothing was sent".
 */
export async function* listSentSince(client: ImapFlow, folder: string, since: number, pageSize = defaultPageSize): AsyncGenerator<SentPage> {
  const lock = await examine(client, folder);
  try {
    // UIDs come back ascending (numbers only: a few bytes each, even for a large folder).
    const uids = (await uidSearch(client, folder, { since: new Date(since) })).sort((a, b) => a - b);
    for (let i = 0; i < uids.length; i += pageSize) {
      const page: Array<SentFolderCopy & { uid: number }> = [];
      let withoutMessageId = 0;
      try {
        for await (const m of client.fetch(uids.slice(i, i + pageSize), { uid: true, envelope: true, internalDate: true, flags: true }, { uid: true })) {
          const at = m.internalDate === undefined ? NaN : new Date(m.internalDate).getTime();
          // INTERNALDATE has whole seconds: a copy of the same second as `since` stays in.
          if (!Number.isNaN(at) && at < Math.floor(since / 1000) * 1000) continue;
          const messageId = m.envelope?.messageId?.trim();
          if (!messageId) {
            withoutMessageId++;
            continue;
          }
          page.push({
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
      yield { copies: page.sort((a, b) => a.uid - b.uid).map(({ uid: _uid, ...c }) => c), withoutMessageId };
    }
  } finally {
    lock.release();
  }
}
