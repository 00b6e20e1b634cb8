import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { cadenzaError, isCadenzaError } from '../common/errors.ts';
import type { Logger } from '../common/logger.ts';
import { assignMailboxes, chooseMailbox } from '../mailbox/pacing/assign-mailboxes.ts';
import type { Applied, EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store, Tx } from '../store/store.ts';
import type { MailboxTokens } from '../mailbox/oauth/mailbox-tokens.ts';

/**
 * Removing a mailbox (a rep leaves, an address is retired). A soft delete, in one transaction:
 *
 *   1. The mailbox row is locked and its leases (`mailbox:<id>` for the sender, `sync:<id>` for
 *      sync) are deleted. Deleting waits for a claim that holds the lease FOR SHARE (outbox.ts) to
 *      commit; after it, every write of the current owners fails its fencing check: the sender's
 *      next claim answers `fenced` and its loop ends, the sync loop's next batch is refused and it
 *      ends, and both pools leave a removed mailbox out of their balancing.
 *   2. A send in flight (claimed and being handed to the server) must settle first (at most once,
 *      promise 1): the removal is refused with CONFLICT and can be tried again a few seconds later.
 *   3. The mailbox leaves every sequence's pool. Its live enrollments (active or paused):
 *      - policy `reassign` (the default): an enrollment that has not yet sent from this mailbox
 *        moves to the mailbox of its sequence's pool with the most room (the rotation's rule), its
 *        queued request with it, planned afresh; one that has (a sent or possibly sent email:
 *        a follow-up would land in that thread from another address) is paused instead, and so is
 *        one whose sequence has no other mailbox that can send;
 *      - policy `pause`: every one is paused.
 *      A pause here has no end: the reason says `mailbox removed`. A person who resumes one
 *      chooses to go on from another address: the resume moves it to the pool mailbox with the
 *      most room first (moveOffRemovedMailbox), or is refused when its sequence has none.
 *   4. What is still queued on the mailbox is cancelled; requests whose fate is unknown stay
 *      unknown (the step may have left: never sent again).
 *   5. The mailbox is marked removed (health paused, reason "removed", removed_at, removed_by)
 *      and its credential is erased from the vault. Its history (sent mail, replies, analytics)
 *      stays and points at it; the API shows it as a removed mailbox. Its address can be connected
 *      again, as a new mailbox.
 *
 * An OAuth grant is revoked at the provider by the sender role, never here: deleting the
 * credential moves its sealed token into a revocation task in the same transaction (a trigger,
 * 0046_credential_task.sql), which a sender carries out after the commit and retries with backoff
 * while the provider does not answer (sending/credential-tasks/). The removal never waits for it,
 * and the process removing (the API, which may not read credentials) never opens the token.
 *
 * A dry run runs the same transaction and rolls it back: the preview and the removal cannot
 * disagree on what they count.
 */

export type EnrollmentPolicy = 'reassign' | 'pause';

export interface RemovalDeps {
  store: Store;
  clock: Clock;
  service: EnrollmentService;
  /** This process's OAuth token cache: the removed mailbox's tokens are forgotten. */
  tokens?: MailboxTokens;
  log?: Logger;
}

export interface RemovalRequest {
  workspaceId: string;
  mailboxId: string;
  /** The person removing it (app_user id); null for an API key. */
  by: string | null;
  enrollments: EnrollmentPolicy;
  dryRun: boolean;
}

export interface RemovalReport {
  mailboxId: string;
  email: string;
  dryRun: boolean;
  /** Enrollments moved to another mailbox of their sequence's pool. */
  reassigned: Array<{ enrollmentId: string; toMailboxId: string }>;
  /** Enrollments paused, each with its reason. */
  paused: Array<{ enrollmentId: string; reason: string }>;
  /** Queued sends cancelled with the mailbox (those of paused enrollments). */
  cancelledSends: number;
  /** Sends whose fate is unknown, left as they are (never sent again). */
  unknownSends: number;
  /** Sends being handed to the server now; a removal (not a dry run) is refused while any is. */
  inFlightSends: number;
  /** The credential was erased (or would be, in a dry run). */
  credentialErased: boolean;
  /** Revocation at the provider: not an OAuth mailbox, or a task the sender role carries out (file comment). */
  revocation: 'none' | 'pending';
}

export const REMOVED_REASON = 'removed';

/** The reasons a removal pauses an enrollment with; all start with "mailbox removed". */
export const pausedReason = {
  threaded: (email: string) => `mailbox removed (${email}): its next email would continue a thread from another address, so it waits; resume it to go on from another mailbox, or stop it`,
  noPool: (email: string) => `mailbox removed (${email}): no other mailbox of the sequence can send`,
  asked: (email: string) => `mailbox removed (${email})`,
};

