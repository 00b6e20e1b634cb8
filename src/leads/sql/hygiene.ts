import { sql } from 'kysely';
import { afterKey, type Keyset } from '../../store/keyset.ts';
import type { Db, Tx } from '../../store/store.ts';
import type { HygieneReason, Verdict } from '../hygiene/reasons.ts';

/**
 * List hygiene's queries (migration 0030): the leads to check with what the workspace knows of
 * their addresses, the verdicts written back, and the review queue of risky leads.
 */

export interface LeadToCheck {
  id: string;
  email: string;
  /** The suppression's reason when the address hard-bounced or complained in this workspace. */
  history: 'hard_bounce' | 'complaint' | null;
}

/**
 * The workspace's leads among these ids, with their bounce/complaint history (suppression, promise
 * 6). With `due`, only those that need a check: never checked, or risky only because DNS did not
 * answer last time and not yet decided on (the outage may be over).
 */
export async function leadsToCheck(db: Db | Tx, workspaceId: string, ids: readonly string[], due = false): Promise<LeadToCheck[]> {
  if (ids.length === 0) return [];
  const r = await sql<LeadToCheck>`
    select l.id, l.email, case when s.reason in ('hard_bounce', 'complaint') then s.reason end as history
      from lead l
      left join suppression s on s.workspace_id = l.workspace_id and s.email_norm = l.email_norm
     where l.workspace_id = ${workspaceId}::uuid and l.id = any(${[...ids]}::uuid[])
       ${due ? sql`and (l.hygiene_verdict is null or (l.hygiene_verdict = 'risky' and l.hygiene_review is null and l.hygiene_reasons @> '[{"code": "domain_unchecked"}]'::jsonb))` : sql``}`.execute(db);
  return r.rows;
}

export interface VerdictRow {
  id: string;
  verdict: Verdict;
  reasons: HygieneReason[];
}

/**
 * Writes the verdicts in one statement. A review decision stays while the lead stays risky; a
 * verdict that changes (the domain got its MX back) clears it, so the next risk is reviewed anew.
 */
export async function writeVerdicts(db: Db | Tx, workspaceId: string, rows: readonly VerdictRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    update lead l
       set hygiene_verdict = u.verdict,
           hygiene_reasons = u.reasons::jsonb,
           hygiene_checked_at = ${now},
           hygiene_review = case when u.verdict = 'risky' and l.hygiene_verdict = 'risky' then l.hygiene_review end,
           hygiene_reviewed_at = case when u.verdict = 'risky' and l.hygiene_verdict = 'risky' then l.hygiene_reviewed_at end,
           hygiene_reviewed_by = case when u.verdict = 'risky' and l.hygiene_verdict = 'risky' then l.hygiene_reviewed_by end
      from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.verdict)}::text[], ${rows.map((r) => JSON.stringify(r.reasons))}::text[]) as u(id, verdict, reasons)
     where l.id = u.id and l.workspace_id = ${workspaceId}::uuid`.execute(db);
}

export interface ReviewRow {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  hygiene_reasons: HygieneReason[];
  hygiene_checked_at: Date;
  created_at: Date;
}

/** The review queue: risky leads with no decision yet, newest first, a page after `after`. */
export async function reviewQueue(db: Db, workspaceId: string, after: Keyset | undefined, limit: number): Promise<ReviewRow[]> {
  let q = db
    .selectFrom('lead')
    .select(['id', 'email', 'first_name', 'last_name', 'company', 'hygiene_reasons', 'hygiene_checked_at', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('hygiene_verdict', '=', 'risky')
    .where('hygiene_review', 'is', null);
  if (after) q = q.where(afterKey('created_at', 'id', after));
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows as ReviewRow[];
}

/** How many risky leads wait for a decision. */
export async function reviewQueueCount(db: Db, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('lead')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('hygiene_verdict', '=', 'risky')
    .where('hygiene_review', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Records a decision on risky leads of the workspace; leads that are not risky (or not in it) are
 * left alone and not counted. Returns the ids decided.
 */
export async function decideReview(db: Db, workspaceId: string, ids: readonly string[], decision: 'approved' | 'rejected', by: string | null, now: Date): Promise<string[]> {
  if (ids.length === 0) return [];
  const r = await db
    .updateTable('lead')
    .set({ hygiene_review: decision, hygiene_reviewed_at: now, hygiene_reviewed_by: by })
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', [...ids])
    .where('hygiene_verdict', '=', 'risky')
    .returning('id')
    .execute();
  return r.map((x) => x.id);
}
