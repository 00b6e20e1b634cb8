/** Picking the leads to enroll: every lead, every lead not in a sequence yet, or leads by address. */
import type { Db } from '../../store/store.ts';

/** Every lead of the workspace, by id. */
export async function allLeadIds(db: Db, workspaceId: string): Promise<string[]> {
  const rows = await db.selectFrom('lead').select('id').where('workspace_id', '=', workspaceId).execute();
  return rows.map((r) => r.id);
}

/** The workspace's leads with no enrollment in the sequence (ever: a lead is enrolled in a sequence once). */
export async function leadIdsNotIn(db: Db, workspaceId: string, sequenceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('lead as l')
    .select('l.id')
    .where('l.workspace_id', '=', workspaceId)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('enrollment as e').select('e.id').whereRef('e.lead_id', '=', 'l.id').where('e.sequence_id', '=', sequenceId))))
    .execute();
  return rows.map((r) => r.id);
}

/** The ids of the workspace's leads with these normalised addresses, by address; an address with no lead is absent. 5,000 per query. */
export async function leadIdsByEmail(db: Db, workspaceId: string, emailNorms: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let i = 0; i < emailNorms.length; i += 5000) {
    const rows = await db.selectFrom('lead').select(['id', 'email_norm']).where('workspace_id', '=', workspaceId).where('email_norm', 'in', emailNorms.slice(i, i + 5000)).execute();
    for (const r of rows) found.set(r.email_norm, r.id);
  }
  return found;
}
