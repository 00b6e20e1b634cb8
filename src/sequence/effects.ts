import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Tx } from '../store/store.ts';
import type { Effect, Enrollment, SequenceDef } from './model.ts';
import { armFor } from '../experiments/assignment.ts';
import { armedView } from './arm-view.ts';
import type { Suppression } from './suppress.ts';

/** One applied transition whose effects are to be carried out. */
export interface EffectItem {
  enrollment: Enrollment;
  seq: SequenceDef;
  mailboxId: string | null;
  emailNorm: string;
  effects: Effect[];
}

/** A suppress effect, for the service to hand to suppress() once the batch is written and journalled. */
export interface SuppressionAsked extends Suppression {
  workspaceId: string;
  /** The enrollment whose transition asked for it (spared by the stops: it is already transitioned). */
  enrollmentId: string;
}

/**
 * What a batch of transitions' effects ask for, gathered (pure but for the new rows' ids, drawn from
 * the injected random source). Timer effects need no SQL: the enrollment's due_at column, written
 * with its state, is the durable timer. Suppress effects are returned for the service to hand to
 * suppress() (suppress.ts, the one owner of promise 6) once the batch is written and journalled.
 */
export interface EffectPlan {
  sends: Array<{ id: string; ws: string; e: string; step: string; mb: string | null; variant: string | null; due: string }>;
  tasks: Array<{ id: string; ws: string; e: string; step: string; kind: string; title: string; due: string }>;
  cancelSends: string[];
  cancelTasks: string[];
  /** Open tasks that come due again (a call retried). */
  reschedules: Array<{ e: string; step: string; due: string }>;
  /** Tasks for the owner (an interested reply): keyed by the step the reply answered. */
  notices: Array<{ id: string; ws: string; e: string; step: string; kind: string; title: string; due: string }>;
  suppressions: SuppressionAsked[];
}

export function planEffects(deps: { clock: Clock; random: Random }, items: EffectItem[]): EffectPlan {
  const plan: EffectPlan = { sends: [], tasks: [], cancelSends: [], cancelTasks: [], reschedules: [], notices: [], suppressions: [] };
  const now = deps.clock.now();
  for (const it of items) {
    const e = it.enrollment;
    for (const fx of it.effects) {
      switch (fx.type) {
        case 'create_send_request':
          plan.sends.push({ id: newId(now, deps.random), ws: e.workspaceId, e: e.id, step: fx.stepId, mb: it.mailboxId, variant: pickVariant(it.seq, e, fx.stepId), due: iso(fx.dueAt) });
          break;
        case 'create_task':
          plan.tasks.push({ id: newId(now, deps.random), ws: e.workspaceId, e: e.id, step: fx.stepId, kind: fx.kind, title: fx.title, due: iso(fx.dueAt) });
          break;
        case 'cancel_send_requests':
          plan.cancelSends.push(e.id);
          break;
        case 'cancel_tasks':
          plan.cancelTasks.push(e.id);
          break;
        case 'reschedule_task':
          plan.reschedules.push({ e: e.id, step: fx.stepId, due: iso(fx.dueAt) });
          break;
        case 'suppress':
          plan.suppressions.push({ workspaceId: e.workspaceId, enrollmentId: e.id, email: it.emailNorm, reason: fx.reason, source: `enrollment:${e.id}` });
          break;
        case 'notify_owner': {
          const step = e.lastStepId ?? e.nextStepId ?? it.seq.steps[0]?.id;
          if (step) plan.notices.push({ id: newId(now, deps.random), ws: e.workspaceId, e: e.id, step, kind: 'manual', title: fx.title.slice(0, 500), due: iso(now) });
          break;
        }
        case 'schedule_timer':
        case 'cancel_timer':
        case 'move_to_sequence':
          // Moves are carried out by the service once the batch is written (enrollment-service.ts).
          break;
      }
    }
  }
  return plan;
}

/**
 * The cancellations a plan asks for, as statements for the service to run inside its one write of
 * the batch (enrollment-service.ts writeTransitions): queued send requests and open tasks of the
 * enrollments that stopped or paused.
 */
export function cancellations(plan: EffectPlan, at: Date): RawBuilder<unknown>[] {
  const out: RawBuilder<unknown>[] = [];
  if (plan.cancelSends.length) out.push(sql`update send_request set state = 'cancelled', updated_at = ${at} where enrollment_id = any(${plan.cancelSends}::uuid[]) and state = 'queued'`);
  if (plan.cancelTasks.length) out.push(sql`update task set state = 'cancelled' where enrollment_id = any(${plan.cancelTasks}::uuid[]) and state = 'open'`);
  return out;
}

