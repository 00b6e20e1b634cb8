import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import { phoneVerdict, type PhoneColumns } from './phone.ts';

/**
 * Reads a workspace's stored lead numbers again (phone.ts), for the leads written before
 * migration 0048 gave them an E.164 form (their `phone_status` is null though `phone` is not), or,
 * with `all`, for every lead with a number: after the workspace's country changed (a national
 * number is read in it when the lead has none), or after an upgrade of the numbering metadata.
 * Until then an incoming call from such a lead's number matches nobody (match-phone.ts).
 *
 * Keyset pages of `batch` leads by id, each page's changed rows in one UPDATE; a lead written
 * meanwhile by the API or an import is read again by them, and the update here only applies where
 * the number and country are still the ones read (so a concurrent change is never overwritten with
 * a verdict on the old number).
 */
export interface RecheckReport {
  /** Leads whose number was read. */
  read: number;
  /** Of those, whose stored columns changed. */
  changed: number;
  valid: number;
  flagged: number;
  flaggedByReason: Record<string, number>;
}

export async function recheckPhones(db: Db, o: { workspaceId: string; all?: boolean; batch?: number; onProgress?: (done: number, total: number) => void }): Promise<RecheckReport> {
  const batch = Math.max(1, o.batch ?? 1000);
  const ws = await db.selectFrom('workspace').select('country').where('id', '=', o.workspaceId).executeTakeFirst();
  const workspaceCountry = ws?.country ?? null;
  const base = () => {
    let q = db.selectFrom('lead').where('workspace_id', '=', o.workspaceId).where('phone', 'is not', null);
    if (!o.all) q = q.where('phone_status', 'is', null);
    return q;
  };
  const total = Number((await base().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const report: RecheckReport = { read: 0, changed: 0, valid: 0, flagged: 0, flaggedByReason: {} };
  let after = '';
  o.onProgress?.(0, total);
  for (;;) {
    let q = base().select(['id', 'phone', 'country', 'phone_e164', 'phone_status', 'phone_reason']).orderBy('id').limit(batch);
    if (after) q = q.where('id', '>', after);
    const rows = await q.execute();
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    const changes: Array<{ id: string; phone: string; country: string | null; cols: PhoneColumns }> = [];
    for (const r of rows) {
      const v = phoneVerdict(r.phone, r.country, workspaceCountry);
      report.read++;
      if (v.columns.phone_status === 'valid') report.valid++;
      else if (v.columns.phone_status === 'flagged') {
        report.flagged++;
        if (v.code) report.flaggedByReason[v.code] = (report.flaggedByReason[v.code] ?? 0) + 1;
      }
      const same = v.columns.phone_e164 === r.phone_e164 && v.columns.phone_status === r.phone_status && v.columns.phone_reason === r.phone_reason;
      if (!same) changes.push({ id: r.id, phone: r.phone!, country: r.country, cols: v.columns });
    }
    if (changes.length) {
      const col = <K extends keyof PhoneColumns>(k: K) => changes.map((c) => c.cols[k]);
      const r = await sql`
        update lead l set phone_e164 = t.e164, phone_status = t.status, phone_reason = t.reason
        from unnest(${changes.map((c) => c.id)}::uuid[], ${changes.map((c) => c.phone)}::text[], ${changes.map((c) => c.country)}::text[],
                    ${col('phone_e164')}::text[], ${col('phone_status')}::text[], ${col('phone_reason')}::text[])
             as t(id, phone, country, e164, status, reason)
        where l.id = t.id and l.workspace_id = ${o.workspaceId}
          and l.phone = t.phone and l.country is not distinct from t.country`.execute(db);
      report.changed += Number(r.numAffectedRows ?? 0);
    }
    o.onProgress?.(report.read, total);
  }
  return report;
}
