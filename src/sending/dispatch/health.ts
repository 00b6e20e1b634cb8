/**
 * The send queue's side of mailbox health: what the sender and the bounce ingester call for each
 * outcome that bears on a mailbox's health. A bounce is first marked on the request that caused
 * it (send_request: the queue's own rows), then the mailbox's bounce rate is judged; refused
 * credentials pause the mailbox at once. The mailbox's side (the rate, the pause, what people
 * see) is mailbox/health/.
 */
import { sql } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import { defaultBouncePolicy, type BouncePolicy } from '../../mailbox/health/bounce-rate.ts';
import { credentialsRefused, evaluateHealth, type HealthResult } from '../../mailbox/health/evaluate.ts';
import { type Conn, inTx } from './sql.ts';

export type SendOutcome =
  /** A bounce of this send: a DSN, or a recipient the server refused (5xx). Soft bounces are kept but not counted in the rate. */
  | { kind: 'bounce'; requestId: string; hard: boolean; at: number }
  /** The server refused the mailbox's credentials: the mailbox is paused at once. */
  | { kind: 'credentials_failed'; mailboxId: string; detail: string; at: number };

// -- name: mark-bounce
// A hard bounce is never downgraded by a later soft report of the same send.
const markBounceSql = (requestId: string, hard: boolean, at: number) => sql<{ mailbox_id: string | null }>`
  update send_request
  set bounced_at = coalesce(bounced_at, ${new Date(at)}),
      bounce_kind = case when ${hard}::boolean or bounce_kind = 'hard' then 'hard' else 'soft' end
  where id = ${requestId}
  returning mailbox_id`;

/** Records an outcome that bears on the mailbox's health, in one transaction. Returns the mailbox's assessment after it. */
export async function recordSendOutcome(db: Conn, outcome: SendOutcome, policy: BouncePolicy = defaultBouncePolicy): Promise<HealthResult> {
  return inTx(db, async (tx) => {
    if (outcome.kind === 'credentials_failed') return credentialsRefused(tx, outcome.mailboxId, outcome.detail, outcome.at);
    const r = (await markBounceSql(outcome.requestId, outcome.hard, outcome.at).execute(tx)).rows[0];
    if (!r) throw cadenzaError('NOT_FOUND', `send request ${outcome.requestId} not found`, { requestId: outcome.requestId });
    if (r.mailbox_id === null) throw cadenzaError('CONFLICT', `send request ${outcome.requestId} has no mailbox`, { requestId: outcome.requestId });
    return evaluateHealth(tx, r.mailbox_id, outcome.at, policy);
  });
}
