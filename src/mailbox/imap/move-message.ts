import type { ImapFlow } from 'imapflow';
import { imapError } from './errors.ts';

/**
 * UID MOVE of one message of the selected folder to `destination` (RFC 6851). imapflow replaces
 * it by UID COPY, UID STORE +FLAGS \Deleted and EXPUNGE on a server without the MOVE extension
 * (its lib/commands/move.js: "Fallback for servers without the MOVE extension"), and leaves the
 * source untouched when the copy failed. Gives the message's UID in the destination, and that
 * folder's UIDVALIDITY, when the server says them (COPYUID, RFC 4315 UIDPLUS), else nulls.
 * Throws MAILBOX_UNAVAILABLE when the server refused.
 */
export async function moveMessage(client: ImapFlow, uid: number, destination: string): Promise<{ uid: number | null; uidValidity: string | null }> {
  const from = client.mailbox ? client.mailbox.path : '(no folder)';
  let r;
  try {
    r = await client.messageMove(String(uid), destination, { uid: true });
  } catch (e) {
    throw imapError(e, `UID MOVE ${uid} from ${from} to ${destination}`);
  }
  if (!r) throw imapError(new Error('the server refused the move'), `UID MOVE ${uid} from ${from} to ${destination}`);
  const to = r.uidMap?.get(uid);
  return { uid: to ?? null, uidValidity: r.uidValidity !== undefined && to !== undefined ? String(r.uidValidity) : null };
}
