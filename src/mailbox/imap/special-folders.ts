import type { ImapFlow, ListResponse } from 'imapflow';
import { cadenzaError } from '../../common/errors.ts';
import type { FolderRole, ImapAccount } from './account.ts';
import { imapError } from './errors.ts';

/** RFC 6154 SPECIAL-USE attributes. */
const flagOf: Record<FolderRole, string> = { sent: '\\Sent', junk: '\\Junk', trash: '\\Trash' };

/**
 * Names tried, in this order, when no folder carries the attribute: servers without SPECIAL-USE
 * (older Courier, some hosting panels) and accounts whose folders were made by clients. Compared
 * case-insensitively on the whole path, with '.' or '/' as the hierarchy separator under INBOX
 * (Courier, Cyrus put every folder under INBOX).
 */
const namesOf: Record<FolderRole, string[]> = {
  sent: ['Sent', 'Sent Items', 'Sent Messages', 'Sent Mail', '[Gmail]/Sent Mail', '[Google Mail]/Sent Mail', 'INBOX.Sent', 'INBOX/Sent', 'INBOX.Sent Items', 'INBOX.Sent Messages'],
  junk: ['Junk', 'Junk E-mail', 'Junk Email', 'Spam', '[Gmail]/Spam', '[Google Mail]/Spam', 'INBOX.Junk', 'INBOX/Junk', 'INBOX.Spam', 'INBOX/Spam'],
  trash: ['Trash', 'Deleted Items', 'Deleted Messages', 'Bin', '[Gmail]/Trash', '[Gmail]/Bin', '[Google Mail]/Trash', 'INBOX.Trash', 'INBOX/Trash'],
};

/** The part of a LIST answer the choice needs (imapflow's ListResponse has it). */
export type ListedFolder = Pick<ListResponse, 'path' | 'flags'> & Partial<Pick<ListResponse, 'specialUse' | 'specialUseSource'>>;

/**
 * Picks the folder for a role from a LIST answer, or null. Order: the server's SPECIAL-USE
 * attribute (authoritative); imapflow's detection from the name, which knows localized names
 * ('Gesendet', 'Éléments envoyés'); then our list of common names. A folder that cannot be
 * selected (\Noselect, \NonExistent) is never chosen.
 */
export function chooseFolder(list: readonly ListedFolder[], role: FolderRole): string | null {
  const usable = list.filter((f) => !hasFlag(f, '\\Noselect') && !hasFlag(f, '\\NonExistent'));
  const flagged = usable.find((f) => hasFlag(f, flagOf[role]));
  if (flagged) return flagged.path;
  const detected = usable.find((f) => f.specialUse?.toLowerCase() === flagOf[role].toLowerCase());
  if (detected) return detected.path;
  for (const name of namesOf[role]) {
    const hit = usable.find((f) => f.path.toLowerCase() === name.toLowerCase());
    if (hit) return hit.path;
  }
  return null;
}

function hasFlag(f: ListedFolder, flag: string): boolean {
  const want = flag.toLowerCase();
  for (const x of f.flags) if (x.toLowerCase() === want) return true;
  return false;
}

/** The path of the account's folder for a role: the user's choice if set, else discovered. Throws MAILBOX_FOLDER_NOT_FOUND. */
export async function findFolder(client: ImapFlow, role: FolderRole, account?: Pick<ImapAccount, 'folders'>): Promise<string> {
  const chosen = account?.folders?.[role];
  if (chosen) return chosen;
  let list: ListResponse[];
  try {
    list = await client.list();
  } catch (e) {
    throw imapError(e, 'LIST');
  }
  const path = chooseFolder(list, role);
  if (!path) throw cadenzaError('MAILBOX_FOLDER_NOT_FOUND', `IMAP: no ${role} folder (none marked ${flagOf[role]}, none named like ${namesOf[role].slice(0, 3).join(', ')})`, { role, folders: list.map((f) => f.path) });
  return path;
}

/** Every role's folder at once (one LIST), null where there is none. */
export async function findSpecialFolders(client: ImapFlow): Promise<Record<FolderRole, string | null>> {
  let list: ListResponse[];
  try {
    list = await client.list();
  } catch (e) {
    throw imapError(e, 'LIST');
  }
  return { sent: chooseFolder(list, 'sent'), junk: chooseFolder(list, 'junk'), trash: chooseFolder(list, 'trash') };
}
