import { sql } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import type { Store } from '../../store/store.ts';

/** How long audit events are kept when a workspace sets nothing (settings.auditRetentionDays). */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;
export const MIN_AUDIT_RETENTION_DAYS = 30;
export const MAX_AUDIT_RETENTION_DAYS = 3650;

/** A workspace's retention in days, from its settings json: the default when unset or out of range. */
export function auditRetentionDays(settings: Record<string, unknown>): number {
  const d = settings.auditRetentionDays;
  return typeof d === 'number' && Number.isInteger(d) && d >= MIN_AUDIT_RETENTION_DAYS && d <= MAX_AUDIT_RETENTION_DAYS ? d : DEFAULT_AUDIT_RETENTION_DAYS;
}

/**
 * Deletes every workspace's events older than its retention. The only delete the log allows: the
 * transaction sets cadenza.audit_purge, which the append-only trigger (0024) checks, and `set
 * local` ends with the transaction, so nothing else that runs on the connection later inherits it.
 */
export async function purgeAuditLog(store: Store, clock: Clock): Promise<{ deleted: number }> {
  const workspaces = await store.db.selectFrom('workspace').select(['id', 'settings']).execute();
  let deleted = 0;
  for (const w of workspaces) {
    const cutoff = new Date(clock.now() - auditRetentionDays(w.settings as Record<string, unknown>) * 86_400_000);
    deleted += await store.db.transaction().execute(async (tx) => {
      await sql`set local cadenza.audit_purge = 'on'`.execute(tx);
      const r = await tx.deleteFrom('audit_event').where('workspace_id', '=', w.id).where('at', '<', cutoff).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
  }
  // Events of a workspace that no longer exists are kept by the default retention.
  const orphanCutoff = new Date(clock.now() - DEFAULT_AUDIT_RETENTION_DAYS * 86_400_000);
  deleted += await store.db.transaction().execute(async (tx) => {
    await sql`set local cadenza.audit_purge = 'on'`.execute(tx);
    const r = await tx.deleteFrom('audit_event').where('at', '<', orphanCutoff).where('workspace_id', 'not in', tx.selectFrom('workspace').select('id')).executeTakeFirst();
    return Number(r.numDeletedRows);
  });
  return { deleted };
}
