import type { Db } from '../../store/store.ts';

/** What a match shows of a lead: who is calling, and enough to open their record. */
export const PHONE_MATCH_COLUMNS = ['id', 'email', 'first_name', 'last_name', 'company', 'title', 'phone', 'phone_e164', 'phone_status', 'country', 'time_zone', 'updated_at'] as const;

/**
 * The workspace's leads whose number is this E.164 number, most recently updated first (then by
 * id, so the order is stable), at most `limit`. One probe of the partial index lead_phone_e164
 * (workspace_id, phone_e164), migration 0048.
 */
export async function leadsByPhone(db: Db, workspaceId: string, e164: string, limit: number) {
  return db
    .selectFrom('lead')
    .select(PHONE_MATCH_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('phone_e164', '=', e164)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
