import type { Selectable } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import { matchLeadByPhone, type PhoneMatch } from '../leads/match-phone.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import type { CallOutcome } from '../sequence/model.ts';
import { recordTaskOutcome, type TaskOutcomeResult } from '../sequence/task-outcome.ts';
import type { PhoneCallTable } from '../store/schema.ts';
import type { Db, Store, Tx } from '../store/store.ts';
import { workspaceRow } from '../workspace/workspace-row.ts';
import { applyProgress, defaultSweepPolicy, silentEnd, type ProgressChange, type ProgressEvent, type SweepPolicy } from './call-progress.ts';
import { callingHours } from './calling-hours.ts';

/**
 * Call records: written before the phone rings, moved along by the softphone's reports, closed by
 * the rep's outcome, which is the call task's event (sequence/task-outcome.ts). Every call has a
 * record whatever dies mid-call: an abnormal end is 'dropped' at once, and a live call the softphone
 * stopped reporting on is dropped by the sweep.
 */
export interface CallDeps {
  store: Store;
  clock: Clock;
  random: Random;
  service: EnrollmentService;
}

export type PhoneCallRow = Selectable<PhoneCallTable>;

/** What a rep may say of a call: a call task's outcomes (CallOutcome). 'dropped' is the record's own word. */
export type RepCallOutcome = CallOutcome;

export interface StartCall {
  workspaceId: string;
  userId: string | null;
  /** The call task being worked; or `leadId` for a call from the lead's page. */
  taskId?: string;
  leadId?: string;
  allowOutsideHours?: boolean;
}

/**
 * Opens the record of an outbound call from a call task (its lead and enrollment) or a lead, to the
 * lead's E.164 number, refusing a lead with no diallable number and, unless asked, the lead's night.
 */
