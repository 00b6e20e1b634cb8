/**
 * Pausing and resuming a mailbox: the health state a person (or Cadenza, on refused credentials
 * or too many bounces: evaluate.ts) sets so that the mailbox sends nothing until someone looks.
 *
 * A paused mailbox sends nothing: the sender's claim refuses it (sending/dispatch/reserve.ts) and
 * the planner gives its requests no slot (their plan_note says why). It is still synced: a reply
 * to its earlier mail must still stop the enrollment. A pause is never lifted automatically: a
 * person reads health_reason, cleans the list or fixes the credentials, and resumes (an OAuth
 * reconnect resumes a credential pause itself, oauth/flow.ts).
 *
 * The pause takes the mailbox's queued requests off the plan in the same transaction (one
 * statement on send_request, the send queue's table): a request planned before the pause must not
 * keep a send instant the claim would only refuse. The resume hands them back to the planner.
 */
import { sql } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import { inTx, type Conn } from '../../store/in-tx.ts';

// -- name: unplan-mailbox
// Skip locked: a request a claim holds is about to leave the queue; waiting for it while holding
// the mailbox row would deadlock with that claim (it locks the request, then the mailbox).
const unplanSql = (mailboxId: string, plannedAt: Date | null, note: string | null) => sql`
  update send_request r set send_at = null, planned_at = ${plannedAt}, plan_note = ${note}
  from (select id from send_request where mailbox_id = ${mailboxId} and state = 'queued' for update skip locked) l
  where r.id = l.id`;

/**
 * Pauses a mailbox with a reason a user can read (stored in health_reason), and takes its queued
 * requests off the plan. Returns false when it was already paused (its first reason is kept).
 */
export async function pauseMailbox(db: Conn, mailboxId: string, reason: string, now: number): Promise<boolean> {
  if (typeof reason !== 'string' || reason.trim() === '') throw cadenzaError('INVALID_INPUT', 'a pause needs a reason', { field: 'reason' });
  return inTx(db, async (tx) => {
    const changed = await tx
      .updateTable('mailbox')
      .set({ health: 'paused', health_reason: reason })
      .where('id', '=', mailboxId)
      .where('health', '<>', 'paused')
      .returning('id')
      .executeTakeFirst();
    if (!changed) {
      const exists = await tx.selectFrom('mailbox').select('id').where('id', '=', mailboxId).executeTakeFirst();
      if (!exists) throw cadenzaError('NOT_FOUND', `mailbox ${mailboxId} not found`, { mailboxId });
      return false;
    }
    await unplanSql(mailboxId, new Date(now), `mailbox paused: ${reason}`).execute(tx);
    return true;
  });
}

/** Lifts a pause (or an error state): the mailbox sends again and its queued requests are planned afresh. */
export async function resumeMailbox(db: Conn, mailboxId: string): Promise<boolean> {
  return inTx(db, async (tx) => {
    const changed = await tx
      .updateTable('mailbox')
      .set({ health: 'ok', health_reason: null })
      .where('id', '=', mailboxId)
      .where('health', 'in', ['paused', 'error'])
      // A removed mailbox stays paused for good (sending/mailbox-removal.ts); its address connects anew.
      .where('removed_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!changed) return false;
    await unplanSql(mailboxId, null, null).execute(tx);
    return true;
  });
}

/** True while the mailbox may not send: paused (or in error), whatever the reason. */
export async function isPaused(db: Conn, mailboxId: string): Promise<boolean> {
  const m = await db.selectFrom('mailbox').select('health').where('id', '=', mailboxId).executeTakeFirst();
  return m?.health === 'paused' || m?.health === 'error';
}

/** The reason a credential pause is stored with (oauth/flow.ts resumes such a pause on reconnect). */
export function credentialsRefusedReason(detail: string): string {
  return `the server refused the mailbox's credentials: ${detail}`;
}

/**
 * The reason a mailbox whose connector cannot be built is paused with (mailbox-pool.ts: no
 * credential, no server for what the role does, an unknown provider). Recognised by oauth/flow.ts
 * like a credential pause: a reconnect resumes it.
 */
export function cannotConnectReason(detail: string): string {
  return `cannot connect: ${detail}`;
}
