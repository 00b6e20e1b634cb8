import type { Db } from '../store/store.ts';
import { afterKey, type Keyset } from '../store/keyset.ts';
import { blockedReason, type Blocked } from './blocked.ts';
import type { EnrollmentState } from './model.ts';
import { isVerified } from '../mailbox/verification.ts';

/**
 * How enrollments are read for people (the API's enrollment views, `cadenza enrollments` and
 * `cadenza status`): one query, so they never show different things for one enrollment. Writes go
 * through the engine (enrollment-service.ts), never through here.
 */
function selectEnrollments(db: Db, workspaceId: string) {
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

/** Which enrollments a list shows; every filter given must match. */
export interface EnrollmentFilter {
  id?: string | undefined;
  sequenceId?: string | undefined;
  leadId?: string | undefined;
  /** The lead's normalised address (leads/email.ts). */
  leadEmailNorm?: string | undefined;
  state?: EnrollmentState | undefined;
  /** The next page: only the enrollments after this one, newest first. */
  after?: Keyset | undefined;
}

/** The workspace's enrollments matching the filter, newest first (created_at, then id), at most `limit`. */
export async function listEnrollments(db: Db, workspaceId: string, f: EnrollmentFilter, limit: number): Promise<EnrollmentRow[]> {
  let q = selectEnrollments(db, workspaceId);
  if (f.id) q = q.where('e.id', '=', f.id);
  if (f.sequenceId) q = q.where('e.sequence_id', '=', f.sequenceId);
  if (f.leadId) q = q.where('e.lead_id', '=', f.leadId);
  if (f.leadEmailNorm) q = q.where('l.email_norm', '=', f.leadEmailNorm);
  if (f.state) q = q.where('e.state', '=', f.state);
  if (f.after) q = q.where(afterKey('e.created_at', 'e.id', f.after));
  return q.orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').limit(limit).execute();
}

/** One enrollment of the workspace as people see it, or undefined (another workspace's is not found). */
export async function findEnrollment(db: Db, workspaceId: string, enrollmentId: string): Promise<EnrollmentRow | undefined> {
  return selectEnrollments(db, workspaceId).where('e.id', '=', enrollmentId).executeTakeFirst();
}

/**
 * The enrollments that may be blocked (blockedOf tells): paused for review, waiting for a send,
 * or waiting for a timer overdue since before `overdueBefore`; at most `limit`.
 */
export async function possiblyBlockedEnrollments(db: Db, workspaceId: string, overdueBefore: Date, limit: number): Promise<EnrollmentRow[]> {
  return selectEnrollments(db, workspaceId)
    .where((eb) =>
      eb.or([
        eb.and([eb('e.state', '=', 'paused'), eb('e.state_reason', '=', 'needs review')]),
        eb.and([eb('e.state', '=', 'active'), eb('e.waiting_for', '=', 'send')]),
        eb.and([eb('e.state', '=', 'active'), eb('e.waiting_for', '=', 'timer'), eb('e.due_at', '<', overdueBefore)]),
      ]),
    )
    .limit(limit)
    .execute();
}

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

/** An enrollment's send requests (one per step sent or planned), as the API and `cadenza enrollments show` read them. */
function selectEnrollmentSends(db: Db, workspaceId: string, enrollmentId: string) {
  return db
    .selectFrom('send_request as r')
    .innerJoin('step as st', 'st.id', 'r.step_id')
    .leftJoin('mailbox as m', 'm.id', 'r.mailbox_id')
    .select([
      'r.id', 'r.step_id', 'st.key as step_key', 'st.position', 'r.state', 'r.message_id', 'r.attempts', 'r.due_at', 'r.send_at', 'r.updated_at', 'r.last_error',
      'r.manual_resend', 'm.email as mailbox_email',
    ])
    .where('r.workspace_id', '=', workspaceId)
    .where('r.enrollment_id', '=', enrollmentId);
}

export type EnrollmentSendRow = Awaited<ReturnType<ReturnType<typeof selectEnrollmentSends>['executeTakeFirstOrThrow']>>;

/**
 * An enrollment's steps as they ran: 'step' in the sequence's step order (what the CLI shows),
 * 'queued' in the order the requests were made (the API's list; a step moved by an edit keeps its place).
 */
export async function listEnrollmentSends(db: Db, workspaceId: string, enrollmentId: string, order: 'step' | 'queued'): Promise<EnrollmentSendRow[]> {
  const q = selectEnrollmentSends(db, workspaceId, enrollmentId);
  return (order === 'step' ? q.orderBy('st.position').orderBy('r.created_at') : q.orderBy('r.created_at').orderBy('r.id')).execute();
}

/** One send request of the enrollment, or undefined when the enrollment (in this workspace) has no such send. */
export async function findEnrollmentSend(db: Db, workspaceId: string, enrollmentId: string, sendId: string): Promise<EnrollmentSendRow | undefined> {
  return selectEnrollmentSends(db, workspaceId, enrollmentId).where('r.id', '=', sendId).executeTakeFirst();
}

/** An enrollment's journal (what the engine did and why): its latest `limit` events, oldest first. */
export async function listEnrollmentEvents(db: Db, workspaceId: string, enrollmentId: string, limit: number) {
  const latest = await db
    .selectFrom('event')
    .select(['type', 'payload', 'at'])
    .where('workspace_id', '=', workspaceId)
    .where('enrollment_id', '=', enrollmentId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return latest.reverse();
}
