/**
 * Dispatch: pacing's store side. The dispatcher plans each queued request's send instant
 * (send_request.send_at); the outbox's claim reserves the slot (reserveSlot) and gives it back
 * when the request returns to the queue (releaseSlot); health records the outcomes that bear on a
 * mailbox's health (mailbox/health/ pauses it when its bounce rate or credentials fail); rotation
 * picks the mailbox of a new enrollment.
 */
export { Dispatcher, type DispatcherOptions, mailboxesToPlan, nextSendAt } from './dispatcher.ts';
export { planMailboxes, type PlanDeps, type PlanOptions, type PlanReport } from './plan.ts';
export { releaseSlot, reserveSlot, type Reservation } from './reserve.ts';
export { recordSendOutcome, type SendOutcome } from './health.ts';
export { assignMailboxes, chooseMailbox, type MailboxChoice } from '../../mailbox/pacing/assign-mailboxes.ts';
export { COUNTED_STATES } from './sql.ts';
