import type { Db } from '../store/store.ts';
import { blockedReason, type Blocked } from './blocked.ts';
import { isVerified } from '../mailbox/verification.ts';

/**
 * How enrollments are read for people (the API's enrollment views and `cadenza enrollments`):
 * one query, so the two never show different things for one enrollment. Writes go through the
 * engine (enrollment-service.ts), never through here.
 */
export function selectEnrollments(db: Db, workspaceId: string) {
  return db
    .selectFrom('enrollment as e')
    .innerJoin('lead as l', 'l.id', 'e.lead_id')
    .innerJoin('sequence as s', 's.id', 'e.sequence_id')
    .leftJoin('step as st', 'st.id', 'e.next_step_id')
    // The facts blockedOf() reads: the next step's send request and the enrollment's mailbox.
    .leftJoin('send_request as nr', (j) => j.onRef('nr.enrollment_id', '=', 'e.id').onRef('nr.step_id', '=', 'e.next_step_id'))
    .leftJoin('mailbox as mb', 'mb.id', 'e.mailbox_id')
    .select([
      'e.id', 'e.sequence_id', 's.name as sequence_name', 's.key as sequence_key', 'e.lead_id', 'l.email as lead_email', 'e.mailbox_id', 'e.state',
      'e.state_reason', 'e.waiting_for', 'st.key as next_step_key', 'e.due_at', 'e.time_zone', 'e.created_at', 'e.moved_to',
      'nr.state as next_request_state', 'nr.last_error as next_request_error', 'nr.attempts as next_request_attempts',
      'mb.email as mailbox_email', 'mb.health as mailbox_health', 'mb.health_reason as mailbox_health_reason', 'mb.removed_at as mailbox_removed_at', 'mb.settings as mailbox_settings',
    ])
    .where('e.workspace_id', '=', workspaceId);
}

export type EnrollmentRow = Awaited<ReturnType<ReturnType<typeof selectEnrollments>['executeTakeFirstOrThrow']>>;

/** Why an enrollment read by selectEnrollments cannot progress (blocked.ts), or null. */
export function blockedOf(r: EnrollmentRow, now: number): Blocked | null {
  return blockedReason({
    state: r.state,
    waitingFor: r.waiting_for,
    stateReason: r.state_reason,
    dueAt: r.due_at ? new Date(r.due_at).getTime() : null,
    request: r.next_request_state ? { state: r.next_request_state, lastError: r.next_request_error, attempts: r.next_request_attempts ?? 0 } : null,
    mailbox: r.mailbox_email
      ? { email: r.mailbox_email, health: r.mailbox_health ?? 'ok', healthReason: r.mailbox_health_reason, removed: r.mailbox_removed_at !== null, verified: isVerified(r.mailbox_settings) }
      : null,
    now,
  });
}

/** An enrollment's steps as they ran: each send request (one per step sent or planned) in step order. */
export function selectEnrollmentSends(db: Db, workspaceId: string, enrollmentId: string) {
  return db
    .selectFrom('send_request as r')
    .innerJoin('step as st', 'st.id', 'r.step_id')
    .leftJoin('mailbox as m', 'm.id', 'r.mailbox_id')
    .select(['r.id', 'st.key as step_key', 'st.position', 'r.state', 'r.message_id', 'r.attempts', 'r.due_at', 'r.send_at', 'r.updated_at', 'r.last_error', 'm.email as mailbox_email'])
    .where('r.workspace_id', '=', workspaceId)
    .where('r.enrollment_id', '=', enrollmentId)
    .orderBy('st.position')
    .orderBy('r.created_at');
}

/** An enrollment's journal (what the engine did and why), oldest first. */
export function selectEnrollmentEvents(db: Db, workspaceId: string, enrollmentId: string, limit: number) {
  return db
    .selectFrom('event')
    .select(['type', 'payload', 'at'])
    .where('workspace_id', '=', workspaceId)
    .where('enrollment_id', '=', enrollmentId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
}
