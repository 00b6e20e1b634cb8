import { sql } from 'kysely';
import type { CredentialTaskKind } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';

/**
 * The credential_task queries (0046_credential_task.sql), one per step of a task's life:
 *
 *   queued ──claim──► running ──finish──► done | failed
 *     │  ▲               │
 *     │  └───retry───────┘  (a revocation the provider did not take, with its backoff)
 *     └──withdraw──► cancelled  (the asker saw no sender take it in time)
 *
 * A running task whose claim ran out was left by a process that died: recoverStale queues a test
 * or a revocation again (both are safe to redo) and fails a reply, which is never redone on a
 * guess: its idempotency key (reply_request) settles it from the Sent folder when asked again.
 */

export type TaskOutcome =
  | { ok: true; value: unknown }
  | { ok: false; error: { code: string; message: string; details: Record<string, unknown>; userFacing?: boolean } };

export interface ClaimedTask {
  id: string;
  workspace_id: string;
  mailbox_id: string;
  kind: CredentialTaskKind;
  input: Record<string, unknown>;
  sealed: Buffer | null;
  attempts: number;
}

/** The membership role of the processes that carry tasks out (task-runner.ts joins it). */
export const RUNNER_ROLE = 'credential_tasks';

export async function enqueueTask(db: Db, t: { id: string; workspaceId: string; mailboxId: string; kind: CredentialTaskKind; input: Record<string, unknown>; now: number }): Promise<void> {
  const at = new Date(t.now);
  await db
    .insertInto('credential_task')
    .values({ id: t.id, workspace_id: t.workspaceId, mailbox_id: t.mailboxId, kind: t.kind, input: JSON.stringify(t.input), run_after: at, created_at: at, updated_at: at })
    .execute();
}

/** What the asker may read of its task: never `sealed` (the API's grants leave it out). */
export async function readTask(db: Db, id: string): Promise<{ state: 'queued' | 'running' | 'done' | 'failed' | 'cancelled'; result: TaskOutcome | null } | undefined> {
  const r = await db.selectFrom('credential_task').select(['state', 'result']).where('id', '=', id).executeTakeFirst();
  return r ? { state: r.state, result: (r.result as TaskOutcome | null) ?? null } : undefined;
}

/** Withdraws a task nobody claimed; false when a sender took it meanwhile. */
export async function withdrawIfQueued(db: Db, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('credential_task').set({ state: 'cancelled', updated_at: new Date(now) }).where('id', '=', id).where('state', '=', 'queued').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** How many runners' heartbeats are fresh (membership, ops/membership.ts). */
export async function liveRunners(db: Db, now: number, freshWithinMs: number): Promise<number> {
  const r = await db
    .selectFrom('member')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('role', '=', RUNNER_ROLE)
    .where('heartbeat_at', '>', new Date(now - freshWithinMs))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

// -- name: claim-credential-task
// The oldest due task, skip-locked so that several senders share the queue without waiting.
export async function claimTask(db: Db, now: number, claimForMs: number): Promise<ClaimedTask | undefined> {
  const r = await sql<ClaimedTask>`
    update credential_task
       set state = 'running', attempts = attempts + 1, claimed_until = ${new Date(now + claimForMs)}, updated_at = ${new Date(now)}
     where id = (select id from credential_task
                  where state = 'queued' and run_after <= ${new Date(now)}
                  order by run_after, id
                  limit 1
                  for update skip locked)
    returning id, workspace_id, mailbox_id, kind, input, sealed, attempts`.execute(db);
  return r.rows[0];
}

/** The task ended: its outcome kept for the asker, what it carried (text, sealed token) erased. */
export async function finishTask(db: Db, id: string, outcome: TaskOutcome, now: number): Promise<void> {
  await db
    .updateTable('credential_task')
    .set({ state: outcome.ok ? 'done' : 'failed', result: sql`${JSON.stringify(outcome)}::jsonb`, input: '{}', sealed: null, claimed_until: null, updated_at: new Date(now) })
    .where('id', '=', id)
    .execute();
}

/** Tried again at `runAfter`, with the last failure kept for whoever looks. */
export async function retryTask(db: Db, id: string, last: TaskOutcome, runAfter: number, now: number): Promise<void> {
  await db
    .updateTable('credential_task')
    .set({ state: 'queued', result: sql`${JSON.stringify(last)}::jsonb`, run_after: new Date(runAfter), claimed_until: null, updated_at: new Date(now) })
    .where('id', '=', id)
    .execute();
}

/** The file comment's rule for tasks left running by a dead process. */
export async function recoverStale(db: Db, now: number): Promise<{ requeued: number; failed: number }> {
  const at = new Date(now);
  const requeued = await db
    .updateTable('credential_task')
    .set({ state: 'queued', claimed_until: null, run_after: at, updated_at: at })
    .where('state', '=', 'running')
    .where('claimed_until', '<', at)
    .where('kind', '<>', 'reply')
    .executeTakeFirst();
  const lost: TaskOutcome = {
    ok: false,
    error: { code: 'SEND_UNCONFIRMED', message: 'The sender process stopped while sending this reply: it may have gone. Sending it again with the same idempotency key is safe (the Sent folder is searched first).', details: { retrySafe: false }, userFacing: true },
  };
  const failed = await db
    .updateTable('credential_task')
    .set({ state: 'failed', result: sql`${JSON.stringify(lost)}::jsonb`, input: '{}', claimed_until: null, updated_at: at })
    .where('state', '=', 'running')
    .where('claimed_until', '<', at)
    .where('kind', '=', 'reply')
    .executeTakeFirst();
  return { requeued: Number(requeued.numUpdatedRows), failed: Number(failed.numUpdatedRows) };
}

/** When the next queued task falls due (a revocation's retry), if any is queued. */
export async function nextDue(db: Db): Promise<number | undefined> {
  const r = await db.selectFrom('credential_task').select((eb) => eb.fn.min('run_after').as('at')).where('state', '=', 'queued').executeTakeFirst();
  return r?.at ? new Date(r.at as Date | string).getTime() : undefined;
}

/**
 * Tasks that ended before `before`: their answers were read long ago (an asker waits a minute at
 * most). What is left of them is an outcome (no text, no token: finishTask erased those), kept a
 * week for whoever looks into a removal's revocation, then deleted.
 */
export async function purgeFinished(db: Db, before: number): Promise<number> {
  const r = await db.deleteFrom('credential_task').where('state', 'in', ['done', 'failed', 'cancelled']).where('updated_at', '<', new Date(before)).executeTakeFirst();
  return Number(r.numDeletedRows);
}
