import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';

/**
 * The stored number and country of the workspace's leads with these addresses, by address (an
 * address with no lead is absent): what an updating import reads a row's number, or its new
 * country, against (import.ts). One query per batch on the unique (workspace_id, email_norm).
 */
export async function storedPhones(db: Db, workspaceId: string, emailNorms: readonly string[]): Promise<Map<string, { phone: string | null; country: string | null }>> {
  if (emailNorms.length === 0) return new Map();
  const r = await sql<{ email_norm: string; phone: string | null; country: string | null }>`
    select email_norm, phone, country
      from lead
     where workspace_id = ${workspaceId}::uuid
       and email_norm = any(${emailNorms}::text[])`.execute(db);
  return new Map(r.rows.map((row) => [row.email_norm, { phone: row.phone, country: row.country }]));
}
