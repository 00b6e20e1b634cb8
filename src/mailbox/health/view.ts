import { sql } from 'kysely';
import type { Conn } from '../../store/in-tx.ts';
import { verificationOf } from '../verification.ts';

/**
 * A mailbox's health as shown to people (issue 11: a mailbox whose host could not be reached was
 * shown "ok" while nothing left it). The stored verdict (a pause for bounces or refused
 * credentials, a warning for the bounce rate) comes first; a mailbox stored as healthy shows what
 * fails now: sending (the latest transient failure no send has succeeded after), reading its
 * inbox (the sync's last error), or a connection test that failed. A mailbox added with its test
 * skipped keeps its health and says "not verified" beside it (the API's `verification`). Pure;
 * lastSendError below reads the one fact it needs from the send queue.
 */
export interface HealthFacts {
  health: 'ok' | 'warning' | 'paused' | 'error';
  healthReason: string | null;
  settings: unknown;
  syncError: string | null;
  sendError: string | null;
}

export function mailboxHealth(f: HealthFacts): { health: HealthFacts['health']; reason: string | null } {
  if (f.health !== 'ok') return { health: f.health, reason: f.healthReason };
  if (f.sendError) return { health: 'error', reason: `Sending fails: ${f.sendError.replace(/^transient:\s*/, '')}. Check the SMTP host, port and password, then Test.` };
  if (f.syncError) return { health: 'warning', reason: `Reading the inbox fails: ${f.syncError}. Replies are not seen, so sequences do not stop on them, until this is fixed.` };
  const v = verificationOf(f.settings);
  if (v?.state === 'failed') return { health: 'warning', reason: `The last connection test failed: ${v.problem ?? 'see Test'}` };
  return { health: 'ok', reason: null };
}

// -- name: last-send-error
/**
 * The mailbox's latest transient send failure that no successful send came after (a host that
 * cannot be reached, a server that keeps answering 4xx), or null: the health shown to people
 * reflects it (mailboxHealth's sendError) while the retries go on.
 */
export async function lastSendError(db: Conn, mailboxId: string): Promise<string | null> {
  const r = await sql<{ last_error: string }>`
    select f.last_error from send_request f
    where f.mailbox_id = ${mailboxId} and f.state = 'queued' and f.last_error like 'transient:%'
      and not exists (select 1 from send_request s where s.mailbox_id = f.mailbox_id and s.state = 'sent' and s.updated_at > f.updated_at)
    order by f.updated_at desc limit 1`.execute(db);
  return r.rows[0]?.last_error ?? null;
}
