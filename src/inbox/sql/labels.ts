/**
 * The team's own labels (inbox_label), beside the classifier's, and which messages carry them
 * (inbox_message_label). Names are unique per workspace, case aside.
 */
import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { InboxLabelColor } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';

export const LABEL_COLORS = ['gray', 'blue', 'green', 'amber', 'red', 'purple'] as const satisfies readonly InboxLabelColor[];

export async function listLabels(db: Db, workspaceId: string) {
  return db.selectFrom('inbox_label').select(['id', 'name', 'color']).where('workspace_id', '=', workspaceId).orderBy(({ fn }) => fn('lower', ['name'])).execute();
}

// -- name: inbox-create-label
export async function createLabel(db: Db, deps: { clock: Clock; random: Random }, workspaceId: string, name: string, color: InboxLabelColor) {
  try {
    return await db
      .insertInto('inbox_label')
      .values({ id: newId(deps.clock.now(), deps.random), workspace_id: workspaceId, name, color })
      .returning(['id', 'name', 'color'])
      .executeTakeFirstOrThrow();
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw cadenzaError('CONFLICT', `the workspace already has a label named "${name}"`, { field: 'name' });
    throw e;
  }
}

/** Deletes a label and takes it off every message (cascade). False when the workspace has no such label. */
export async function deleteLabel(db: Db, workspaceId: string, labelId: string): Promise<boolean> {
  const r = await db.deleteFrom('inbox_label').where('workspace_id', '=', workspaceId).where('id', '=', labelId).executeTakeFirst();
  return r.numDeletedRows > 0n;
}

export async function findLabel(db: Db, workspaceId: string, labelId: string) {
  return db.selectFrom('inbox_label').select(['id', 'name', 'color']).where('workspace_id', '=', workspaceId).where('id', '=', labelId).executeTakeFirst();
}

/** Puts a label on a message (again: nothing changes). */
export async function applyLabel(db: Db, messageId: string, labelId: string, by: string | null, now: Date): Promise<void> {
  await db.insertInto('inbox_message_label').values({ message_id: messageId, label_id: labelId, added_by: by, added_at: now }).onConflict((oc) => oc.columns(['message_id', 'label_id']).doNothing()).execute();
}

export async function removeLabel(db: Db, messageId: string, labelId: string): Promise<void> {
  await db.deleteFrom('inbox_message_label').where('message_id', '=', messageId).where('label_id', '=', labelId).execute();
}
