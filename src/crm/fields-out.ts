import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import type { CrmFieldWriter } from './connector.ts';
import type { FieldOwner, SyncedField } from './field-ownership.ts';

/**
 * Cadenza-owned fields out (docs/crm.md "Field ownership"): the journal trigger of 0055 queues a
 * mirrored contact's sequence status and last activity (crm_contact.cadenza_pending, merged, so a
 * contact waits with one set of values however many entries came); each sync round writes up to
 * `limit` contacts' worth in one writeContactFields call, then records what was written
 * (cadenza_written: the baseline the conflict check compares the CRM's values with). A value
 * already written is not written again; a field the connection does not give to Cadenza is not
 * written at all. What was queued while the write was in flight stays queued for the next round.
 */
export async function writeOwnedFields(db: Db, connectionId: string, writer: CrmFieldWriter, owners: Readonly<Record<SyncedField, FieldOwner>>, limit = 100): Promise<number> {
  const rows = await db
    .selectFrom('crm_contact')
    .select(['crm_id', 'cadenza_pending', 'cadenza_written'])
    .where('connection_id', '=', connectionId)
    .where('cadenza_pending', 'is not', null)
    .orderBy('crm_id')
    .limit(limit)
    .execute();
  if (!rows.length) return 0;
  const updates = rows.flatMap((r) => {
    const fields = Object.fromEntries(Object.entries(r.cadenza_pending ?? {}).filter(([f, v]) => owners[f as SyncedField] === 'cadenza' && r.cadenza_written[f] !== v));
    return Object.keys(fields).length ? [{ crmId: r.crm_id, fields }] : [];
  });
  if (updates.length) await writer.writeContactFields(updates);
  const sent = new Map(updates.map((u) => [u.crmId, u.fields]));
  await db.transaction().execute(async (tx) => {
    for (const r of rows) {
      await sql`
        update crm_contact
        set cadenza_written = cadenza_written || ${JSON.stringify(sent.get(r.crm_id) ?? {})}::jsonb,
            cadenza_pending = case when cadenza_pending = ${JSON.stringify(r.cadenza_pending)}::jsonb then null else cadenza_pending end
        where connection_id = ${connectionId} and crm_id = ${r.crm_id}`.execute(tx);
    }
  });
  return updates.length;
}
