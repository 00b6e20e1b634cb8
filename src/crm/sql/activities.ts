import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';
import type { CrmWriteResult } from '../connector.ts';

/** A claimed outbox row (0054_crm.sql crm_activity) with what the activity's words need. */
export interface ClaimedActivity {
  id: number;
  workspace_id: string;
  external_id: string;
  kind: string;
  email: string;
  payload: Record<string, unknown>;
  occurred_at: Date;
  attempts: number;
  /** A sent or replied email's subject, from the message the journal entry names; null otherwise. */
  subject: string | null;
  sequence_name: string | null;
  /** A call's lead (its page plays the recording), whether the call was recorded, and its transcript when done (sealed, 0052's). */
  lead_id: string | null;
  recorded: boolean;
  transcript: Buffer | null;
}

/**
 * Claims up to `limit` due activities of one connection, oldest first: `for update skip locked`, so
 * two writers never hold the same row, and the claim moves next_attempt_at to `leaseUntil`, so a
 * writer that dies mid-batch leaves its rows to the next after that. Each claim counts an attempt.
 */
export async function claimDue(db: Db, connectionId: string, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedActivity[]> {
  const r = await sql<ClaimedActivity>`
    with due as (
      select id from crm_activity
      where connection_id = ${connectionId} and state = 'pending' and next_attempt_at <= ${now}
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked
    ), claimed as (
      update crm_activity a set next_attempt_at = ${leaseUntil}, attempts = a.attempts + 1
      from due where a.id = due.id
      returning a.id, a.workspace_id, a.external_id, a.kind, a.email, a.payload, a.occurred_at, a.attempts, a.lead_id
    )
    select c.*, m.subject, s.name as sequence_name,
           (r.call_id is not null) as recorded, t.transcript
    from claimed c
    join crm_activity a on a.id = c.id
    left join enrollment e on e.id = (a.payload ->> 'enrollmentId')::uuid
    left join sequence s on s.id = e.sequence_id
    left join lateral (
      select subject from message
      where workspace_id = a.workspace_id and message_id = a.payload -> 'detail' ->> 'messageId'
      limit 1
    ) m on a.kind in ('email_sent', 'email_replied')
    left join phone_call_recording r on a.kind = 'call' and r.call_id = (a.payload ->> 'callId')::uuid
    left join call_transcript t on t.call_id = r.call_id and t.state = 'done'
    order by c.id`.execute(db);
  return r.rows.map((row) => ({ ...row, id: Number(row.id), recorded: row.recorded === true, transcript: row.transcript ? Buffer.from(row.transcript) : null }));
}

/**
 * Records each result in one statement per batch: written (with the CRM's id), skipped (no such
 * contact) or rejected (with the CRM's reason). Only rows still pending change.
 */
export async function settle(db: Db, ids: ReadonlyMap<string, number>, results: readonly CrmWriteResult[], now: Date): Promise<void> {
  const rows: Array<{ id: string; state: string; crmId: string | null; error: string | null }> = [];
  for (const r of results) {
    const id = ids.get(r.externalId);
    if (id === undefined) continue;
    if (r.status === 'written') rows.push({ id: String(id), state: 'written', crmId: r.crmId, error: null });
    else if (r.status === 'no_contact') rows.push({ id: String(id), state: 'skipped', crmId: null, error: 'no contact with this address in the CRM' });
    else rows.push({ id: String(id), state: 'rejected', crmId: null, error: r.error.slice(0, 2000) });
  }
  if (!rows.length) return;
  await sql`
    update crm_activity a
    set state = u.state, crm_id = u.crm_id, last_error = u.error,
        written_at = case when u.state = 'written' then ${now}::timestamptz else a.written_at end
    from unnest(${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => r.state)}::text[], ${rows.map((r) => r.crmId)}::text[], ${rows.map((r) => r.error)}::text[]) as u(id, state, crm_id, error)
    where a.id = u.id and a.state = 'pending'`.execute(db);
}

/** Puts claimed activities back for a later attempt, with the reason. */
export async function retryAt(db: Db, ids: readonly number[], at: Date, error: string): Promise<void> {
  if (!ids.length) return;
  await db.updateTable('crm_activity').set({ next_attempt_at: at, last_error: error.slice(0, 2000) }).where('id', 'in', ids).where('state', '=', 'pending').execute();
}

/** The connection's outbox at a glance, for the sync status screen and metrics. */
export async function outboxCounts(db: Db, connectionId: string): Promise<Record<'pending' | 'written' | 'skipped' | 'rejected', number>> {
  const rows = await db.selectFrom('crm_activity').select(['state', db.fn.countAll<string>().as('n')]).where('connection_id', '=', connectionId).groupBy('state').execute();
  const out = { pending: 0, written: 0, skipped: 0, rejected: 0 };
  for (const r of rows) out[r.state] = Number(r.n);
  return out;
}
