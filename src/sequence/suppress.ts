import type { SuppressionReason } from '../store/schema.ts';
import type { Db, Tx } from '../store/store.ts';
import type { Applied } from './enrollment-service.ts';
import { deleteSuppression, insertSuppressions, liveEnrollmentsOfCompany, stoppableEnrollmentsOf, suppressionReason } from './sql/suppression.ts';

/**
 * One opt-out is everywhere (promise 6), kept here and nowhere else: `suppress()` writes an
 * address's suppression (the first reason and source are kept) and stops every enrollment of the
 * address that a stop still has work on, in the caller's transaction. Nothing else writes the
 * `suppression` table (suppress.test.ts greps the source for it). The callers:
 *
 * | caller                                 | when                                                              |
 * | -------------------------------------- | ----------------------------------------------------------------- |
 * | the engine (enrollment-service.ts)     | a transition's suppress effect: a hard bounce, an unsubscribe     |
 * | ingestion (ingest/act.ts decisions)    | a bounce's failed recipients, an opt-out reply, a complaint (ARF), soft bounces past the limit |
 * | tracking (tracking/unsubscribe.ts)     | the one-click unsubscribe (RFC 8058), its page, our mailto:       |
 * | the API (leads/suppression.ts)         | one address by hand, or an imported suppression list              |
 * | erasure (privacy/erase.ts)             | a person erased: the address replaced by its keyed hash (eraseSuppression) |
 *
 * The stops go through the engine (`StopEngine`, the enrollment service), so each stopped
 * enrollment's state, journal entry, cancelled sends and cancelled tasks follow as for any stop.
 * The engine itself calls suppress() from inside its commit: the stops it asks for are 'stop'
 * events, whose effects never suppress, so that recursion is one level deep; and the enrollment
 * whose own transition asked for the suppression is spared (it is already transitioned and
 * journalled once). Imports and enrollment read the table (leads/sql/find-suppressed.ts,
 * bulk-enroll.ts), and the outbox re-reads it in the claiming transaction (promise 2).
 *
 * The applied transitions are returned: the caller passes them to the service's `notify` after
 * its commit (the timers they cleared), never before.
 */

/** What suppress() needs of the engine (STYLE habit 8); EnrollmentService is the implementation. */
export interface StopEngine {
  /** Stops each enrollment (event `{ type: 'stop', reason }`) inside the caller's transaction, in id order. */
  stopEachInTx(tx: Tx, enrollmentIds: readonly string[], reason: string, now: number): Promise<Applied[]>;
}

export interface Suppression {
  /** The normalised address (leads/email.ts checkEmail). */
  email: string;
  reason: SuppressionReason;
  /** Where it came from ('enrollment:…', 'message <…>', 'one_click', 'api: member …'); kept with the row. */
  source: string;
}

export interface SuppressOutcome {
  /** Addresses new in the list (one already there keeps its first reason and source). */
  added: string[];
  /** Enrollments that ended (live ones; a finished one keeps its state and loses its open tasks). */
  stopped: string[];
  /** Every transition the stops applied, for the service's notify after the caller's commit. */
  applied: Applied[];
}

/** Why a suppression stops an enrollment (journalled as the stop's reason). */
export const SUPPRESSED_STOP_REASON = 'address suppressed';

/**
 * Suppresses addresses in a workspace and stops their enrollments, in the caller's transaction.
 * `spare`: enrollments the caller transitions itself (the target of a bounce or an unsubscribe,
 * whose own event ends it with its own state), and those they were moved to.
 */
export async function suppress(
  tx: Tx,
  engine: StopEngine,
  workspaceId: string,
  suppressions: readonly Suppression[],
  o: { now: number; spare?: readonly string[] },
): Promise<SuppressOutcome> {
  if (!suppressions.length) return { added: [], stopped: [], applied: [] };
  const added = await insertSuppressions(tx, workspaceId, suppressions, o.now);
  const ids = await stoppableEnrollmentsOf(tx, workspaceId, [...new Set(suppressions.map((s) => s.email))], o.spare ?? []);
  const applied = await engine.stopEachInTx(tx, ids, SUPPRESSED_STOP_REASON, o.now);
  return { added, stopped: ended(applied), applied };
}

/** Why an erasure stops an enrollment (journalled as the stop's reason; the journal row is then deleted with the rest). */
export const ERASED_STOP_REASON = 'person erased';

/**
 * A person erased (privacy/erase.ts): their enrollments stop, as for any suppression, and their row
 * of the list, if any, is replaced by `marker` (a keyed hash of the address, common/erasure-key.ts)
 * with the reason 'erased', so promise 6 outlives the address. In the caller's transaction, before
 * it deletes the person's data: the stops come first, so nothing is claimed for them afterwards.
 */
export async function eraseSuppression(tx: Tx, engine: StopEngine, workspaceId: string, emailNorm: string, marker: string, now: number): Promise<Applied[]> {
  const ids = await stoppableEnrollmentsOf(tx, workspaceId, [emailNorm], []);
  const applied = await engine.stopEachInTx(tx, ids, ERASED_STOP_REASON, now);
  await deleteSuppression(tx, workspaceId, emailNorm);
  await insertSuppressions(tx, workspaceId, [{ email: marker, reason: 'erased', source: 'erasure' }], now);
  return applied;
}

/**
 * The company rule (a sequence's stopCompanyOnReply): when one prospect replies, the other live
 * enrollments at the same email domain stop too. A stop, not a suppression: a colleague's reply is
 * no opt-out, and each address stays mailable by later sequences. Kept beside suppress() because it
 * is the other "stop these people's enrollments" rule and goes the same way, through the engine.
 */
export async function stopCompany(
  tx: Tx,
  engine: StopEngine,
  workspaceId: string,
  company: { domain: string; exceptEmail: string; reason: string },
  now: number,
): Promise<Applied[]> {
  const ids = await liveEnrollmentsOfCompany(tx, workspaceId, company.domain, company.exceptEmail);
  return engine.stopEachInTx(tx, ids, company.reason, now);
}

/**
 * Lifts a suppression (an admin's undo): the address may be mailed again by enrollments made from
 * now on; those it stopped stay stopped. False when the address was not suppressed.
 */
export function liftSuppression(db: Db, workspaceId: string, emailNorm: string): Promise<boolean> {
  return deleteSuppression(db, workspaceId, emailNorm);
}

/** Why an address is suppressed in the workspace (undefined: it is not): what a lift records it undid. */
export function suppressedFor(db: Db, workspaceId: string, emailNorm: string): Promise<string | undefined> {
  return suppressionReason(db, workspaceId, emailNorm);
}

function ended(applied: readonly Applied[]): string[] {
  return applied.filter((a) => a.result.outcome === 'applied' && a.result.next.state === 'stopped').map((a) => a.enrollmentId);
}
