import type { ImapFlow, SearchObject } from 'imapflow';
import type { RecentMail, RecentMailQuery } from '../connectors/outcomes.ts';
import { imapError } from './errors.ts';
import { uidSearch, withExamined } from './examine.ts';
import { assertMessageId } from './message-id.ts';
import { imapMessageKey } from './message-key.ts';

/** Hits beyond this many (newest kept) add nothing: one unread reply is enough to defer. */
const MAX_HITS = 20;

/**
 * The mailbox last look in one folder: `UID SEARCH YOUNGER <s> OR FROM <lead> OR HEADER
 * In-Reply-To <id> HEADER References <id> …` (RFC 3501 6.4.4; YOUNGER is RFC 5032 WITHIN, which
 * imapflow uses when the server has it, else SINCE <date>, a whole day wider), then a FETCH of the
 * hits' ENVELOPE and INTERNALDATE. The folder is opened read-only (EXAMINE) and stays open on a
 * warm connection (warm-connection.ts).
 *
 * The NOOP first is not decoration: Dovecot searches the folder's view as of the connection's last
 * sync, so on a folder already selected a message delivered since then is not found by a SEARCH
 * (measured on the bed: delivered by LMTP, 250 received, then UID SEARCH answered nothing; the
 * next command found it). NOOP makes the server sync the view (RFC 3501 6.1.2). Two round trips.
 *
 * SEARCH FROM and HEADER match substrings; a false hit only makes the sender look closer (the
 * pipeline reads it and decides), so hits are not filtered further here.
 *
 * Throws MAILBOX_UNAVAILABLE (or MAILBOX_FOLDER_NOT_FOUND) when it could not look.
 */
export async function searchRecentMail(client: ImapFlow, folder: string, q: Pick<RecentMailQuery, 'from' | 'threadedOn' | 'since'>): Promise<RecentMail[]> {
  for (const id of q.threadedOn) assertMessageId(id);
  return withExamined(client, folder, async () => {
    try {
      await client.noop();
    } catch (e) {
      throw imapError(e, `NOOP in ${folder}`);
    }
    const any: SearchObject[] = [{ from: q.from }];
    for (const id of q.threadedOn) any.push({ header: { 'in-reply-to': id } }, { header: { references: id } });
    const uids = await uidSearch(client, folder, { since: new Date(q.since), or: any });
    if (uids.length === 0) return [];
    const wanted = [...uids].sort((a, b) => a - b).slice(-MAX_HITS);
    const uidValidity = client.mailbox ? client.mailbox.uidValidity : 0n;
    const out: RecentMail[] = [];
    try {
      for await (const m of client.fetch(wanted, { uid: true, envelope: true, internalDate: true }, { uid: true })) {
        const at = m.internalDate === undefined ? NaN : new Date(m.internalDate).getTime();
        out.push({ key: imapMessageKey(folder, uidValidity, m.uid), messageId: m.envelope?.messageId?.trim() || null, receivedAt: Number.isNaN(at) ? null : at });
      }
    } catch (e) {
      throw imapError(e, `UID FETCH in ${folder}`);
    }
    // INTERNALDATE has whole seconds: a message of the same second as `since` stays in.
    return out.filter((m) => m.receivedAt === null || m.receivedAt >= Math.floor(q.since / 1000) * 1000);
  });
}
