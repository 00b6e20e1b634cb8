import type { Tx } from '../store/store.ts';
import type { Applied, EnrollmentService } from './enrollment-service.ts';
import type { CallOutcome, EngineEvent } from './model.ts';

/** What a person says of a task: a manual task is done or skipped; a call task takes a call's outcome (or is skipped). */
export type TaskOutcome = 'done' | 'skipped' | CallOutcome;

export interface TaskRef {
  id: string;
  kind: 'call' | 'manual';
  enrollmentId: string;
  stepId: string;
}

export interface TaskOutcomeResult {
  /** The task after the outcome: closed, or still open when the step's retry rule tries the call again. */
  state: 'open' | 'done' | 'skipped';
  /** Which try of the task this was (calls only; 0 for a manual task or a skip). */
  attempt: number;
  /** The new due time of a call tried again. */
  retryAt: Date | null;
  applied: Applied[];
}

/**
 * The one owner of a task's outcome: in the caller's transaction, the task row is locked, counted
 * (a call's try), its enrollment given the event (call_outcome or task_completed), and the task closed
 * with its outcome, unless the engine asked for the call to be tried again (its reschedule_task
 * effect moved the due time; the task stays open). Returns null when the task is not open (already
 * completed, or cancelled when its enrollment stopped): a second click, or a late one, changes nothing.
 *
 * The caller hands `applied` to the service's notify after commit, as EnrollmentService.apply does.
 */
export async function recordTaskOutcome(tx: Tx, service: EnrollmentService, task: TaskRef, outcome: TaskOutcome, now: number): Promise<TaskOutcomeResult | null> {
  const row = await tx.selectFrom('task').select(['state', 'attempts']).where('id', '=', task.id).forUpdate().executeTakeFirst();
  if (!row || row.state !== 'open') return null;
  const isCall = task.kind === 'call' && outcome !== 'done' && outcome !== 'skipped';
  const attempt = isCall ? row.attempts + 1 : 0;
  const event: EngineEvent = isCall
    ? { type: 'call_outcome', stepId: task.stepId, outcome: outcome as CallOutcome, attempt }
    : { type: 'task_completed', stepId: task.stepId, outcome: outcome === 'skipped' ? 'skipped' : 'done' };
  const applied = await service.applyInTx(tx, task.enrollmentId, event, now);
  const retry = applied[0]?.result.outcome === 'applied' ? applied[0].result.effects.find((f) => f.type === 'reschedule_task') : undefined;
  if (retry) {
    await tx.updateTable('task').set({ attempts: attempt, outcome }).where('id', '=', task.id).execute();
    return { state: 'open', attempt, retryAt: new Date(retry.dueAt), applied };
  }
  const state = outcome === 'skipped' ? 'skipped' : 'done';
  // The engine may have cancelled the task already (a wrong number stops the enrollment and its
  // tasks): the person's outcome is what closed it, so it is recorded as theirs.
  await tx
    .updateTable('task')
    .set({ state, outcome, completed_at: new Date(now), ...(isCall ? { attempts: attempt } : {}) })
    .where('id', '=', task.id)
    .where('state', 'in', ['open', 'cancelled'])
    .execute();
  return { state, attempt, retryAt: null, applied };
}
