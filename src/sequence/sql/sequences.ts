/**
 * Sequences as people look them up and list them (the API and the CLI). Definitions are read whole
 * by definition-document.ts and written by apply-definition.ts; this file only finds and counts.
 */
import type { Db } from '../../store/store.ts';

/** The sequence's id when it is one of the workspace's, else undefined (another workspace's is not found). */
export async function findSequenceId(db: Db, workspaceId: string, sequenceId: string): Promise<string | undefined> {
  const r = await db.selectFrom('sequence').select('id').where('workspace_id', '=', workspaceId).where('id', '=', sequenceId).executeTakeFirst();
  return r?.id;
}

/** The id of the workspace's sequence with this key (keys are unique per workspace), or undefined. */
export async function sequenceIdByKey(db: Db, workspaceId: string, key: string): Promise<string | undefined> {
  const r = await db.selectFrom('sequence').select('id').where('workspace_id', '=', workspaceId).where('key', '=', key).executeTakeFirst();
  return r?.id;
}

export interface SequenceSummary {
  id: string;
  key: string;
  name: string;
  status: 'draft' | 'active' | 'paused' | 'archived';
  version: number;
  /** Steps in the current version (archived steps, kept for history, are not counted). */
  steps: number;
  /** Enrollments active now, and those that ended with a reply. */
  active: number;
  replied: number;
}

/** The workspace's sequences with their step count and enrollments by state: newest first, or by key (the CLI's table). */
export async function listSequences(db: Db, workspaceId: string, order: 'newest' | 'key'): Promise<SequenceSummary[]> {
  const q = db
    .selectFrom('sequence as s')
    .select((eb) => [
      's.id',
      's.key',
      's.name',
      's.status',
      's.version',
      eb.selectFrom('step').select((e2) => e2.fn.countAll<number>().as('n')).whereRef('step.sequence_id', '=', 's.id').where('step.archived_at', 'is', null).as('steps'),
      eb.selectFrom('enrollment').select((e2) => e2.fn.countAll<number>().as('n')).whereRef('enrollment.sequence_id', '=', 's.id').where('enrollment.state', '=', 'active').as('active'),
      eb.selectFrom('enrollment').select((e2) => e2.fn.countAll<number>().as('n')).whereRef('enrollment.sequence_id', '=', 's.id').where('enrollment.state', '=', 'replied').as('replied'),
    ])
    .where('s.workspace_id', '=', workspaceId);
  const rows = await (order === 'key' ? q.orderBy('s.key') : q.orderBy('s.created_at', 'desc')).execute();
  return rows.map((r) => ({ ...r, steps: Number(r.steps), active: Number(r.active), replied: Number(r.replied) }));
}
