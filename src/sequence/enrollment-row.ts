import type { Enrollment } from './model.ts';
import type { EnrollmentRow } from '../store/schema.ts';

/** Conversion between the enrollment row and the engine's plain enrollment (times as epoch ms). */

export interface EnrollmentContext {
  country: string | null;
  region: string | null;
}

export function fromRow(r: EnrollmentRow, ctx: EnrollmentContext): Enrollment {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    sequenceId: r.sequence_id,
    leadId: r.lead_id,
    state: r.state,
    stateReason: r.state_reason,
    waitingFor: r.waiting_for,
    nextStepId: r.next_step_id,
    lastStepId: r.last_step_id,
    lastStepAt: ms(r.last_step_at),
    doneStepIds: r.done_step_ids,
    dueAt: ms(r.due_at),
    pausedDueAt: ms(r.paused_due_at),
    zone: r.time_zone,
    country: ctx.country,
    region: ctx.region,
    softBounces: r.soft_bounces,
    enrolledAt: r.created_at.getTime(),
    branchChoices: parseChoices(r.branch_choices),
    experimentArms: parseChoices(r.experiment_arms),
  };
}

function ms(d: Date | null): number | null {
  return d === null ? null : d.getTime();
}

/** The jsonb column as PGlite and node-postgres return it (an object), or as text from a raw select. */
function parseChoices(v: unknown): Record<string, string> {
  if (typeof v === 'string') return JSON.parse(v) as Record<string, string>;
  return (v ?? {}) as Record<string, string>;
}
