import type { ImapFlow } from 'imapflow';
import { imapError } from './errors.ts';

/**
 * UID STORE +FLAGS (RFC 3501 6.4.6) on one message of the selected folder: \Flagged (the clients'
 * star or flag), \Seen (read). Adding a flag the message has already changes nothing. Throws
 * MAILBOX_UNAVAILABLE when the server refused (a folder opened read-only, say).
 */
export async function addFlags(client: ImapFlow, uid: number, flags: string[]): Promise<void> {
  const from = client.mailbox ? client.mailbox.path : '(no folder)';
  let ok;
  try {
    ok = await client.messageFlagsAdd(String(uid), flags, { uid: true });
  } catch (e) {
    throw imapError(e, `UID STORE ${uid} +FLAGS (${flags.join(' ')}) in ${from}`);
  }
  if (!ok) throw imapError(new Error('the server refused the STORE'), `UID STORE ${uid} +FLAGS (${flags.join(' ')}) in ${from}`);
}
