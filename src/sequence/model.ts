import type { Delay, SendWindow } from '../calendar/index.ts';

/** The engine's view of sequences and enrollments: plain data, no I/O. */

export type StepKind = 'email' | 'call' | 'manual' | 'wait';

export interface StepDef {
  /** Stable id: send requests and tasks are keyed by it, never by position. */
  id: string;
  key: string;
  position: number;
  kind: StepKind;
  /** Measured from the previous step's completion (or from enrollment, for the first step). */
  delay: Delay;
  /** Removed from the sequence; kept so that enrollments and history can see where it stood. */
  archived: boolean;
  /** For call and manual steps: the sequence waits until the task is completed (default true). */
  waitForTask?: boolean;
  title?: string;
  /** For call steps: which outcomes try the call again, how many more times, and after what delay. */
  retry?: CallRetry;
  /** Live A/B variants of an email step, with their weights. */
  variants?: Array<{ id: string; weight: number }>;
  /** The variant declared the experiment's winner: enrollments from `since` (epoch ms) on all get it (experiments/assignment.ts). */
  winner?: { armId: string; since: number } | null;
}

export interface StopRules {
  /** What an out-of-office reply does: pause until the return date (default) or nothing. */
  onOutOfOffice: 'pause' | 'ignore';
  /** Pause length when an out-of-office note gives no return date. */
  oooDefaultPauseDays: number;
  /** What a booked meeting does: finish the enrollment (default) or let it continue. */
  onMeetingBooked: 'finish' | 'continue';
  /** Soft bounces tolerated before the enrollment is stopped as bounced. */
  maxSoftBounces: number;
  /** A reply stops the other live enrollments of the lead's company (email domain, free-mail excluded); ingest/act.ts. */
  stopCompanyOnReply?: boolean;
}

export const defaultStopRules: StopRules = {
  onOutOfOffice: 'pause',
  oooDefaultPauseDays: 7,
  onMeetingBooked: 'finish',
  maxSoftBounces: 3,
};

export interface SequenceDef {
  id: string;
  workspaceId: string;
  window: SendWindow;
  skipHolidays: boolean;
  jitterMinutes: number;
  stopRules: StopRules;
  /** Every step, archived ones included, in position order. */
  steps: StepDef[];
}

/** 'moved': a person moved the lead to another sequence; `movedTo` names the enrollment that replaced this one. */
export type EnrollmentState = 'active' | 'paused' | 'replied' | 'bounced' | 'unsubscribed' | 'finished' | 'stopped' | 'failed' | 'moved';

export const terminalStates: ReadonlySet<EnrollmentState> = new Set(['replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed', 'moved']);

export function isTerminal(s: EnrollmentState): boolean {
  return terminalStates.has(s);
}

export type WaitingFor = 'timer' | 'send' | 'task';

export interface Enrollment {
  id: string;
  workspaceId: string;
  sequenceId: string;
  leadId: string;
  state: EnrollmentState;
  stateReason: string | null;
  waitingFor: WaitingFor | null;
  /** The step that runs when the timer fires, or the one whose send or task is awaited. */
  nextStepId: string | null;
  lastStepId: string | null;
  lastStepAt: number | null;
  /** Every step this enrollment ran, and those a move told it to skip (it started at a later step): none of them runs. */
  doneStepIds: string[];
  /** The durable timer (epoch ms): step due when active, resume when paused. */
  dueAt: number | null;
  /** While paused: the due time the pause interrupted. */
  pausedDueAt: number | null;
  /** Resolved once at enrollment: lead's zone, else the mailbox's, else the workspace's. */
  zone: string;
  country: string | null;
  region: string | null;
  softBounces: number;
  enrolledAt: number;
}

export type CallOutcome = 'connected' | 'no_answer' | 'voicemail' | 'busy' | 'wrong_number' | 'meeting_booked' | 'not_interested';

/** The outcomes of a call that reached nobody, which a call step may try again. */
export type RetryableCallOutcome = 'no_answer' | 'voicemail' | 'busy';
export const retryableCallOutcomes: readonly RetryableCallOutcome[] = ['no_answer', 'voicemail', 'busy'];

/**
 * A call step's retry rule: after one of `on`, the same task comes due again `after` later (in the
 * lead's calling window), up to `attempts` more tries; then the sequence moves on as after any call.
 */
export interface CallRetry {
  attempts: number;
  after: Delay;
  on: RetryableCallOutcome[];
}

export type EngineEvent =
  | { type: 'enrolled' }
  | { type: 'step_due' }
  | { type: 'step_sent'; stepId: string; at: number; messageId?: string }
  | { type: 'send_failed'; stepId: string; permanent: boolean; reason: string }
  | { type: 'reply'; messageId?: string }
  | { type: 'bounce'; hard: boolean; reason?: string }
  | { type: 'out_of_office'; returnAt?: number }
  | { type: 'unsubscribe'; source?: string }
  | { type: 'meeting_booked' }
  /** `attempt`: which try of the task this call was (1 for the first; the retry rule counts them). */
  | { type: 'call_outcome'; stepId: string; outcome: CallOutcome; attempt?: number }
  | { type: 'task_completed'; stepId: string; outcome?: 'done' | 'skipped' }
  | { type: 'pause'; until?: number; reason?: string }
  | { type: 'resume' }
  | { type: 'stop'; reason?: string }
  /** A person moved the lead to another sequence: this enrollment ends, `toEnrollmentId` carries on. */
  | { type: 'move'; toSequenceId: string; toSequenceName: string; toEnrollmentId: string }
  | { type: 'sequence_edited' };

export type EngineEventType = EngineEvent['type'];

/**
 * What the prospect does, as opposed to what a person or the machinery does to one enrollment. An
 * answer to a message sent by an enrollment that was since moved is about the person, not the old
 * sequence: the service passes these on to the enrollment that replaced it (moved_to), so a reply
 * to the first sequence's email still stops the second (promise 3).
 */
export const prospectSignals: ReadonlySet<EngineEventType> = new Set(['reply', 'bounce', 'out_of_office', 'unsubscribe', 'meeting_booked']);

export type Effect =
  | { type: 'create_send_request'; stepId: string; dueAt: number }
  | { type: 'cancel_send_requests' }
  | { type: 'create_task'; stepId: string; kind: 'call' | 'manual'; dueAt: number; title: string }
  | { type: 'cancel_tasks' }
  /** The step's open task comes due again (a call retried); the enrollment keeps waiting for it. */
  | { type: 'reschedule_task'; stepId: string; dueAt: number }
  | { type: 'schedule_timer'; at: number }
  | { type: 'cancel_timer' }
  | { type: 'suppress'; reason: 'hard_bounce' | 'unsubscribe' };

export interface TransitionResult {
  /** 'ignored' when the event does not apply in the current state; the journal still records why. */
  outcome: 'applied' | 'ignored';
  next: Enrollment;
  effects: Effect[];
  note?: string;
}
