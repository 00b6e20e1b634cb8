import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';

/**
 * Which of these addresses are suppressed in the workspace (promise 6), with why: one query per
 * batch on suppression's primary key (workspace_id, email_norm). One array parameter rather than
 * an IN list of a thousand: measured 2× faster on PGlite.
 */
export async function findSuppressed(db: Db, workspaceId: string, emailNorms: readonly string[]): Promise<Map<string, string>> {
  if (emailNorms.length === 0) return new Map();
  const r = await sql<{ email_norm: string; reason: string }>`
    select email_norm, reason
      from suppression
     where workspace_id = ${workspaceId}::uuid
       and email_norm = any(${[...emailNorms]}::text[])`.execute(db);
  return new Map(r.rows.map((row) => [row.email_norm, row.reason]));
}
