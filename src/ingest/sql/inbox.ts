/**
 * The unified inbox as people read it: messages of the workspace with their mailbox and lead,
 * only from the mailboxes the reader may read (mailbox/sql/readable-mailboxes.ts).
 */
import { sql } from 'kysely';
import { readableBy, type MailReader } from '../../mailbox/sql/readable-mailboxes.ts';
import { afterKey, type Keyset } from '../../store/keyset.ts';
import type { Db } from '../../store/store.ts';

/** History keeps a removed mailbox's address, marked (sending/mailbox-removal.ts). */
const removedLabel = sql<string | null>`case when mb.removed_at is null then mb.email else mb.email || ' (removed mailbox)' end`;

/** The workspace's messages (either direction) the reader may read, as the inbox shows them; the lists below narrow it. */
function readableMessages(db: Db, workspaceId: string, reader: MailReader) {
  return db
    .selectFrom('message as m')
    .leftJoin('mailbox as mb', 'mb.id', 'm.mailbox_id')
    .leftJoin('enrollment as e', 'e.id', 'm.enrollment_id')
    .select([
      'm.id', 'm.mailbox_id', removedLabel.as('mailbox_email'), 'm.thread_id', 'm.enrollment_id', 'e.lead_id', 'm.from_addr', 'm.reply_to', 'm.to_addrs', 'm.cc_addrs', 'm.subject', 'm.at', 'm.folder',
      'm.label', 'm.confidence', 'm.reason', 'm.rung', 'm.intent', 'm.action', 'm.needs_review', 'm.excerpt',
    ])
    .where('m.workspace_id', '=', workspaceId)
    .where(readableBy(reader, 'm.mailbox_id'));
}

export type InboxRow = Awaited<ReturnType<ReturnType<typeof readableMessages>['executeTakeFirstOrThrow']>>;

/** Which inbound messages the inbox shows; every filter given must match. */
export interface InboxFilter {
  mailboxId?: string | undefined;
  label?: string | undefined;
  folder?: 'inbox' | 'junk' | 'other' | undefined;
  /** true: the review queue (below the confidence line, not yet reviewed); false: everything else. */
  needsReview?: boolean | undefined;
  /** The next page: only the messages after this one, newest first. */
  after?: Keyset | undefined;
}

/** The inbound messages the reader may read, matching the filter, newest first (at, then id); at most `limit`. */
export async function listInbox(db: Db, workspaceId: string, reader: MailReader, f: InboxFilter, limit: number): Promise<InboxRow[]> {
  let q = readableMessages(db, workspaceId, reader).where('m.direction', '=', 'inbound');
  if (f.mailboxId) q = q.where('m.mailbox_id', '=', f.mailboxId);
  if (f.label) q = q.where('m.label', '=', f.label);
  if (f.folder) q = q.where('m.folder', '=', f.folder);
  if (f.needsReview === true) q = q.where('m.needs_review', '=', true).where('m.reviewed_at', 'is', null);
  if (f.needsReview === false) q = q.where((eb) => eb.or([eb('m.needs_review', '=', false), eb('m.reviewed_at', 'is not', null)]));
  if (f.after) q = q.where(afterKey('m.at', 'm.id', f.after));
  return q.orderBy('m.at', 'desc').orderBy('m.id', 'desc').limit(limit).execute();
}

/** An inbound message the reader may read, or undefined: what a person may relabel or answer. */
export async function findInboundMessage(db: Db, workspaceId: string, reader: MailReader, messageRowId: string): Promise<InboxRow | undefined> {
  return readableMessages(db, workspaceId, reader).where('m.id', '=', messageRowId).where('m.direction', '=', 'inbound').executeTakeFirst();
}

/**
 * A message the reader may read (either direction) with its new text, and its thread, oldest first
 * (500 at most): the enrollment's conversation when there is one, else the provider's thread.
 * Undefined when the reader may not read it.
 */
export async function messageWithThread(db: Db, workspaceId: string, reader: MailReader, messageRowId: string) {
  const message = await readableMessages(db, workspaceId, reader).select(['m.new_text', 'm.message_id']).where('m.id', '=', messageRowId).executeTakeFirst();
  if (!message) return undefined;
  let t = readableMessages(db, workspaceId, reader).select('m.direction');
  if (message.enrollment_id) t = t.where('m.enrollment_id', '=', message.enrollment_id);
  else if (message.thread_id) t = t.where('m.thread_id', '=', message.thread_id);
  else t = t.where('m.id', '=', message.id);
  const thread = await t.orderBy('m.at').orderBy('m.id').limit(500).execute();
  return { message, thread };
}
