import { sql } from 'kysely';
import type { Tx } from '../store/store.ts';
import { leadFields, type BranchFacts } from './conditions.ts';
import type { CallOutcome } from './model.ts';

/**
 * What branch conditions are weighed against (conditions.ts), read in the transaction that fires
 * the branch: the emails of the enrollment a person opened (the tracking classifier's 'human'
 * verdict; automatic, image-proxy and scanner opens do not count), the emails clicked (scanner and
 * proxy fetches left out), the last outcome of each call task, and the lead's fields. By step id.
 */
export async function gatherFacts(tx: Tx, enrollmentIds: readonly string[]): Promise<Map<string, BranchFacts>> {
  const out = new Map<string, BranchFacts>();
  if (enrollmentIds.length === 0) return out;
  const ids = [...enrollmentIds];
  for (const id of ids) out.set(id, { openedByPerson: [], clicked: [], callOutcomes: {}, lead: {} });
  const tracked = await sql<{ enrollment_id: string; step_id: string; kind: 'open' | 'click' }>`
    select distinct t.enrollment_id, r.step_id, t.kind
    from tracking_event t join send_request r on r.id = t.send_request_id
    where t.enrollment_id = any(${ids}::uuid[])
      and ((t.kind = 'open' and t.verdict = 'human') or (t.kind = 'click' and coalesce(t.verdict, 'unknown') not in ('scanner', 'proxy')))`.execute(tx);
  for (const r of tracked.rows) (r.kind === 'open' ? out.get(r.enrollment_id)!.openedByPerson : out.get(r.enrollment_id)!.clicked).push(r.step_id);
  const calls = await tx.selectFrom('task').select(['enrollment_id', 'step_id', 'outcome']).where('enrollment_id', 'in', ids).where('kind', '=', 'call').where('outcome', 'is not', null).execute();
  for (const c of calls) out.get(c.enrollment_id)!.callOutcomes[c.step_id] = c.outcome as CallOutcome;
  const leads = await tx
    .selectFrom('enrollment as e')
    .innerJoin('lead as l', 'l.id', 'e.lead_id')
    .select(['e.id as enrollment_id', 'l.email', 'l.first_name', 'l.last_name', 'l.company', 'l.title', 'l.phone', 'l.country', 'l.region', 'l.time_zone', 'l.custom'])
    .where('e.id', 'in', ids)
    .execute();
  for (const l of leads) {
    const lead: Record<string, string | null> = {};
    // Custom fields first: a built-in field of the same name wins.
    for (const [k, v] of Object.entries((l.custom ?? {}) as Record<string, unknown>)) lead[k] = v === null || v === undefined ? null : String(v);
    for (const k of leadFields) lead[k] = l[k] ?? null;
    out.get(l.enrollment_id)!.lead = lead;
  }
  return out;
}