class DryRun extends Error {
  constructor(readonly report: RemovalReport) {
    super('dry run');
  }
}

interface LiveEnrollment {
  id: string;
  sequence_id: string;
  state: 'active' | 'paused';
  threaded: boolean;
}

// -- name: live-enrollments-of-mailbox
// Locked, so that no timer fires them on the old mailbox while they move; `threaded` when a send
// from this mailbox left or may have left (in flight, unknown).
const liveEnrollmentsSql = (mailboxId: string) => sql<LiveEnrollment>`
  select e.id, e.sequence_id, e.state,
         exists (select 1 from send_request r where r.enrollment_id = e.id and r.mailbox_id = ${mailboxId}
                 and r.state in ('sent', 'possibly_sent', 'unknown', 'in_flight')) as threaded
  from enrollment e
  where e.mailbox_id = ${mailboxId} and e.state in ('active', 'paused')
  order by e.id
  for update of e`;

export async function removeMailbox(deps: RemovalDeps, req: RemovalRequest): Promise<RemovalReport> {
  let applied: Applied[] = [];
  let report: RemovalReport;
  try {
    report = await deps.store.db.transaction().execute(async (tx) => {
      const r = await removeInTx(tx, deps, req);
      applied = r.applied;
      if (req.dryRun) throw new DryRun(r.report);
      return r.report;
    });
  } catch (e) {
    if (e instanceof DryRun) return e.report;
    throw e;
  }
  deps.service.notify(applied);
  deps.tokens?.forget(req.mailboxId);
  deps.log?.info(
    { mailboxId: req.mailboxId, reassigned: report.reassigned.length, paused: report.paused.length, revocation: report.revocation },
    'mailbox removed',
  );
  return report;
}

async function removeInTx(tx: Tx, deps: RemovalDeps, req: RemovalRequest): Promise<{ report: RemovalReport; applied: Applied[] }> {
  const now = deps.clock.now();
  const mb = await tx
    .selectFrom('mailbox')
    .select(['id', 'email'])
    .where('id', '=', req.mailboxId)
    .where('workspace_id', '=', req.workspaceId)
    .where('removed_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!mb) throw cadenzaError('NOT_FOUND', 'no such mailbox in this workspace (or it was already removed)');

  await tx.deleteFrom('lease').where('resource', 'in', [`mailbox:${mb.id}`, `sync:${mb.id}`]).execute();
  const counts = await tx
    .selectFrom('send_request')
    .select([
      sql<number>`count(*) filter (where state = 'in_flight')::int`.as('in_flight'),
      sql<number>`count(*) filter (where state = 'unknown')::int`.as('unknown'),
    ])
    .where('mailbox_id', '=', mb.id)
    .executeTakeFirstOrThrow();
  const inFlight = Number(counts.in_flight);
  if (inFlight > 0 && !req.dryRun) {
    throw cadenzaError('CONFLICT', `${mb.email} is handing ${inFlight === 1 ? 'a message' : `${inFlight} messages`} to its server right now; try again in a few seconds`, {
      inFlight,
      retry: true,
    });
  }

  await tx.deleteFrom('sequence_mailbox').where('mailbox_id', '=', mb.id).execute();
  const live = (await liveEnrollmentsSql(mb.id).execute(tx)).rows;
  const reassigned: RemovalReport['reassigned'] = [];
  const paused: RemovalReport['paused'] = [];
  const movable: LiveEnrollment[] = [];
  for (const e of live) {
    if (req.enrollments === 'pause') paused.push({ enrollmentId: e.id, reason: pausedReason.asked(mb.email) });
    else if (e.threaded) paused.push({ enrollmentId: e.id, reason: pausedReason.threaded(mb.email) });
    else movable.push(e);
  }
  const bySequence = new Map<string, LiveEnrollment[]>();
  for (const e of movable) {
    const list = bySequence.get(e.sequence_id);
    if (list) list.push(e);
    else bySequence.set(e.sequence_id, [e]);
  }
  for (const [sequenceId, es] of bySequence) {
    // The pool no longer holds this mailbox (deleted above): the choice is among the others.
    const choices = await assignMailboxes(tx, { sequenceId, count: es.length, now });
    es.forEach((e, i) => {
      const c = choices[i];
      if (c && c.eligible) reassigned.push({ enrollmentId: e.id, toMailboxId: c.id });
      else paused.push({ enrollmentId: e.id, reason: pausedReason.noPool(mb.email) });
    });
  }

  for (const [to, ids] of groupBy(reassigned, (r) => r.toMailboxId, (r) => r.enrollmentId)) {
    await tx.updateTable('enrollment').set({ mailbox_id: to }).where('id', 'in', ids).execute();
    // A cancelled request goes too: a pause's request is revived under its key on resume.
    await tx
      .updateTable('send_request')
      .set({ mailbox_id: to, send_at: null, planned_at: null, plan_note: null, updated_at: new Date(now) })
      .where('enrollment_id', 'in', ids)
      .where('mailbox_id', '=', mb.id)
      .where('state', 'in', ['queued', 'cancelled'])
      .execute();
  }

  // What is still queued here belongs to enrollments about to pause: cancelled by their pause, or below.
  const queued = await tx.selectFrom('send_request').select((eb) => eb.fn.countAll<number>().as('n')).where('mailbox_id', '=', mb.id).where('state', '=', 'queued').executeTakeFirstOrThrow();
  const applied: Applied[] = [];
  const byState = new Map(live.map((e) => [e.id, e.state]));
  for (const p of paused) {
    if (byState.get(p.enrollmentId) === 'active') {
      applied.push(...(await deps.service.applyInTx(tx, p.enrollmentId, { type: 'pause', reason: p.reason }, now)));
    } else {
      // Already paused (out of office, by a person): the engine ignores a second pause, and its
      // pause would end at a date and send from the removed mailbox. It now waits for a person.
      // No timer to tell the wheel about: a wheel entry that fires finds due_at null and passes.
      await tx.updateTable('enrollment').set({ due_at: null, state_reason: p.reason }).where('id', '=', p.enrollmentId).where('state', '=', 'paused').execute();
    }
  }
  await tx
    .updateTable('send_request')
    .set({ state: 'cancelled', last_error: 'mailbox removed', updated_at: new Date(now) })
    .where('mailbox_id', '=', mb.id)
    .where('state', '=', 'queued')
    .executeTakeFirst();

  await tx
    .updateTable('mailbox')
    .set({ removed_at: new Date(now), removed_by: req.by, health: 'paused', health_reason: REMOVED_REASON })
    .where('id', '=', mb.id)
    .execute();
  // Its kind only (the API's grants allow no more): an OAuth grant leaves a revocation task behind.
  const erased = await tx.deleteFrom('mailbox_credential').where('mailbox_id', '=', mb.id).returning('kind').executeTakeFirst();

  return {
    applied,
    report: {
      mailboxId: mb.id,
      email: mb.email,
      dryRun: req.dryRun,
      reassigned,
      paused,
      cancelledSends: Number(queued.n),
      unknownSends: Number(counts.unknown),
      inFlightSends: inFlight,
      credentialErased: erased !== undefined,
      revocation: erased?.kind === 'oauth' ? 'pending' : 'none',
    },
  };
}

function groupBy<T>(items: T[], key: (t: T) => string, value: (t: T) => string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const it of items) {
    const list = m.get(key(it));
    if (list) list.push(value(it));
    else m.set(key(it), [value(it)]);
  }
  return m;
}

