import type { ImapFlow } from 'imapflow';
import type { ImapAccount } from './account.ts';
import { imapError } from './errors.ts';
import { findFolder } from './special-folders.ts';

export interface AppendedCopy {
  folder: string;
  /** From APPENDUID (RFC 4315 UIDPLUS), null when the server does not say. */
  uid: number | null;
  uidValidity: string | null;
}

/**
 * Files the bytes that were sent into the account's Sent folder, as a mail client does after its
 * SMTP server said 250 (RFC 3501 APPEND). The copy is marked \Seen (a sent message is not unread)
 * plus any extra keywords, and dated `sentAt` so that its INTERNALDATE is the sending time, which
 * is what findSent reports. Throws MAILBOX_UNAVAILABLE / MAILBOX_FOLDER_NOT_FOUND.
 */
export async function appendToSent(
  client: ImapFlow,
  raw: Buffer,
  opts: { sentAt: Date; keywords?: string[]; account?: Pick<ImapAccount, 'folders'> },
): Promise<AppendedCopy> {
  const folder = await findFolder(client, 'sent', opts.account);
  let res;
  try {
    res = await client.append(folder, raw, ['\\Seen', ...(opts.keywords ?? [])], opts.sentAt);
  } catch (e) {
    throw imapError(e, `APPEND to ${folder}`);
  }
  // imapflow answers false (not an exception) when the server said NO/BAD.
  if (!res) throw imapError(new Error('the server refused the APPEND'), `APPEND to ${folder}`);
  return { folder: res.destination ?? folder, uid: res.uid ?? null, uidValidity: res.uidValidity === undefined ? null : String(res.uidValidity) };
}
