/**
 * Stop and delete over many leads (issue 19 review): a target may hold 100,000 leads, and one
 * transaction over all of them would hold row locks on every enrollment (or cascade through every
 * enrollment, task and message) until the last one is done, stalling the sender and the sync on
 * the same rows. So the leads go in bounded batches, each in its own transaction: a batch commits
 * or not as a whole, and a retry after a failure finds the leads already done and does nothing to
 * them again (a stopped enrollment is no longer stoppable, a deleted lead is gone).
 */
import type { Applied } from '../../sequence/enrollment-service.ts';
import type { Db, Tx } from '../../store/store.ts';
import { deleteLeads, stoppableEnrollmentsOfLeads } from './sql/lead-lists.ts';

/** Leads per transaction: a batch's locks are held for one short statement set, not for the whole target. */
export const BULK_BATCH = 500;

/** What a stop needs from the enrollment engine (enrollment-service.ts). */
export interface StopEngine {
  stopEachInTx(tx: Tx, enrollmentIds: readonly string[], reason: string, now: number): Promise<Applied[]>;
  notify(applied: Applied[]): void;
}

export interface BatchReport {
  /** Batches committed (a failure leaves the ones before it committed). */
  batches: number;
}

function* chunks<T>(xs: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < xs.length; i += size) yield xs.slice(i, i + size);
}

export interface StopReport extends BatchReport {
  stopped: number;
  tasksCancelled: number;
}

export interface DeleteReport extends BatchReport {
  deleted: number;
}

/**
 * Stops the leads' live enrollments, and cancels the open call and manual tasks of those stopped
 * and of finished or replied ones that still hold one. `stopped`: enrollments that went from live
 * to stopped; `tasksCancelled`: open tasks closed. Counted into `o.progress` (when given) as each
 * batch commits, never before: after a failure it holds what the committed batches did, for the
 * audit log, and a batch whose commit failed counts nothing.
 */
export async function stopLeadsInBatches(
  db: Db,
  engine: StopEngine,
  workspaceId: string,
  leadIds: readonly string[],
  o: { reason: string; now: number; batch?: number; progress?: StopReport },
): Promise<StopReport> {
  const out = o.progress ?? { batches: 0, stopped: 0, tasksCancelled: 0 };
  for (const part of chunks(leadIds, o.batch ?? BULK_BATCH)) {
    const { applied, tasksCancelled } = await db.transaction().execute(async (tx) => {
      const found = await stoppableEnrollmentsOfLeads(tx, workspaceId, part);
      const done = await engine.stopEachInTx(tx, found.map((e) => e.id), o.reason, o.now);
      const acted = new Set(done.filter((a) => a.result.outcome === 'applied').map((a) => a.enrollmentId));
      return { applied: done, tasksCancelled: found.filter((e) => acted.has(e.id)).reduce((n, e) => n + e.openTasks, 0) };
    });
    engine.notify(applied);
    out.batches++;
    out.stopped += applied.filter((a) => a.result.outcome === 'applied' && a.result.next.state === 'stopped').length;
    out.tasksCancelled += tasksCancelled;
  }
  return out;
}

/** Deletes the leads (their enrollments, tasks, list memberships and tags go with them). `deleted`: leads deleted; counted into `o.progress` as each batch commits (as the stop's). */
export async function deleteLeadsInBatches(db: Db, workspaceId: string, leadIds: readonly string[], o: { batch?: number; progress?: DeleteReport } = {}): Promise<DeleteReport> {
  const out = o.progress ?? { batches: 0, deleted: 0 };
  for (const part of chunks(leadIds, o.batch ?? BULK_BATCH)) {
    const deleted = await db.transaction().execute((tx) => deleteLeads(tx, workspaceId, part));
    out.deleted += deleted;
    out.batches++;
  }
  return out;
}
