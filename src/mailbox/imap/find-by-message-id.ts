import type { ImapFlow } from 'imapflow';
import { imapError } from './errors.ts';
import { uidSearch, withExamined } from './examine.ts';
import { assertMessageId, sameMessageId } from './message-id.ts';

export interface FoundMessage {
  uid: number;
  /** INTERNALDATE (when the server stored it: delivery, or the date given to APPEND), ms since epoch. */
  internalDate: number | null;
  /** The message's flags and keywords (\Seen, $CadenzaPending, …). */
  flags: string[];
}

/**
 * The messages in `folder` whose Message-ID header is exactly messageId ('<id@domain>'), oldest
 * UID first: UID SEARCH HEADER Message-ID (RFC 3501 6.4.4), then a FETCH ENVELOPE to keep only
 * exact matches, because SEARCH HEADER matches substrings. The folder is opened read-only
 * (EXAMINE), so searching never changes \Recent or \Seen.
 *
 * Throws MAILBOX_UNAVAILABLE (or MAILBOX_FOLDER_NOT_FOUND) when it could not search: the caller
 * must never read a failed search as "not there".
 */
export async function findByMessageId(client: ImapFlow, folder: string, messageId: string): Promise<FoundMessage[]> {
  assertMessageId(messageId);
  return withExamined(client, folder, async () => {
    const uids = await uidSearch(client, folder, { header: { 'message-id': messageId } });
    if (uids.length === 0) return [];
    const found: FoundMessage[] = [];
    try {
      for await (const m of client.fetch(uids, { uid: true, envelope: true, internalDate: true, flags: true }, { uid: true })) {
        if (!sameMessageId(m.envelope?.messageId, messageId)) continue;
        const d = m.internalDate === undefined ? null : new Date(m.internalDate).getTime();
        found.push({ uid: m.uid, internalDate: d === null || Number.isNaN(d) ? null : d, flags: [...(m.flags ?? [])] });
      }
    } catch (e) {
      throw imapError(e, `UID FETCH in ${folder}`);
    }
    return found.sort((a, b) => a.uid - b.uid);
  });
}
