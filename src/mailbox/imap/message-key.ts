/**
 * The key of one copy of a message in an IMAP mailbox: 'INBOX:<uidvalidity>:<uid>'. The sync
 * connector stores it with every message it ingests (message.provider_key), and the sender's last
 * look (search-recent-mail.ts) names its hits by it, so that "already read by the pipeline" is one
 * lookup. A UID is only meaningful with its folder's UIDVALIDITY (RFC 3501 2.3.1.1).
 */
export function imapMessageKey(path: string, uidValidity: string | bigint | number, uid: number): string {
  return `${path}:${String(uidValidity)}:${uid}`;
}

/** Where a key points: the folder, its UIDVALIDITY and the UID. */
export interface ImapMessageAt {
  path: string;
  uidValidity: string;
  uid: number;
}

/**
 * Reads a key back (the last two fields; a folder path may itself contain ':'). Null for a key
 * that is not an IMAP one (a Gmail or Graph id, or garbage).
 */
export function parseImapMessageKey(key: string): ImapMessageAt | null {
  const m = /^(.+):(\d+):(\d+)$/.exec(key);
  if (!m) return null;
  const uid = Number(m[3]);
  return Number.isSafeInteger(uid) && uid > 0 ? { path: m[1]!, uidValidity: m[2]!, uid } : null;
}
