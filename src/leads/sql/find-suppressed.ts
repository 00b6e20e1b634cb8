import { sql } from 'kysely';
import { erasedMarker, type ErasureKey } from '../../common/erasure-key.ts';
import type { Db } from '../../store/store.ts';

/**
 * Which of these addresses are suppressed in the workspace (promise 6), with why: one query per
 * batch on suppression's primary key (workspace_id, email_norm). One array parameter rather than
 * an IN list of a thousand: measured 2× faster on PGlite.
 *
 * With the erasure key, an address erased at its owner's request is found too, by its keyed hash
 * (common/erasure-key.ts), with the reason 'erased': the list no longer holds the address itself.
 */
export async function findSuppressed(db: Db, workspaceId: string, emailNorms: readonly string[], erasure?: ErasureKey): Promise<Map<string, string>> {
  if (emailNorms.length === 0) return new Map();
  const byMarker = new Map(erasure ? emailNorms.map((e) => [erasedMarker(erasure, workspaceId, e), e] as const) : []);
  const r = await sql<{ email_norm: string; reason: string }>`
    select email_norm, reason
      from suppression
     where workspace_id = ${workspaceId}::uuid
       and email_norm = any(${[...emailNorms, ...byMarker.keys()]}::text[])`.execute(db);
  return new Map(r.rows.map((row) => [byMarker.get(row.email_norm) ?? row.email_norm, row.reason]));
}
