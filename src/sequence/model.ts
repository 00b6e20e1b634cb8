import type { Delay, SendWindow } from '../calendar/index.ts';
import type { BranchFacts, Condition } from './conditions.ts';

/** The engine's view of sequences and enrollments: plain data, no I/O. */

export type StepKind = 'email' | 'call' | 'manual' | 'wait' | 'branch';

/**
 * What follows an arm's last step: the steps after the branch (rejoin), the end of the enrollment,
 * or a move to another sequence (a subsequence) whose first step is due no earlier than `after`.
 */
export type ArmThen = 'continue' | 'end' | { moveTo: string; after: Delay };

/** One arm of a branch step: chosen when `when` holds (no `when`: the default arm, always last). */
export interface BranchArm {
  key: string;
  when?: Condition;
  then: ArmThen;
}

/** The mark in `branchChoices` of a branch where no arm matched: the enrollment went on after it. */
export { NO_ARM } from '../common/no-arm.ts';

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
  /** An email step a live variant of which has no subject of its own: sent as a reply in the enrollment's thread, which must exist (thread-entry.ts). */
  inThread?: boolean;
  /** Live A/B variants of an email step, with their weights. */
  variants?: Array<{ id: string; weight: number }>;
  /** The variant declared the experiment's winner: enrollments from `since` (epoch ms) on all get it (experiments/assignment.ts). */
  winner?: { armId: string; since: number } | null;
  /** A branch step's arms, in the order they are weighed. */
  arms?: BranchArm[];
  /** A step inside a branch arm: the branch step's id and the arm's key. It runs only in that arm. */
  arm?: { branchId: string; key: string };
  /** Hours of the day this step may be sent, inside the sequence's window (a timing arm's send hours; sequence/arm-view.ts). */
  window?: SendWindow;
}

/** What one arm of a sequence experiment fixes on one step: its variant, its delay, its send hours. */
export interface ArmStepChoice {
  variantId?: string;
  delay?: Delay;
  window?: SendWindow;
}

/** One arm of a sequence experiment (sequence/arm-view.ts): choices on one or more steps, and perhaps an order. */
export interface SequenceArm {
  key: string;
  weight: number;
  /** By step id. */
  steps: Record<string, ArmStepChoice>;
  /** Step ids in the order this arm runs them; they take the places (and delays) the same steps hold in the sequence. */
  order?: string[];
}

/**
 * An experiment declared on the sequence: its arms may differ in content on several steps and in
 * timing (delay, send hours, order). The arm is chosen once, at enrollment, and kept on the
 * enrollment (`experimentArms`), so no retry, restart or edit moves an enrollment between arms.
 */
export interface SequenceExperiment {
  key: string;
  arms: SequenceArm[];
  /** The declared winner (auto_winner): enrollments made from `since` (epoch ms) on all get arm `armKey`. */
  winner?: { armKey: string; since: number } | null;
}

/** A reply intent's rule: 'notify' makes a task for the enrollment's owner; a move enrolls the lead in another sequence. */
export type ReplyRule = 'notify' | { moveTo: string; after: Delay };

/** The reply intents (ingest/types.ts ReplyIntent) a rule can be given; an unsubscribe reply always opts out. */
export const replyRuleIntents = ['interested', 'not_interested', 'wrong_person', 'referral', 'question', 'neutral'] as const;
export type ReplyRuleIntent = (typeof replyRuleIntents)[number];

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
  /** What a reply of a given intent does besides stopping the enrollment. */
  onReply?: Partial<Record<ReplyRuleIntent, ReplyRule>>;
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
  /** Experiments that span steps or vary timing (sequence/arm-view.ts). */
  experiments?: SequenceExperiment[];
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
  /** The arm chosen at each branch step it passed (by branch step id), or NO_ARM. Decided once. */
  branchChoices?: Record<string, string>;
  /** The arm of each sequence experiment, by experiment key, fixed at enrollment; NO_ARM: not in it. */
  experimentArms?: Record<string, string>;
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
  /** `notBefore`: the first step is due no earlier (a subsequence's `after`). */
  | { type: 'enrolled'; notBefore?: number }
  /** `facts`: gathered by the service when the due step is a branch (conditions.ts). */
  | { type: 'step_due'; facts?: BranchFacts }
  | { type: 'step_sent'; stepId: string; at: number; messageId?: string }
  | { type: 'send_failed'; stepId: string; permanent: boolean; reason: string }
  /** `intent`: the reply's classified intent (ingest), when the classifier was sure of it. */
  | { type: 'reply'; messageId?: string; intent?: string; from?: string }
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
  | { type: 'suppress'; reason: 'hard_bounce' | 'unsubscribe' }
  /** Enroll the lead in the workspace's sequence `sequenceKey`, its first step due no earlier than `notBefore`; this enrollment ends 'moved'. */
  | { type: 'move_to_sequence'; sequenceKey: string; notBefore: number; reason: string }
  /** A task for the enrollment's owner (an interested reply), not tied to a step. */
  | { type: 'notify_owner'; title: string };

export interface TransitionResult {
  /** 'ignored' when the event does not apply in the current state; the journal still records why. */
  outcome: 'applied' | 'ignored';
  next: Enrollment;
  effects: Effect[];
  note?: string;
}
