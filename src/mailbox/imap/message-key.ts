/**
 * The key of one copy of a message in an IMAP mailbox: 'INBOX:<uidvalidity>:<uid>'. The sync
 * connector stores it with every message it ingests (message.provider_key), and the sender's last
 * look (search-recent-mail.ts) names its hits by it, so that "already read by the pipeline" is one
 * lookup. A UID is only meaningful with its folder's UIDVALIDITY (RFC 3501 2.3.1.1).
 */
export function imapMessageKey(path: string, uidValidity: string | bigint | number, uid: number): string {
  return `${path}:${String(uidValidity)}:${uid}`;
}
