/**
 * Mailbox health, the store side: bounces recorded against the sends that caused them, the bounce
 * rate judged by the pure classifier (../pacing/health.ts), and the automatic pause.
 *
 * A paused mailbox sends nothing: reserveSlot refuses it and the planner gives its requests no
 * slot (their plan_note says why). A pause is never lifted automatically: a person reads
 * health_reason, cleans the list or fixes the credentials, and calls resumeMailbox.
 */
import { sql } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import { assessBounceRate, defaultBouncePolicy, type BouncePolicy, type HealthVerdict } from '../pacing/health.ts';
import { type Conn, inTx } from './sql.ts';

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
      // A removed mailbox stays paused for good (mailbox/removal.ts); its address connects anew.
      .where('removed_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!changed) return false;
    await unplanSql(mailboxId, null, null).execute(tx);
    return true;
  });
}

// -- name: last-send-error
/**
 * The mailbox's latest transient send failure that no successful send came after (a host that
 * cannot be reached, a server that keeps answering 4xx), or null: the health shown to people
 * reflects it (mailbox/health-view.ts) while the retries go on.
 */
export async function lastSendError(db: Conn, mailboxId: string): Promise<string | null> {
  const r = await sql<{ last_error: string }>`
    select f.last_error from send_request f
    where f.mailbox_id = ${mailboxId} and f.state = 'queued' and f.last_error like 'transient:%'
      and not exists (select 1 from send_request s where s.mailbox_id = f.mailbox_id and s.state = 'sent' and s.updated_at > f.updated_at)
    order by f.updated_at desc limit 1`.execute(db);
  return r.rows[0]?.last_error ?? null;
}

export type SendOutcome =
  /** A bounce of this send: a DSN, or a recipient the server refused (5xx). Soft bounces are kept but not counted in the rate. */
  | { kind: 'bounce'; requestId: string; hard: boolean; at: number }
  /** The server refused the mailbox's credentials: the mailbox is paused at once. */
  | { kind: 'credentials_failed'; mailboxId: string; detail: string; at: number };

export interface HealthResult extends HealthVerdict {
  mailboxId: string;
  /** The mailbox's health after the evaluation. */
  health: 'ok' | 'warning' | 'paused' | 'error';
}

// -- name: mark-bounce
// A hard bounce is never downgraded by a later soft report of the same send.
const markBounceSql = (requestId: string, hard: boolean, at: number) => sql<{ mailbox_id: string | null }>`
  update send_request
  set bounced_at = coalesce(bounced_at, ${new Date(at)}),
      bounce_kind = case when ${hard}::boolean or bounce_kind = 'hard' then 'hard' else 'soft' end
  where id = ${requestId}
  returning mailbox_id`;

// -- name: bounce-sample
// The mailbox's latest sends whose fate is known (sent, or refused by the server), newest first.
const sampleSql = (mailboxId: string, window: number) => sql<{ sends: number; bounces: number }>`
  select count(*)::int as sends, count(*) filter (where bounce_kind = 'hard')::int as bounces
  from (
    select bounce_kind from send_request
    where mailbox_id = ${mailboxId} and claimed_at is not null and state in ('sent', 'failed')
    order by claimed_at desc
    limit ${window}
  ) recent`;

/**
 * What the sender (and the bounce ingester) call for each outcome that bears on the mailbox's
 * health. Returns the mailbox's assessment after it.
 */
export async function recordSendOutcome(db: Conn, outcome: SendOutcome, policy: BouncePolicy = defaultBouncePolicy): Promise<HealthResult> {
  return inTx(db, async (tx) => {
    if (outcome.kind === 'credentials_failed') {
      const reason = `the server refused the mailbox's credentials: ${outcome.detail}`;
      await pauseMailbox(tx, outcome.mailboxId, reason, outcome.at);
      return { mailboxId: outcome.mailboxId, health: 'paused' as const, verdict: 'pause' as const, confidence: 1, reason };
    }
    const r = (await markBounceSql(outcome.requestId, outcome.hard, outcome.at).execute(tx)).rows[0];
    if (!r) throw cadenzaError('NOT_FOUND', `send request ${outcome.requestId} not found`, { requestId: outcome.requestId });
    if (r.mailbox_id === null) throw cadenzaError('CONFLICT', `send request ${outcome.requestId} has no mailbox`, { requestId: outcome.requestId });
    return evaluateHealth(tx, r.mailbox_id, outcome.at, policy);
  });
}

/**
 * Judges the mailbox's bounce rate over its latest sends and applies the verdict: pause (with the
 * reason), warning, or back to ok from a warning. Never lifts a pause or an error.
 */
export async function evaluateHealth(db: Conn, mailboxId: string, now: number, policy: BouncePolicy = defaultBouncePolicy): Promise<HealthResult> {
  return inTx(db, async (tx) => {
    const mb = await tx.selectFrom('mailbox').select(['health']).where('id', '=', mailboxId).executeTakeFirst();
    if (!mb) throw cadenzaError('NOT_FOUND', `mailbox ${mailboxId} not found`, { mailboxId });
    const sample = (await sampleSql(mailboxId, policy.window).execute(tx)).rows[0]!;
    const v = assessBounceRate(sample, policy);
    let health = mb.health;
    if (health === 'paused' || health === 'error') return { mailboxId, health, ...v };
    if (v.verdict === 'pause') {
      await pauseMailbox(tx, mailboxId, v.reason, now);
      health = 'paused';
    } else if (v.verdict === 'warning') {
      await tx.updateTable('mailbox').set({ health: 'warning', health_reason: v.reason }).where('id', '=', mailboxId).execute();
      health = 'warning';
    } else if (health === 'warning') {
      await tx.updateTable('mailbox').set({ health: 'ok', health_reason: null }).where('id', '=', mailboxId).execute();
      health = 'ok';
    }
    return { mailboxId, health, ...v };
  });
}
