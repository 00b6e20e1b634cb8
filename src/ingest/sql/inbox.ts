/**
 * The unified inbox as people read it: messages of the workspace with their mailbox and lead,
 * only from the mailboxes the reader may read (mailbox/sql/readable-mailboxes.ts).
 */
import { sql } from 'kysely';
import { readableBy, type MailReader } from '../../mailbox/sql/readable-mailboxes.ts';
import type { Db } from '../../store/store.ts';

/** History keeps a removed mailbox's address, marked (sending/mailbox-removal.ts). */
const removedLabel = sql<string | null>`case when mb.removed_at is null then mb.email else mb.email || ' (removed mailbox)' end`;

/** The workspace's messages (either direction) the reader may read, as the inbox shows them; src/inbox/sql/list.ts and the lookups below narrow it. */
export function readableMessages(db: Db, workspaceId: string, reader: MailReader) {
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

/** An inbound message the reader may read, or undefined: what a person may relabel or answer. */
export async function findInboundMessage(db: Db, workspaceId: string, reader: MailReader, messageRowId: string): Promise<InboxRow | undefined> {
  return readableMessages(db, workspaceId, reader).where('m.id', '=', messageRowId).where('m.direction', '=', 'inbound').executeTakeFirst();
}
