import type { SyncCursor } from './source.ts';

/**
 * The IMAP sync cursor and the pure decisions made from it (no I/O here).
 *
 * Shape (JSON, stored by the worker as it is):
 *
 *   { "kind": "imap", "v": 1,
 *     "folders": {
 *       "inbox": { "path": "INBOX", "uidValidity": "1795980984", "lastUid": 412, "highestModseq": "1530" },
 *       "junk":  { "path": "Junk",  "uidValidity": "1795980990", "lastUid": 17 } } }
 *
 * - Keyed by role (inbox, junk), with the folder's path at the time: a Junk folder that moved
 *   (another SPECIAL-USE folder, the user's choice) is a different folder and is rescanned.
 * - `uidValidity` and `highestModseq` are decimal strings: mod-sequences are 63-bit and exceed
 *   2^53 on long-lived servers, and imapflow hands them over as bigint (RFC 7162 §3.1.1).
 * - `lastUid`: every message of this folder with a UID up to it was yielded (messages or
 *   problems). UIDs are 32-bit, so a number.
 * - `highestModseq`: only when CONDSTORE was used, and only in the last batch of a pull (the
 *   HIGHESTMODSEQ read when the folder was opened): earlier batches keep the previous value, so a
 *   replay after a crash asks the server for at least what it has not processed.
 *
 * A cursor that does not parse (another connector's, a hand-edited one) counts as none: the
 * folders are rescanned over the resync window, which is safe because the worker deduplicates.
 */

export type SyncRole = 'inbox' | 'junk';

// Type aliases, not interfaces: only those are assignable to SyncCursor (Record<string, unknown>).
export type FolderCursor = {
  path: string;
  uidValidity: string;
  lastUid: number;
  highestModseq?: string;
};

export type ImapCursor = {
  kind: 'imap';
  v: 1;
  folders: Partial<Record<SyncRole, FolderCursor>>;
};

const digits = /^[0-9]{1,20}$/;

function parseFolder(raw: unknown): FolderCursor | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const f = raw as Record<string, unknown>;
  if (typeof f.path !== 'string' || !f.path) return undefined;
  if (typeof f.uidValidity !== 'string' || !digits.test(f.uidValidity)) return undefined;
  if (typeof f.lastUid !== 'number' || !Number.isInteger(f.lastUid) || f.lastUid < 0 || f.lastUid > 0xffff_ffff) return undefined;
  const out: FolderCursor = { path: f.path, uidValidity: f.uidValidity, lastUid: f.lastUid };
  if (typeof f.highestModseq === 'string' && digits.test(f.highestModseq)) out.highestModseq = f.highestModseq;
  return out;
}

/** The stored cursor, or an empty one (first sync) when there is none or it is not ours. */
export function parseImapCursor(raw: SyncCursor | null | undefined): ImapCursor {
  const empty: ImapCursor = { kind: 'imap', v: 1, folders: {} };
  if (!raw || raw.kind !== 'imap' || raw.v !== 1 || !raw.folders || typeof raw.folders !== 'object') return empty;
  const folders = raw.folders as Record<string, unknown>;
  const inbox = parseFolder(folders.inbox);
  const junk = parseFolder(folders.junk);
  return { kind: 'imap', v: 1, folders: { ...(inbox ? { inbox } : {}), ...(junk ? { junk } : {}) } };
}

/** What the server said when the folder was opened (SELECT/EXAMINE). */
export interface OpenedFolder {
  path: string;
  uidValidity: string;
  /** UIDNEXT, when the server sent it. */
  uidNext: number | null;
  /** HIGHESTMODSEQ when CONDSTORE is on and the folder keeps mod-sequences (no NOMODSEQ). */
  highestModseq: string | null;
}

export type FolderPlan =
  /** Nothing arrived since the cursor: no command to send. */
  | { kind: 'unchanged' }
  /** Fetch UIDs above `afterUid`; with `changedSince`, only those changed since that modseq (CONDSTORE). */
  | { kind: 'incremental'; afterUid: number; changedSince: string | null }
  /** No usable cursor for this folder (first sync, UIDVALIDITY changed, folder moved): scan the window. */
  | { kind: 'window'; reason: 'first_sync' | 'uidvalidity_changed' | 'folder_changed' };

/**
 * What to do for one folder. UIDVALIDITY decides first (RFC 3501 §2.3.1.1: a new value voids
 * every UID we hold). Then the cheapest proof that nothing arrived: an unchanged HIGHESTMODSEQ
 * (any new message raises it, RFC 7162 §3.1.1), else a UIDNEXT not past lastUid.
 */
export function planFolder(stored: FolderCursor | undefined, opened: OpenedFolder): FolderPlan {
  if (!stored) return { kind: 'window', reason: 'first_sync' };
  if (stored.path !== opened.path) return { kind: 'window', reason: 'folder_changed' };
  if (stored.uidValidity !== opened.uidValidity) return { kind: 'window', reason: 'uidvalidity_changed' };
  const condstore = stored.highestModseq !== undefined && opened.highestModseq !== null;
  if (condstore && BigInt(opened.highestModseq!) <= BigInt(stored.highestModseq!)) return { kind: 'unchanged' };
  if (opened.uidNext !== null && opened.uidNext <= stored.lastUid + 1) return { kind: 'unchanged' };
  return { kind: 'incremental', afterUid: stored.lastUid, changedSince: condstore ? stored.highestModseq! : null };
}

/** One message as the metadata pass saw it (UID FETCH … (UID RFC822.SIZE INTERNALDATE)). */
export interface MessageMeta {
  uid: number;
  size: number | null;
  internalDate: number | null;
}

/**
 * Splits the messages to take (ascending UID) into batches of at most `batchSize` messages and,
 * except for a single message, at most `maxBatchBytes` of RFC822.SIZE: what one batch may hold
 * in memory at once. Oversize messages are not fetched, so they weigh nothing.
 */
export function planBatches(metas: readonly MessageMeta[], opts: { batchSize: number; maxBatchBytes: number; maxMessageBytes: number }): MessageMeta[][] {
  const batches: MessageMeta[][] = [];
  let current: MessageMeta[] = [];
  let bytes = 0;
  for (const m of metas) {
    const weight = m.size !== null && m.size > opts.maxMessageBytes ? 0 : (m.size ?? 0);
    if (current.length > 0 && (current.length >= opts.batchSize || (weight > 0 && bytes + weight > opts.maxBatchBytes))) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(m);
    bytes += weight;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * The messages a window scan keeps: received at or after `since` (SEARCH SINCE has day
 * granularity in the server's zone, so the server's answer is a superset), in UID order.
 * A message without an INTERNALDATE is kept: better a duplicate the worker drops than a lost reply.
 */
export function withinWindow(metas: readonly MessageMeta[], since: number): MessageMeta[] {
  return metas.filter((m) => m.internalDate === null || m.internalDate >= since).sort((a, b) => a.uid - b.uid);
}