/**
 * Before a person resumes an enrollment whose mailbox was removed: moves it (and its cancelled
 * request, which the resume revives) to the mailbox of its sequence's pool with the most room.
 * The follow-up then comes from another address, which is what resuming it means. Nothing to do
 * for an enrollment on a live mailbox; CONFLICT when its sequence has no mailbox that can send.
 */
export async function moveOffRemovedMailbox(db: Store['db'], enrollmentId: string, now: number): Promise<{ from: string; to: string } | null> {
  return db.transaction().execute(async (tx) => {
    const e = await tx
      .selectFrom('enrollment as e')
      .innerJoin('mailbox as m', 'm.id', 'e.mailbox_id')
      .select(['e.sequence_id', 'e.mailbox_id', 'm.email', 'm.removed_at'])
      .where('e.id', '=', enrollmentId)
      .forUpdate()
      .executeTakeFirst();
    if (!e || e.removed_at === null || e.mailbox_id === null) return null;
    const to = await chooseMailbox(tx, { sequenceId: e.sequence_id, now });
    if (!to || !to.eligible) {
      throw cadenzaError('CONFLICT', `its mailbox ${e.email} was removed and its sequence has no other mailbox that can send; add one to the sequence, or stop the enrollment`, { removedMailbox: e.mailbox_id });
    }
    await tx.updateTable('enrollment').set({ mailbox_id: to.id }).where('id', '=', enrollmentId).execute();
    await tx
      .updateTable('send_request')
      .set({ mailbox_id: to.id, send_at: null, planned_at: null, plan_note: null, updated_at: new Date(now) })
      .where('enrollment_id', '=', enrollmentId)
      .where('mailbox_id', '=', e.mailbox_id)
      .where('state', 'in', ['queued', 'cancelled'])
      .execute();
    return { from: e.mailbox_id, to: to.id };
  });
}
