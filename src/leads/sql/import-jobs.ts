/** Reading lead import jobs for people; the job writes its own row (import-job.ts). */
import type { Selectable } from 'kysely';
import type { LeadImportTable } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';

export type ImportJobRow = Selectable<LeadImportTable>;

/** The workspace's import job, or undefined (another workspace's job is not found). */
export async function findImportJob(db: Db, workspaceId: string, jobId: string): Promise<ImportJobRow | undefined> {
  return db.selectFrom('lead_import').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', jobId).executeTakeFirst();
}

/** The workspace's `limit` most recent import jobs, newest first, running ones included. */
export async function recentImportJobs(db: Db, workspaceId: string, limit: number): Promise<ImportJobRow[]> {
  return db.selectFrom('lead_import').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}
