import { sql } from 'kysely';
import { cadenzaError } from '../common/errors.ts';
import type { Clock } from '../common/clock.ts';
import type { Random } from '../common/random.ts';
import type { Store, Tx } from '../store/store.ts';
import { enrollInTx, type RefusalReason } from './bulk-enroll.ts';
import type { Applied, EnrollmentService } from './enrollment-service.ts';
import { isTerminal, type EnrollmentState } from './model.ts';

/**
 * Moving a lead from one sequence to another: the old enrollment ends as 'moved' through the
 * engine (timer, queued sends and open tasks cancelled, exactly as a stop), and the lead is
 * enrolled in the target by the same code as any enrollment (enrollInTx: suppression, one
 * enrollment per lead and sequence, the target must be active), all in one transaction, so there is
 * never a moment with both live or with neither.
 *
 * A send already in flight for the old enrollment follows the stop's rules (sending/outbox.ts): the
 * sender's last look before the transport sees the move and cancels it; if the transport already
 * has it, it is recorded on the old enrollment as sent after a stop; one whose fate is unknown is
 * settled from the Sent folder and, if it never went, refused at its next claim (the enrollment is
 * no longer active). Either way it goes at most once and is never retried (promise 1), and the new enrollment's steps are other steps with keys of
 * their own. An answer to any message the old sequence sent reaches the new enrollment
 * (EnrollmentService passes prospect signals along moved_to).
 */

export type MoveRefusal = RefusalReason | 'not_live' | 'same_sequence';

export type MoveOutcome =
  | { enrollmentId: string; outcome: 'moved'; newEnrollmentId: string }
  | { enrollmentId: string; outcome: 'skipped'; reason: MoveRefusal; detail?: string };

export interface MoveRequest {
  workspaceId: string;
  sequenceId: string;
  /** Key of the target's step to start at (default its first); the steps before it are skipped. */
  startAtStep?: string;
}

export interface MoveDeps {
  store: Store;
  clock: Clock;
  random: Random;
  /** The process's service, so the scheduler hears of the timers a move cancels and sets. */
  service: EnrollmentService;
}

/** Enrollments moved per transaction in a bulk move: each batch commits on its own, so row locks are held briefly. */
const BATCH = 100;

/** Moves one enrollment. Throws NOT_FOUND when it or the target sequence is not in the workspace. */
export async function moveEnrollment(deps: MoveDeps, req: MoveRequest & { enrollmentId: string }): Promise<MoveOutcome> {
  const [one] = await moveEnrollments(deps, { ...req, enrollmentIds: [req.enrollmentId] }, true);
  return one!;
}

/**
 * Moves many enrollments to one sequence; each gets its own outcome. An id not in the workspace
 * is skipped as not_found (unless `strict`, for the single move, where it is a NOT_FOUND error).
 */
export async function moveEnrollments(deps: MoveDeps, req: MoveRequest & { enrollmentIds: string[] }, strict = false): Promise<MoveOutcome[]> {
  const store = deps.store;
  const target = await store.db.selectFrom('sequence').select(['id', 'name']).where('id', '=', req.sequenceId).where('workspace_id', '=', req.workspaceId).executeTakeFirst();
  // No ids in the error: the caller may have named another workspace's objects (api/authz.test.ts).
  if (!target) throw cadenzaError('NOT_FOUND', 'no such sequence in this workspace');
  const ids = [...new Set(req.enrollmentIds)];
  const out = new Map<string, MoveOutcome>();
  for (let i = 0; i < ids.length; i += BATCH) {
    const applied: Applied[] = [];
    await store.db.transaction().execute(async (tx) => {
      for (const id of ids.slice(i, i + BATCH)) {
        const r = await moveInTx(tx, deps, { ...req, enrollmentId: id, targetName: target.name });
        if (strict && r.outcome === 'skipped' && r.reason === 'not_found') throw cadenzaError('NOT_FOUND', 'no such enrollment in this workspace');
        if (r.outcome === 'moved') {
          const { applied: a, ...outcome } = r;
          applied.push(...a);
          out.set(id, outcome);
        } else out.set(id, r);
      }
    });
    deps.service.notify(applied);
  }
  return req.enrollmentIds.map((id) => out.get(id)!);
}

type Skipped = Extract<MoveOutcome, { outcome: 'skipped' }>;
/** A move done inside the transaction, with the engine's changes to announce once it commits. */
type MovedInTx = Extract<MoveOutcome, { outcome: 'moved' }> & { applied: Applied[] };

interface Locked {
  id: string;
  lead_id: string;
  sequence_id: string;
  mailbox_id: string | null;
  state: EnrollmentState;
}

async function moveInTx(tx: Tx, deps: MoveDeps, req: MoveRequest & { enrollmentId: string; targetName: string }): Promise<MovedInTx | Skipped> {
  const skip = (reason: MoveRefusal, detail?: string): Skipped => ({ enrollmentId: req.enrollmentId, outcome: 'skipped', reason, ...(detail ? { detail } : {}) });
  // The old enrollment is locked first, as the engine locks it: a sender's claim, a reply or a
  // second move of it waits for this one, or this one for them, and then sees the result.
  const e = (
    await sql<Locked>`
      select id, lead_id, sequence_id, mailbox_id, state from enrollment
      where id = ${req.enrollmentId} and workspace_id = ${req.workspaceId}
      for update`.execute(tx)
  ).rows[0];
  if (!e) return skip('not_found');
  if (isTerminal(e.state)) return skip('not_live', `the enrollment is ${e.state}`);
  if (e.sequence_id === req.sequenceId) return skip('same_sequence', 'the lead is already in this sequence');
  const enrolled = await enrollInTx(tx, { clock: deps.clock, random: deps.random, sequences: deps.service.sequences }, {
    workspaceId: req.workspaceId,
    sequenceId: req.sequenceId,
    leadIds: [e.lead_id],
    ...(req.startAtStep !== undefined ? { startAtStep: req.startAtStep } : {}),
    keepMailbox: new Map([[e.lead_id, e.mailbox_id]]),
    movedFrom: new Map([[e.lead_id, e.id]]),
  });
  const made = enrolled.created[0];
  if (!made) {
    const why = enrolled.refused[0];
    return skip(why?.reason ?? 'cannot_plan', why?.detail);
  }
  const applied = await deps.service.applyInTx(tx, e.id, { type: 'move', toSequenceId: req.sequenceId, toSequenceName: req.targetName, toEnrollmentId: made.id });
  // Checked live under the lock above, so the engine cannot refuse; if it ever did, nothing commits.
  if (applied[0]?.result.outcome !== 'applied') throw cadenzaError('INVALID_TRANSITION', `cannot move: ${applied[0]?.result.note ?? 'refused'}`, { enrollmentId: e.id });
  await tx.updateTable('enrollment').set({ moved_to: made.id }).where('id', '=', e.id).execute();
  // The new enrollment's timer, for the scheduler's wheel after the commit (as the engine's own changes are).
  applied.push({ enrollmentId: made.id, event: { type: 'enrolled' }, result: { outcome: 'applied', next: made, effects: made.dueAt !== null ? [{ type: 'schedule_timer', at: made.dueAt }] : [] }, dueAt: null });
  return { enrollmentId: e.id, outcome: 'moved', newEnrollmentId: made.id, applied };
}