/** Creates the send requests and tasks a plan asks for (and moves the tasks it reschedules), one statement per table, after the batch's write. */
export async function createWork(tx: Tx, plan: EffectPlan, at: Date): Promise<void> {
  const { sends, tasks } = plan;
  await rescheduleTasks(tx, plan);
  if (sends.length) {
    // The unique (enrollment_id, step_id) key makes a second request impossible (promise 1). A
    // request cancelled before it ever reached a server (a pause) is revived under the same key;
    // one in flight, sent or unknown never is.
    await sql`
      insert into send_request (id, workspace_id, enrollment_id, step_id, mailbox_id, variant_id, state, due_at, created_at, updated_at)
      select u.id, u.ws, u.e, u.step, u.mb, u.variant, 'queued', u.due, ${at}, ${at}
      from unnest(${col(sends, 'id')}::uuid[], ${col(sends, 'ws')}::uuid[], ${col(sends, 'e')}::uuid[], ${col(sends, 'step')}::uuid[],
                  ${col(sends, 'mb')}::uuid[], ${col(sends, 'variant')}::uuid[], ${col(sends, 'due')}::timestamptz[])
        as u(id, ws, e, step, mb, variant, due)
      on conflict (enrollment_id, step_id) do update
        set state = 'queued', due_at = excluded.due_at, updated_at = excluded.updated_at
        where send_request.state = 'cancelled'`.execute(tx);
  }
  if (tasks.length) {
    await sql`
      insert into task (id, workspace_id, enrollment_id, step_id, kind, title, due_at, created_at)
      select u.id, u.ws, u.e, u.step, u.kind, u.title, u.due, ${at}
      from unnest(${col(tasks, 'id')}::uuid[], ${col(tasks, 'ws')}::uuid[], ${col(tasks, 'e')}::uuid[], ${col(tasks, 'step')}::uuid[],
                  ${col(tasks, 'kind')}::text[], ${col(tasks, 'title')}::text[], ${col(tasks, 'due')}::timestamptz[])
        as u(id, ws, e, step, kind, title, due)
      on conflict (enrollment_id, step_id) do nothing`.execute(tx);
  }
  const n = plan.notices;
  if (n.length) {
    // A task is keyed by (enrollment, step): the step's own task, cancelled by the reply's stop
    // just before, is reopened as the notice; a step whose task was completed keeps it (no notice).
    await sql`
      insert into task (id, workspace_id, enrollment_id, step_id, kind, title, due_at, created_at)
      select u.id, u.ws, u.e, u.step, u.kind, u.title, u.due, ${at}
      from unnest(${col(n, 'id')}::uuid[], ${col(n, 'ws')}::uuid[], ${col(n, 'e')}::uuid[], ${col(n, 'step')}::uuid[],
                  ${col(n, 'kind')}::text[], ${col(n, 'title')}::text[], ${col(n, 'due')}::timestamptz[])
        as u(id, ws, e, step, kind, title, due)
      on conflict (enrollment_id, step_id) do update
        set kind = excluded.kind, title = excluded.title, due_at = excluded.due_at, state = 'open', outcome = null
        where task.state = 'cancelled'`.execute(tx);
  }
}

/** Moves the due time of the open tasks a plan reschedules (a call to try again); a closed task stays closed. */
async function rescheduleTasks(tx: Tx, plan: EffectPlan): Promise<void> {
  const r = plan.reschedules;
  if (!r.length) return;
  await sql`
    update task set due_at = u.due
    from unnest(${col(r, 'e')}::uuid[], ${col(r, 'step')}::uuid[], ${col(r, 'due')}::timestamptz[]) as u(e, step, due)
    where task.enrollment_id = u.e and task.step_id = u.step and task.state = 'open'`.execute(tx);
}

function col<T, K extends keyof T>(rows: T[], k: K): Array<T[K]> {
  return rows.map((r) => r[k]);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The variant of an email step this enrollment is sent: the step's experiment arm (the experiment
 * is the step, its arms the live variants; experiments/assignment.ts), unless the enrollment's arm
 * of a sequence experiment fixes it. Called once, when the send
 * request is created; the request keeps it, so a later edit of the variants never changes what an
 * enrollment already queued or was sent.
 */
export function pickVariant(seq: SequenceDef, e: Pick<Enrollment, 'id' | 'enrolledAt' | 'experimentArms'>, stepId: string): string | null {
  // A sequence experiment's arm may fix the variant (sequence/arm-view.ts); then that one is sent.
  const step = armedView(seq, e).steps.find((s) => s.id === stepId);
  return armFor(stepId, e, step?.variants ?? [], step?.winner ?? null);
}
