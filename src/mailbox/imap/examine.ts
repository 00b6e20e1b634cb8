import type { ImapFlow, SearchObject } from 'imapflow';
import { imapError } from './errors.ts';

/**
 * Runs `fn` with `folder` opened read-only (EXAMINE, RFC 3501 6.3.2: searching and fetching never
 * change \\Recent or \\Seen), released after. Throws MAILBOX_UNAVAILABLE (or
 * MAILBOX_FOLDER_NOT_FOUND) when the folder cannot be opened.
 */
export async function withExamined<T>(client: ImapFlow, folder: string, fn: () => Promise<T>): Promise<T> {
  const lock = await examine(client, folder);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}

/** Opens `folder` read-only (EXAMINE) and holds it until the lock is released; throws as withExamined does. */
export async function examine(client: ImapFlow, folder: string): Promise<{ release(): void }> {
  try {
    return await client.getMailboxLock(folder, { readOnly: true });
  } catch (e) {
    throw imapError(e, `EXAMINE ${folder}`);
  }
}

/** UID SEARCH in the open folder; a failed search throws (imapflow answers false, not an exception), never reads as "nothing". */
export async function uidSearch(client: ImapFlow, folder: string, query: SearchObject): Promise<number[]> {
  let uids: number[] | false | undefined;
  try {
    uids = await client.search(query, { uid: true });
  } catch (e) {
    throw imapError(e, `UID SEARCH in ${folder}`);
  }
  if (!Array.isArray(uids)) throw imapError(new Error('the search failed'), `UID SEARCH in ${folder}`);
  return uids;
}
