import type { Clock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { MailboxRow } from '../mailbox/connectors/connector.ts';
import type { SentFolderCopy, SentPageHandler, SentSinceResult } from '../mailbox/connectors/outcomes.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store } from '../store/store.ts';
import { recordSentCopy, stepKeysOfWorkspace, type StepKey } from './sql/reconcile-sent.ts';
import { messageIdLocalPart, stepLocalPart } from './step-message-id.ts';

/**
 * After a point-in-time restore (docs/operations.md, "Point-in-time recovery"): the database is
 * back at the restore point, but the mailboxes are not. Steps that went out after that point are
 * in each mailbox's Sent folder and nowhere in the database; left so, the scheduler would send
 * them again (promise 1 broken by the restore itself).
 *
 * `cadenza reconcile-sent --since <restore point>` reads every mailbox's Sent folder since then
 * (Transport.sentSince, through the mailbox connectors) and, for each copy that is the send of a
 * step this database knows, records the step as sent under the copy's Message-ID, exactly as the
 * outbox would have: the request sent (possibly_sent for an unsettled copy), the outbound message
 * row, and the engine's step_sent, which plans the next step. The sender never claims a request
 * that is sent, and the scheduler skips a step that is done (transition.ts onStepDue), so a
 * reconciled step is never sent again.
 *
 * How a copy is recognised: a step's Message-ID is derived from its key (step-message-id.ts), so
 * the restored database recomputes it for every (enrollment, email step) it holds and matches the
 * copies' Message-IDs against that set. A copy that matches nothing was sent by an enrollment the
 * restored database does not have (created after the restore point: the bad bulk action's own
 * sends), by a person, or under an older random Message-ID: it is counted and listed, not guessed at.
 *
 * Run it with Cadenza's senders stopped (the procedure starts Cadenza after it). It is idempotent:
 * a second run finds every step already recorded.
 */

export interface ReconcileDeps {
  store: Store;
  clock: Clock;
  random: Random;
  /** The Sent-folder reader of a mailbox (its connector's sentSince), closed after use. */
  sentFolderOf(mailbox: MailboxRow): Promise<{ sentSince(since: number, onPage: SentPageHandler): Promise<SentSinceResult>; close(): Promise<void> }>;
}

export interface MailboxReconciled {
  email: string;
  /** Copies in Sent since the restore point (read before the listing stopped, when it did). */
  copies: number;
  recorded: number;
  /** Not read: why (the run then exits non-zero; run it again once the mailbox answers). */
  unavailable?: string;
}

export interface ReconcileReport {
  since: string;
  mailboxes: MailboxReconciled[];
  /** Steps recorded now as sent (the restored database had no send for them). */
  recorded: number;
  /** Of those, recorded possibly_sent: the copy never settled (never resent automatically either). */
  possiblySent: number;
  /** Copies of steps the database already had as sent. */
  alreadyRecorded: number;
  /** Copies that are no step of this database (enrollments created after the restore point, a person's mail). */
  unmatched: number;
  /** A step recorded sent under another Message-ID than the copy's: the step went out twice before the restore. */
  conflicts: string[];
  durationMs: number;
}

/** The copies a mailbox's Sent folder holds, each tied to the step it is the send of (or to none). */
export function matchCopies(copies: readonly SentFolderCopy[], keys: ReadonlyMap<string, StepKey>): Array<{ copy: SentFolderCopy; key: StepKey | null }> {
  return copies.map((copy) => {
    const local = messageIdLocalPart(copy.messageId);
    return { copy, key: local === null ? null : (keys.get(local) ?? null) };
  });
}

/** The Message-ID local part of every step the workspace's enrollments can send, to the step. */
export function keysByLocalPart(keys: readonly StepKey[]): Map<string, StepKey> {
  return new Map(keys.map((k) => [stepLocalPart(k.enrollmentId, k.stepId), k]));
}

export async function reconcileSent(deps: ReconcileDeps, o: { since: number; workspaceId?: string }): Promise<ReconcileReport> {
  const started = deps.clock.now();
  const service = new EnrollmentService({ store: deps.store, clock: deps.clock, random: deps.random });
  let q = deps.store.db.selectFrom('mailbox').select(['id', 'email', 'provider', 'settings', 'workspace_id']).orderBy('email');
  if (o.workspaceId) q = q.where('workspace_id', '=', o.workspaceId);
  const mailboxes = await q.execute();
  const keysOf = new Map<string, Map<string, StepKey>>();
  const report: ReconcileReport = { since: new Date(o.since).toISOString(), mailboxes: [], recorded: 0, possiblySent: 0, alreadyRecorded: 0, unmatched: 0, conflicts: [], durationMs: 0 };
  for (const m of mailboxes) {
    const line: MailboxReconciled = { email: m.email, copies: 0, recorded: 0 };
    report.mailboxes.push(line);
    let keys = keysOf.get(m.workspace_id);
    if (!keys) keysOf.set(m.workspace_id, (keys = keysByLocalPart(await stepKeysOfWorkspace(deps.store.db, m.workspace_id))));
    const stepKeys = keys;
    // Each page is recorded before the next is read: a Sent folder of any size, one page in memory.
    const onPage = async (copies: SentFolderCopy[]) => {
      for (const { copy, key } of matchCopies(copies, stepKeys)) {
        if (!key) {
          report.unmatched++;
          continue;
        }
        await recordCopy(deps, service, report, line, m, copy, key);
      }
    };
    let listed: SentSinceResult;
    try {
      const folder = await deps.sentFolderOf(m);
      try {
        listed = await folder.sentSince(o.since, onPage);
      } finally {
        await folder.close();
      }
    } catch (e) {
      listed = { status: 'unavailable', reason: (e as Error).message, copies: 0 };
    }
    if (listed.status !== 'ok') {
      // What was read before the listing stopped is recorded; a second run reads the rest.
      line.unavailable = listed.reason;
      line.copies = listed.copies;
      continue;
    }
    line.copies = listed.copies + listed.withoutMessageId;
    // A copy without a Message-ID is no step of Cadenza's, which always writes one.
    report.unmatched += listed.withoutMessageId;
  }
  report.durationMs = deps.clock.now() - started;
  return report;
}

/** Records one copy as the send of its step, exactly as the outbox would have (or finds it already recorded). */
async function recordCopy(
  deps: ReconcileDeps,
  service: EnrollmentService,
  report: ReconcileReport,
  line: MailboxReconciled,
  m: { id: string; email: string },
  copy: SentFolderCopy,
  key: StepKey,
): Promise<void> {
  const now = deps.clock.now();
  const state = copy.pending ? 'possibly_sent' : 'sent';
  const at = copy.sentAt ?? now;
  const applied = await deps.store.db.transaction().execute(async (tx) => {
    const r = await recordSentCopy(tx, {
      requestId: newId(now, deps.random),
      rowId: newId(now, deps.random),
      workspaceId: key.workspaceId,
      mailboxId: m.id,
      enrollmentId: key.enrollmentId,
      stepId: key.stepId,
      messageId: copy.messageId,
      state,
      at: new Date(at),
      subject: copy.subject,
      inReplyTo: copy.inReplyTo,
      from: m.email,
      to: copy.to.length ? copy.to : [key.leadEmail],
      note: `reconciled from the Sent folder of ${m.email} after a restore`,
      now: new Date(now),
    });
    if (r.outcome === 'already') return r;
    await service.applyInTx(tx, key.enrollmentId, { type: 'step_sent', stepId: key.stepId, at, messageId: copy.messageId }, now);
    return r;
  });
  if (applied.outcome === 'already') {
    report.alreadyRecorded++;
    if (applied.messageId !== null && applied.messageId !== copy.messageId) {
      report.conflicts.push(`enrollment ${key.enrollmentId} step ${key.stepId}: recorded as ${applied.messageId}, Sent also holds ${copy.messageId}`);
    }
    return;
  }
  line.recorded++;
  report.recorded++;
  if (state === 'possibly_sent') report.possiblySent++;
}
