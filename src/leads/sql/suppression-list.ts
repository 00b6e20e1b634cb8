import type { Selectable } from 'kysely';
import type { SuppressionReason, SuppressionTable } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';

/** The suppression list as people read it: a searchable page, and the whole list for an export. */

export type SuppressionRow = Pick<Selectable<SuppressionTable>, 'email_norm' | 'reason' | 'source' | 'created_at'>;

export interface SuppressionPageQuery {
  /** Addresses containing this text (LIKE's wildcards in it are taken literally). */
  q?: string | undefined;
  reason?: SuppressionReason | undefined;
  /** Addresses after this one (the previous page's last). */
  after?: string | undefined;
  limit: number;
}

// -- name: suppression-page
// On the primary key (workspace_id, email_norm): the address order is the index's.
export function suppressionPage(db: Db, workspaceId: string, p: SuppressionPageQuery): Promise<SuppressionRow[]> {
  let q = db.selectFrom('suppression').select(['email_norm', 'reason', 'source', 'created_at']).where('workspace_id', '=', workspaceId);
  if (p.q) q = q.where('email_norm', 'like', `%${p.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (p.reason) q = q.where('reason', '=', p.reason);
  if (p.after) q = q.where('email_norm', '>', p.after);
  return q.orderBy('email_norm').limit(p.limit).execute();
}

// -- name: suppressions-in-order
export function suppressionsInOrder(db: Db, workspaceId: string): Promise<SuppressionRow[]> {
  return db.selectFrom('suppression').select(['email_norm', 'reason', 'source', 'created_at']).where('workspace_id', '=', workspaceId).orderBy('email_norm').execute();
}
