/**
 * A mailbox's health from its bounces, the store side: the bounce rate over its latest sends,
 * judged by the pure classifier (bounce-rate.ts), applied to the mailbox (pause, warning, back to
 * ok), and the immediate pause when its server refuses its credentials. The sender and the bounce
 * ingester reach these through sending/dispatch/health.ts recordSendOutcome, which first marks
 * the bounce on the request that caused it (the send queue's half).
 */
import { sql } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import { inTx, type Conn } from '../../store/in-tx.ts';
import { assessBounceRate, defaultBouncePolicy, type BouncePolicy, type HealthVerdict } from './bounce-rate.ts';
import { credentialsRefusedReason, pauseMailbox } from './pause.ts';

export interface HealthResult extends HealthVerdict {
  mailboxId: string;
  /** The mailbox's health after the evaluation. */
  health: 'ok' | 'warning' | 'paused' | 'error';
}

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

/** The server refused the mailbox's credentials: it is paused at once (its first reason is kept). */
export async function credentialsRefused(db: Conn, mailboxId: string, detail: string, now: number): Promise<HealthResult> {
  const reason = credentialsRefusedReason(detail);
  await pauseMailbox(db, mailboxId, reason, now);
  return { mailboxId, health: 'paused', verdict: 'pause', confidence: 1, reason };
}
