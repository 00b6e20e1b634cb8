/**
 * Pacing: when each mailbox sends. Pure arithmetic, no I/O, no clock, no Math.random; the store
 * side is ../dispatch/.
 *
 * - settings.ts: the working day and gap settings (workspace and mailbox `settings.pacing`).
 * - ramp.ts: the daily cap of a new mailbox, day by day.
 * - working-day.ts: one local date's seeded plan (start, end, lunch, hourly ceiling).
 * - bucket.ts: a mailbox's caps and gaps over the instants of its sends; the claim-time check.
 * - planner.ts: a send instant for every queued request of many mailboxes at once.
 * - rotation.ts: which pool mailbox takes new enrollments. (The bounce-rate classifier is
 *   mailbox health's: mailbox/health/bounce-rate.ts.)
 */
export { type CompiledPacing, compilePacing, defaultPacingSettings, type LunchSettings, type PacingSettings, resolvePacingSettings } from './settings.ts';
export { dailyCapOn, parseRamp, type Ramp } from './ramp.ts';
export { LocalDays } from './local-day.ts';
export { workingDay, type WorkingDay } from './working-day.ts';
export { MailboxBucket, type MailboxPacing, type SendCheck } from './bucket.ts';
export { planSends, type PlanInput, type PlanMailbox, type PlanRequest, type PlanResult, type SharedCap } from './planner.ts';
export { type PoolMailbox, spreadAssignments } from './rotation.ts';
export { blockedReason, isSendable, type MailboxFields, toMailboxPacing, type WorkspaceFields } from './mailbox.ts';
