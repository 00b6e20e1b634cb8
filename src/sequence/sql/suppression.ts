import { sql } from 'kysely';
import type { Db, Tx } from '../../store/store.ts';
import type { SuppressionReason } from '../../store/schema.ts';

/**
 * The suppression table's writes, and the enrollments a suppression stops. Only suppress.ts calls
 * these (the owner of promise 6); `suppress.test.ts` fails the build if another file writes the
 * table.
 */

export interface SuppressionRow {
  email: string;
  reason: SuppressionReason;
  source: string;
}

// -- name: insert-suppressions
// One statement for the lot. An address already suppressed keeps its first reason and source (on
// conflict do nothing): a complaint stays a complaint when the unsubscribe that follows it is
// recorded, and the first evidence is the one shown. Returns the addresses new in the list.
export async function insertSuppressions(tx: Tx, workspaceId: string, rows: readonly SuppressionRow[], at: number): Promise<string[]> {
  if (!rows.length) return [];
  const r = await sql<{ email_norm: string }>`
    insert into suppression (workspace_id, email_norm, reason, source, created_at)
    select ${workspaceId}, u.email, u.reason, u.source, ${new Date(at)}
    from unnest(${rows.map((x) => x.email)}::text[], ${rows.map((x) => x.reason)}::text[], ${rows.map((x) => x.source.slice(0, 200))}::text[]) as u(email, reason, source)
    on conflict (workspace_id, email_norm) do nothing
    returning email_norm`.execute(tx);
  return r.rows.map((x) => x.email_norm);
}

/**
 * The enrollments a stop still has work on (`e` is the enrollment): live ones, finished ones that
 * hold an open task (a call that did not hold the sequence outlives its end), and replied ones that
 * hold their owner's notice of the reply (a reply rule). A suppression stops them all: the live
 * ones end, the others keep their state and lose their open tasks.
 */
const stoppable = sql`(e.state in ('active', 'paused')
  or (e.state in ('finished', 'replied') and exists (select 1 from task t where t.enrollment_id = e.id and t.state = 'open')))`;

// -- name: stoppable-enrollments-of
// Every enrollment of these addresses in the workspace that a suppression stops, except the spared
// ones and those they were moved to: the caller's own events transition those, and the engine
// passes a prospect's signal on along moved_to (enrollment-service.ts applyInTx), at most 32 hops
// as there. Locked in id order (the order every stop locks in), with the rule re-checked under the
// lock, so an enrollment another transaction just ended is not stopped a second time.
export async function stoppableEnrollmentsOf(tx: Tx, workspaceId: string, emails: readonly string[], spare: readonly string[]): Promise<string[]> {
  if (!emails.length) return [];
  const r = await sql<{ id: string }>`
    with recursive spared(id, hops) as (
      select x.id, 0 from unnest(${[...spare]}::uuid[]) as x(id)
      union
      select m.moved_to, s.hops + 1 from enrollment m join spared s on m.id = s.id
      where m.moved_to is not null and s.hops < 32
    )
    select e.id from enrollment e join lead l on l.id = e.lead_id
    where l.workspace_id = ${workspaceId} and l.email_norm = any(${[...emails]}::text[]) and ${stoppable}
      and e.id not in (select id from spared)
    order by e.id
    for update of e`.execute(tx);
  return r.rows.map((x) => x.id);
}

// -- name: live-enrollments-of-company
// The live enrollments of a company (an email domain) in the workspace, except one address's: the
// sequence rule "a reply stops the company" (stop_rules.stopCompanyOnReply). The domain is matched
// as the address's tail with LIKE's wildcards escaped. Locked as above.
export async function liveEnrollmentsOfCompany(tx: Tx, workspaceId: string, domain: string, exceptEmail: string): Promise<string[]> {
  const r = await sql<{ id: string }>`
    select e.id from enrollment e join lead l on l.id = e.lead_id
    where l.workspace_id = ${workspaceId} and l.email_norm like ${'%@' + domain.replace(/[\\%_]/g, (c) => '\\' + c)}
      and l.email_norm <> ${exceptEmail} and e.state in ('active', 'paused')
    order by e.id
    for update of e`.execute(tx);
  return r.rows.map((x) => x.id);
}

// -- name: delete-suppression
// Lifting a suppression (an admin's undo). True when there was one.
export async function deleteSuppression(db: Db, workspaceId: string, emailNorm: string): Promise<boolean> {
  const r = await db.deleteFrom('suppression').where('workspace_id', '=', workspaceId).where('email_norm', '=', emailNorm).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Why an address is suppressed in the workspace (undefined: it is not). */
export async function suppressionReason(db: Db | Tx, workspaceId: string, emailNorm: string): Promise<string | undefined> {
  const row = await db.selectFrom('suppression').select('reason').where('workspace_id', '=', workspaceId).where('email_norm', '=', emailNorm).executeTakeFirst();
  return row?.reason;
}
