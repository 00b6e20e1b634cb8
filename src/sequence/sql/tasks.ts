/** Call and manual tasks as people work through them. The engine opens and closes them (effects.ts). */
import type { Db } from '../../store/store.ts';

export type TaskState = 'open' | 'done' | 'skipped' | 'cancelled';

/** The workspace's tasks in this state, soonest due first, with their lead and sequence; at most `limit`. */
export async function listTasks(db: Db, workspaceId: string, state: TaskState, limit: number) {
  return db
    .selectFrom('task as t')
    .innerJoin('enrollment as e', 'e.id', 't.enrollment_id')
    .innerJoin('lead as l', 'l.id', 'e.lead_id')
    .innerJoin('sequence as s', 's.id', 'e.sequence_id')
    .select(['t.id', 't.kind', 't.state', 't.title', 't.notes', 't.due_at', 't.attempts', 'l.id as lead_id', 'l.email', 'l.first_name', 'l.last_name', 'l.company', 'l.phone', 'l.phone_e164', 's.name'])
    .where('t.workspace_id', '=', workspaceId)
    .where('t.state', '=', state)
    .orderBy('t.due_at')
    .limit(limit)
    .execute();
}

/** The workspace's task with its enrollment and step, or undefined (another workspace's is not found). */
export async function findTask(db: Db, workspaceId: string, taskId: string) {
  return db.selectFrom('task').select(['id', 'kind', 'state', 'enrollment_id', 'step_id']).where('workspace_id', '=', workspaceId).where('id', '=', taskId).executeTakeFirst();
}
