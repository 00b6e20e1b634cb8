import { sql } from 'kysely';
import type { Store } from '../../../src/store/store.ts';
import { countByMessageId } from '../../mail/mailbed.ts';
import { baseAddress, drillPass } from './seed.ts';

/**
 * The failover drills' checks, from the prospects' INBOXes and the database after the fault:
 *   - no step sent twice: every Message-ID is in its prospect's INBOX at most once;
 *   - no sent step forgotten: every request recorded sent before the fault is still sent after it
 *     (synchronous commit), and every Message-ID delivered is recorded sent (or possibly_sent /
 *     unknown, when Cadenza could not tell);
 *   - every request ends settled.
 * And the figure: Cadenza's first commit on the new primary (a request settled, a lease renewed, a
 * membership heartbeat, a reply stored), which is how long Cadenza took to resume.
 */
export interface DrillRequest {
  id: string;
  state: string;
  message_id: string | null;
  updated_at: Date;
  last_error: string | null;
  email: string;
  enrollment_id: string;
  step_key: string;
}

export const settledStates = new Set(['sent', 'possibly_sent', 'failed', 'cancelled']);

export function drillRequests(store: Store): Promise<DrillRequest[]> {
  return store.db
    .selectFrom('send_request as r')
    .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
    .innerJoin('lead as l', 'l.id', 'e.lead_id')
    .innerJoin('step as s', 's.id', 'r.step_id')
    .select(['r.id', 'r.state', 'r.message_id', 'r.updated_at', 'r.last_error', 'l.email', 'r.enrollment_id', 's.key as step_key'])
    .orderBy('r.id')
    .execute() as Promise<DrillRequest[]>;
}

/**
 * When Cadenza's first commit after `afterMs` happened, by the server's own commit timestamps
 * (track_commit_timestamp = on, which both drills' clusters set): a row's own time column would
 * say when the write was attempted, and a write attempted during the failover waits for a writable
 * host before it commits. Rows written again since keep only their latest commit, so this is the
 * earliest commit still visible: exact once polled soon after the new primary takes writes.
 * Null while none is seen (or the server does not track commit timestamps).
 */
export async function firstCommitAfter(store: Store, afterMs: number): Promise<number | null> {
  const { rows } = await sql<{ at: Date | null }>`
    select min(ts) as at from (
      select pg_xact_commit_timestamp(xmin) as ts from send_request
      union all select pg_xact_commit_timestamp(xmin) from lease
      union all select pg_xact_commit_timestamp(xmin) from member
      union all select pg_xact_commit_timestamp(xmin) from enrollment
      union all select pg_xact_commit_timestamp(xmin) from message
    ) x where ts > ${new Date(afterMs)}`.execute(store.db);
  const at = rows[0]?.at;
  return at ? new Date(at).getTime() : null;
}

export interface DeliveryVerdict {
  duplicates: string[];
  forgotten: string[];
  unsettled: string[];
}

/** `sentBefore`: the ids recorded sent before each fault, which must still be sent after it. */
export async function checkDeliveries(after: DrillRequest[], sentBefore: string[]): Promise<DeliveryVerdict> {
  const duplicates: string[] = [];
  const forgotten: string[] = [];
  const unsettled = after.filter((r) => !settledStates.has(r.state)).map((r) => `${r.email} ${r.step_key} ${r.state} ${r.last_error ?? ''}`);
  for (const r of after) {
    if (!r.message_id) continue;
    const copies = await countByMessageId(baseAddress(r.email), drillPass, r.message_id);
    if (copies > 1) duplicates.push(`${r.email} ${r.message_id} x${copies}`);
    if (copies >= 1 && r.state !== 'sent' && r.state !== 'possibly_sent' && r.state !== 'unknown') forgotten.push(`${r.email} delivered but ${r.state}`);
  }
  for (const id of sentBefore) {
    const r = after.find((x) => x.id === id);
    if (r?.state !== 'sent') forgotten.push(`${id} was sent before the fault, ${r?.state ?? 'missing'} after it`);
  }
  return { duplicates, forgotten, unsettled };
}
