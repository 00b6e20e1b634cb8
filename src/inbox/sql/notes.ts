/**
 * Internal notes on a conversation (inbox_note): written by members, never sent. Personal data
 * (docs/privacy.md): an erasure deletes those on the person's messages and those naming them
 * (privacy/sql/personal-data.ts).
 */
import type { Clock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Db } from '../../store/store.ts';

/** The notes on a message, oldest first, with their author's name. */
export async function listNotes(db: Db, messageId: string) {
  return db
    .selectFrom('inbox_note as n')
    .leftJoin('app_user as u', 'u.id', 'n.author_user_id')
    .select(['n.id', 'n.body', 'n.created_at', 'n.author_user_id', 'u.name as author_name', 'u.email as author_email'])
    .where('n.message_id', '=', messageId)
    .orderBy('n.created_at')
    .orderBy('n.id')
    .limit(500)
    .execute();
}

export async function addNote(db: Db, deps: { clock: Clock; random: Random }, workspaceId: string, messageId: string, authorUserId: string | null, body: string) {
  const now = deps.clock.now();
  return db
    .insertInto('inbox_note')
    .values({ id: newId(now, deps.random), workspace_id: workspaceId, message_id: messageId, author_user_id: authorUserId, body, created_at: new Date(now) })
    .returning(['id', 'body', 'created_at', 'author_user_id'])
    .executeTakeFirstOrThrow();
}

/** A note of the workspace with the message it is on: the route checks the caller may read that message. */
export async function findNote(db: Db, workspaceId: string, noteId: string) {
  return db.selectFrom('inbox_note').select(['id', 'message_id', 'author_user_id']).where('workspace_id', '=', workspaceId).where('id', '=', noteId).executeTakeFirst();
}

export async function deleteNote(db: Db, noteId: string): Promise<void> {
  await db.deleteFrom('inbox_note').where('id', '=', noteId).execute();
}
