import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Tx } from '../store/store.ts';
import type { Effect, Enrollment, SequenceDef } from './model.ts';
import { jitterFor } from './plan.ts';

export interface EffectContext {
  tx: Tx;
  clock: Clock;
  random: Random;
  seq: SequenceDef;
  enrollment: Enrollment;
  mailboxId: string | null;
  emailNorm: string;
}

/**
 * Carries out a transition's effects inside the transition's own transaction. Timer effects need
 * no SQL here: the enrollment's due_at column, written with the state, is the durable timer.
 * Returns the ids of the enrollments of the same lead stopped because the address was suppressed.
 */
export async function applyEffects(ctx: EffectContext, effects: Effect[]): Promise<void> {
  const { tx, enrollment: e } = ctx;
  for (const fx of effects) {
    switch (fx.type) {
      case 'create_send_request': {
        // The unique (enrollment_id, step_id) key makes a second request impossible (promise 1).
        // A request cancelled before it ever reached a server (a pause) is revived under the same
        // key; one in flight, sent or unknown never is.
        await sql`
          insert into send_request (id, workspace_id, enrollment_id, step_id, mailbox_id, variant_id, state, due_at)
          values (${newId(ctx.clock.now(), ctx.random)}, ${e.workspaceId}, ${e.id}, ${fx.stepId}, ${ctx.mailboxId},
                  ${pickVariant(ctx.seq, e.id, fx.stepId)}, 'queued', ${new Date(fx.dueAt)})
          on conflict (enrollment_id, step_id) do update
            set state = 'queued', due_at = excluded.due_at, last_error = null, updated_at = ${new Date(ctx.clock.now())}
            where send_request.state = 'cancelled'`.execute(tx);
        break;
      }
      case 'cancel_send_requests':
        await tx
          .updateTable('send_request')
          .set({ state: 'cancelled', updated_at: new Date(ctx.clock.now()) })
          .where('enrollment_id', '=', e.id)
          .where('state', '=', 'queued')
          .execute();
        break;
      case 'create_task':
        await tx
          .insertInto('task')
          .values({ id: newId(ctx.clock.now(), ctx.random), workspace_id: e.workspaceId, enrollment_id: e.id, step_id: fx.stepId, kind: fx.kind, title: fx.title, due_at: new Date(fx.dueAt) })
          .onConflict((oc) => oc.columns(['enrollment_id', 'step_id']).doNothing())
          .execute();
        break;
      case 'cancel_tasks':
        await tx.updateTable('task').set({ state: 'cancelled' }).where('enrollment_id', '=', e.id).where('state', '=', 'open').execute();
        break;
      case 'suppress':
        await tx
          .insertInto('suppression')
          .values({ workspace_id: e.workspaceId, email_norm: ctx.emailNorm, reason: fx.reason, source: `enrollment:${e.id}` })
          .onConflict((oc) => oc.columns(['workspace_id', 'email_norm']).doNothing())
          .execute();
        break;
      case 'schedule_timer':
      case 'cancel_timer':
        break;
    }
  }
}

/** Weighted choice of an email step's variant, stable for the enrollment. */
export function pickVariant(seq: SequenceDef, enrollmentId: string, stepId: string): string | null {
  const step = seq.steps.find((s) => s.id === stepId);
  const vs = (step?.variants ?? []).filter((v) => v.weight > 0);
  if (vs.length === 0) return null;
  const total = vs.reduce((a, v) => a + v.weight, 0);
  let x = jitterFor(enrollmentId, `${stepId}:variant`) * total;
  for (const v of vs) {
    x -= v.weight;
    if (x < 0) return v.id;
  }
  return vs[vs.length - 1]!.id;
}