export async function startCall(deps: CallDeps, s: StartCall): Promise<PhoneCallRow> {
  const db = deps.store.db;
  const now = deps.clock.now();
  let leadId = s.leadId ?? null;
  let enrollmentId: string | null = null;
  let zone: string | null = null;
  let attempt = 1;
  if (s.taskId) {
    const t = await db
      .selectFrom('task')
      .innerJoin('enrollment', 'enrollment.id', 'task.enrollment_id')
      .select(['task.kind', 'task.state', 'task.attempts', 'task.enrollment_id', 'enrollment.lead_id', 'enrollment.time_zone'])
      .where('task.workspace_id', '=', s.workspaceId)
      .where('task.id', '=', s.taskId)
      .executeTakeFirst();
    if (!t) throw cadenzaError('NOT_FOUND', 'no such task');
    if (t.kind !== 'call') throw cadenzaError('INVALID_INPUT', 'this task is not a call');
    if (t.state !== 'open') throw cadenzaError('CONFLICT', `the task is already ${t.state}`);
    leadId = t.lead_id;
    enrollmentId = t.enrollment_id;
    zone = t.time_zone;
    attempt = t.attempts + 1;
  }
  if (!leadId) throw cadenzaError('INVALID_INPUT', 'give a taskId or a leadId');
  const lead = await db
    .selectFrom('lead')
    .innerJoin('workspace', 'workspace.id', 'lead.workspace_id')
    .select(['lead.id', 'lead.phone', 'lead.phone_e164', 'lead.phone_reason', 'lead.time_zone', 'workspace.time_zone as ws_zone'])
    .where('lead.workspace_id', '=', s.workspaceId)
    .where('lead.id', '=', leadId)
    .executeTakeFirst();
  if (!lead) throw cadenzaError('NOT_FOUND', 'no such lead');
  if (!lead.phone_e164) {
    const reason = lead.phone ? (lead.phone_reason ?? 'the number could not be read') : 'the lead has no phone number';
    throw cadenzaError('NOT_DIALLABLE', `cannot dial this lead: ${reason}`, { reason });
  }
  const hours = callingHours(now, zone ?? lead.time_zone ?? lead.ws_zone);
  if (!hours.ok && !s.allowOutsideHours) throw cadenzaError('OUTSIDE_CALLING_HOURS', `it is ${hours.local} for this lead: call between 08:00 and 21:00 their time`, { local: hours.local });
  const id = newId(now, deps.random);
  return db
    .insertInto('phone_call')
    .values({
      id,
      workspace_id: s.workspaceId,
      lead_id: lead.id,
      task_id: s.taskId ?? null,
      enrollment_id: enrollmentId,
      placed_by: s.userId,
      direction: 'outbound',
      source: 'dialer',
      remote_e164: lead.phone_e164,
      attempt,
      seen_at: new Date(now),
      created_at: new Date(now),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * An incoming call the telephony side announces: its record, and the leads its number matches (the
 * first the best guess), a national number read in the workspace's country.
 */
export async function inboundCall(deps: CallDeps, workspaceId: string, from: string, userId: string | null = null): Promise<{ call: PhoneCallRow; match: PhoneMatch }> {
  const ws = await workspaceRow(deps.store.db, workspaceId);
  const match = await matchLeadByPhone(deps.store.db, workspaceId, from, ws?.country ?? null);
  const now = deps.clock.now();
  const call = await deps.store.db
    .insertInto('phone_call')
    .values({
      id: newId(now, deps.random),
      workspace_id: workspaceId,
      lead_id: match.leads[0]?.id ?? null,
      // The rep whose browser rang (Kamailio routes a call to the registration its request URI names).
      placed_by: userId,
      direction: 'inbound',
      source: 'dialer',
      remote_e164: match.caller.e164,
      state: 'ringing',
      ringing_at: new Date(now),
      seen_at: new Date(now),
      created_at: new Date(now),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { call, match };
}

/** A call with its recording's size and age when it has one (the sealed audio stays in the table). */
export type CallWithRecording = PhoneCallRow & {
  rec_ms: number | null;
  rec_bytes: number | null;
  rec_at: Date | null;
  /** The recording's transcription, when it has a job (src/dialer/transcribe/queue.ts). */
  tr_state: 'pending' | 'running' | 'done' | 'failed' | null;
  tr_error: string | null;
};

function callsWithRecording(db: Db, workspaceId: string) {
  return db
    .selectFrom('phone_call')
    .leftJoin('phone_call_recording as r', 'r.call_id', 'phone_call.id')
    .leftJoin('call_transcript as t', 't.call_id', 'phone_call.id')
    .selectAll('phone_call')
    .select(['r.duration_ms as rec_ms', 'r.bytes as rec_bytes', 'r.created_at as rec_at', 't.state as tr_state', 't.error_message as tr_error'])
    .where('phone_call.workspace_id', '=', workspaceId);
}

/** The workspace's calls, newest first, or one lead's. */
export async function listCalls(db: Db, workspaceId: string, leadId: string | undefined, limit: number): Promise<CallWithRecording[]> {
  let q = callsWithRecording(db, workspaceId);
  if (leadId) q = q.where('phone_call.lead_id', '=', leadId);
  return q.orderBy('phone_call.created_at', 'desc').orderBy('phone_call.id', 'desc').limit(limit).execute();
}

/** One of the workspace's calls (another workspace's is not found). */
export async function findCall(db: Db, workspaceId: string, callId: string): Promise<CallWithRecording | undefined> {
  return callsWithRecording(db, workspaceId).where('phone_call.id', '=', callId).executeTakeFirst();
}

async function lockCall(tx: Tx, workspaceId: string, callId: string): Promise<PhoneCallRow> {
  const c = await tx.selectFrom('phone_call').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', callId).forUpdate().executeTakeFirst();
  if (!c) throw cadenzaError('NOT_FOUND', 'no such call');
  return c;
}

const ms = (d: Date | null) => (d === null ? null : d.getTime());
const times = (c: PhoneCallRow) => ({ state: c.state, outcome: c.outcome, createdAt: c.created_at.getTime(), ringingAt: ms(c.ringing_at), answeredAt: ms(c.answered_at), endedAt: ms(c.ended_at) });

function changeSet(ch: ProgressChange, now: number) {
  return {
    state: ch.state,
    ringing_at: ch.ringingAt === null ? null : new Date(ch.ringingAt),
    answered_at: ch.answeredAt === null ? null : new Date(ch.answeredAt),
    ...(ch.state === 'ended' ? { ended_at: new Date(ch.endedAt!), duration_ms: ch.durationMs, end_cause: ch.endCause, suggested: ch.suggested } : {}),
    ...(ch.outcome ? { outcome: ch.outcome, outcome_at: new Date(now) } : {}),
    seen_at: new Date(now),
  };
}

/** A progress report from the softphone; a stale or repeated one changes nothing and says so. */
export async function reportProgress(deps: CallDeps, workspaceId: string, callId: string, ev: ProgressEvent & { sipCallId?: string }): Promise<{ call: PhoneCallRow; ignored: string | null }> {
  const now = deps.clock.now();
  return deps.store.db.transaction().execute(async (tx) => {
    const c = await lockCall(tx, workspaceId, callId);
    const r = applyProgress(times(c), ev);
    if ('ignored' in r) return { call: c, ignored: r.ignored };
    const call = await tx
      .updateTable('phone_call')
      .set({ ...changeSet(r.change, now), ...(ev.sipCallId && !c.sip_call_id ? { sip_call_id: ev.sipCallId } : {}) })
      .where('id', '=', c.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { call, ignored: null };
  });
}

export interface LoggedOutcome {
  call: PhoneCallRow;
  /** The call task's result (still open with a retry time, or closed), or null for a call with no open task. */
  task: TaskOutcomeResult | null;
}

/**
 * The rep's outcome of a call, given once: the call is closed with it (ended now if the softphone
 * never said so), and its open call task gets the outcome as its event. The same outcome given again
 * answers as the first time; another one is a conflict. A 'dropped' call may still be given the real
 * outcome (the rep knows what happened before the line died). A wrong number is flagged on the lead,
 * so no other sequence dials it.
 */
export async function logCallOutcome(deps: CallDeps, workspaceId: string, callId: string, outcome: RepCallOutcome, notes: string | null, by: 'rep' | 'sweep' = 'rep'): Promise<LoggedOutcome> {
  const now = deps.clock.now();
  const out = await deps.store.db.transaction().execute((tx) => logOutcomeIn(tx, deps, workspaceId, callId, outcome, notes, by, now));
  deps.service.notify(out.task?.applied ?? []);
  return out;
}

/** logCallOutcome inside the caller's transaction; the caller notifies the service once it commits. */
async function logOutcomeIn(tx: Tx, deps: CallDeps, workspaceId: string, callId: string, outcome: RepCallOutcome, notes: string | null, by: 'rep' | 'sweep', now: number): Promise<LoggedOutcome> {
  const c = await lockCall(tx, workspaceId, callId);
  // The sweep only fills in what nobody gave, even if a rep gave it a moment ago.
  if (by === 'sweep' && c.outcome !== null) return { call: c, task: null };
  if (c.outcome !== null && c.outcome !== 'dropped') {
    if (c.outcome === outcome) return { call: c, task: null };
    throw cadenzaError('CONFLICT', `this call was already logged as ${c.outcome}`, { outcome: c.outcome });
  }
  let end: Partial<ReturnType<typeof changeSet>> = {};
  if (c.state !== 'ended') {
    const r = applyProgress(times(c), { event: 'ended', at: now, cause: 'hangup' });
    if (!('ignored' in r)) end = changeSet({ ...r.change, outcome: null }, now);
  }
  const call = await tx
    .updateTable('phone_call')
    .set({ ...end, outcome, outcome_at: new Date(now), ...(notes !== null ? { notes } : {}) })
    .where('id', '=', c.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (outcome === 'wrong_number' && c.lead_id && c.remote_e164) await flagWrongNumber(tx, c.lead_id, c.remote_e164, now);
  let task: TaskOutcomeResult | null = null;
  if (c.task_id && c.enrollment_id) {
    const t = await tx.selectFrom('task').select(['id', 'kind', 'enrollment_id', 'step_id']).where('id', '=', c.task_id).executeTakeFirst();
    if (t) task = await recordTaskOutcome(tx, deps.service, { id: t.id, kind: t.kind, enrollmentId: t.enrollment_id, stepId: t.step_id }, outcome, now);
  }
  return { call, task };
}

/** A rep reached someone else on this number: the lead's number is flagged (only if it is still that number). */
async function flagWrongNumber(tx: Tx, leadId: string, e164: string, now: number): Promise<void> {
  const day = new Date(now).toISOString().slice(0, 10);
  await tx.updateTable('lead').set({ phone_status: 'flagged', phone_reason: `wrong number: a call on ${day} reached someone else` }).where('id', '=', leadId).where('phone_e164', '=', e164).execute();
}

/**
 * A call task's outcome logged by hand (the rep dialled from another phone): a 'logged' call record
 * and the task's event, in one go. Returns null when the task is not open.
 */
export async function logTaskCall(deps: CallDeps, workspaceId: string, userId: string | null, taskId: string, outcome: RepCallOutcome, notes: string | null, durationMs: number | null): Promise<LoggedOutcome | null> {
  const now = deps.clock.now();
  // One transaction for the record and its outcome: a crash between the two would leave an ended
  // call with no outcome and no suggestion, which the sweep never looks at again. The task row is
  // locked so that a double click logs one call, not two.
  const out = await deps.store.db.transaction().execute(async (tx) => {
    const t = await tx
      .selectFrom('task')
      .innerJoin('enrollment', 'enrollment.id', 'task.enrollment_id')
      .innerJoin('lead', 'lead.id', 'enrollment.lead_id')
      .select(['task.id', 'task.state', 'task.attempts', 'task.enrollment_id', 'enrollment.lead_id', 'lead.phone_e164'])
      .where('task.workspace_id', '=', workspaceId)
      .where('task.id', '=', taskId)
      .forUpdate('task')
      .executeTakeFirst();
    if (!t) throw cadenzaError('NOT_FOUND', 'no such task');
    if (t.state !== 'open') return null;
    const id = newId(now, deps.random);
    await tx
      .insertInto('phone_call')
      .values({
        id,
        workspace_id: workspaceId,
        lead_id: t.lead_id,
        task_id: t.id,
        enrollment_id: t.enrollment_id,
        placed_by: userId,
        direction: 'outbound',
        source: 'logged',
        remote_e164: t.phone_e164,
        state: 'ended',
        attempt: t.attempts + 1,
        ended_at: new Date(now),
        duration_ms: durationMs,
        seen_at: new Date(now),
        created_at: new Date(now),
      })
      .execute();
    return logOutcomeIn(tx, deps, workspaceId, id, outcome, notes, 'rep', now);
  });
  if (out) deps.service.notify(out.task?.applied ?? []);
  return out;
}

export interface SweepResult {
  /** Live calls the softphone went silent on, now ended as dropped. */
  dropped: number;
  /** Ended calls nobody gave an outcome, now given their suggested one (their task moved on or retried). */
  autoLogged: number;
}

/**
 * Keeps every call's record whole when people and browsers do not: a live call silent for
 * `silentMs` ends as dropped (the browser or its network died; the task stays open for another try),
 * and an ended call left without an outcome for `unloggedMs` is given the outcome its end suggested,
 * so a forgotten click never holds a sequence for good. Bounded per run; run it every minute.
 */
export async function sweepCalls(deps: CallDeps, policy: SweepPolicy = defaultSweepPolicy, limit = 200): Promise<SweepResult> {
  const now = deps.clock.now();
  const db = deps.store.db;
  const silent = await db.selectFrom('phone_call').select(['id', 'workspace_id']).where('state', '<>', 'ended').where('seen_at', '<', new Date(now - policy.silentMs)).orderBy('seen_at').limit(limit).execute();
  let dropped = 0;
  for (const s of silent) {
    await db.transaction().execute(async (tx) => {
      const c = await lockCall(tx, s.workspace_id, s.id);
      if (c.state === 'ended' || c.seen_at.getTime() >= now - policy.silentMs) return;
      // The end is placed at the last word heard, not now: the call's duration is what was heard of it.
      const ch = silentEnd(times(c), c.seen_at.getTime());
      await tx.updateTable('phone_call').set({ ...changeSet(ch, now), seen_at: c.seen_at, end_cause: 'silent' }).where('id', '=', c.id).execute();
      dropped++;
    });
  }
  const unlogged = await db
    .selectFrom('phone_call')
    .select(['id', 'workspace_id', 'suggested'])
    .where('state', '=', 'ended')
    .where('outcome', 'is', null)
    .where('suggested', 'in', ['connected', 'no_answer', 'busy'])
    .where('ended_at', '<', new Date(now - policy.unloggedMs))
    .orderBy('ended_at')
    .limit(limit)
    .execute();
  let autoLogged = 0;
  for (const u of unlogged) {
    await logCallOutcome(deps, u.workspace_id, u.id, u.suggested as RepCallOutcome, null, 'sweep');
    autoLogged++;
  }
  return { dropped, autoLogged };
}
