import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';
import type { LeadRow } from '../row.ts';

/** One lead as the upsert takes it: a checked row with its id; custom is the JSON text of an object of strings. */
export type LeadInsert = Omit<LeadRow, 'custom'> & { id: string; custom: string };

export interface UpsertedLead {
  id: string;
  email_norm: string;
  /** True for a new lead, false for an existing one that changed. */
  inserted: boolean;
}

/**
 * One statement per batch: the batch travels as one array per column and `unnest` turns them back
 * into rows. Against a multi-row VALUES list (15 parameters a row, capped by the protocol's 65,535)
 * this measured 3× faster on PGlite and 2× on PostgreSQL for 1,000-row batches, and has no cap.
 * Keyed on the unique (workspace_id, email_norm); the caller has removed duplicates within the
 * batch, since an upsert may not touch one row twice.
 *
 * - 'skip': existing leads are left alone; a row missing from the answer already existed.
 * - 'update': an existing lead takes the row's non-empty fields (an empty cell never erases a value;
 *   custom fields merge key by key). The number's E.164 form and verdict go with the number: a row
 *   with no verdict (no number, and none re-read by the import) keeps the stored ones. Only leads
 *   that actually change are written and returned, so
 *   a row missing from the answer existed and already had those values. `xmax = 0` tells a fresh
 *   insert from an update (an update stamps the replaced row version's xmax).
 */
export async function upsertLeads(
  db: Db,
  workspaceId: string,
  now: Date,
  rows: readonly LeadInsert[],
  mode: 'skip' | 'update',
): Promise<UpsertedLead[]> {
  if (rows.length === 0) return [];
  const col = <K extends keyof LeadInsert>(k: K): Array<LeadInsert[K]> => rows.map((r) => r[k]);
  const insert = sql`
    insert into lead (id, workspace_id, email, email_norm, first_name, last_name, company, title,
                      phone, country, region, time_zone, custom, phone_e164, phone_status, phone_reason,
                      created_at, updated_at)
    select t.id, ${workspaceId}::uuid, t.email, t.email_norm, t.first_name, t.last_name, t.company, t.title,
           t.phone, t.country, t.region, t.time_zone, t.custom::jsonb, t.phone_e164, t.phone_status, t.phone_reason,
           ${now}::timestamptz, ${now}::timestamptz
      from unnest(${col('id')}::uuid[], ${col('email')}::text[], ${col('email_norm')}::text[],
                  ${col('first_name')}::text[], ${col('last_name')}::text[], ${col('company')}::text[],
                  ${col('title')}::text[], ${col('phone')}::text[], ${col('country')}::text[],
                  ${col('region')}::text[], ${col('time_zone')}::text[], ${col('custom')}::text[],
                  ${col('phone_e164')}::text[], ${col('phone_status')}::text[], ${col('phone_reason')}::text[])
           as t(id, email, email_norm, first_name, last_name, company, title, phone, country, region, time_zone, custom,
                phone_e164, phone_status, phone_reason)`;
  const upsert =
    mode === 'skip'
      ? sql<UpsertedLead>`${insert}
    on conflict (workspace_id, email_norm) do nothing
    returning id, email_norm, true as inserted`
      : sql<UpsertedLead>`${insert}
    on conflict (workspace_id, email_norm) do update set
           first_name = coalesce(excluded.first_name, lead.first_name),
           last_name  = coalesce(excluded.last_name, lead.last_name),
           company    = coalesce(excluded.company, lead.company),
           title      = coalesce(excluded.title, lead.title),
           phone      = coalesce(excluded.phone, lead.phone),
           country    = coalesce(excluded.country, lead.country),
           region     = coalesce(excluded.region, lead.region),
           time_zone  = coalesce(excluded.time_zone, lead.time_zone),
           custom     = lead.custom || excluded.custom,
           phone_e164   = case when excluded.phone_status is null then lead.phone_e164 else excluded.phone_e164 end,
           phone_status = coalesce(excluded.phone_status, lead.phone_status),
           phone_reason = case when excluded.phone_status is null then lead.phone_reason else excluded.phone_reason end,
           updated_at = excluded.updated_at
     where (lead.first_name, lead.last_name, lead.company, lead.title, lead.phone,
            lead.country, lead.region, lead.time_zone, lead.custom,
            lead.phone_e164, lead.phone_status, lead.phone_reason)
           is distinct from
           (coalesce(excluded.first_name, lead.first_name), coalesce(excluded.last_name, lead.last_name),
            coalesce(excluded.company, lead.company), coalesce(excluded.title, lead.title),
            coalesce(excluded.phone, lead.phone), coalesce(excluded.country, lead.country),
            coalesce(excluded.region, lead.region), coalesce(excluded.time_zone, lead.time_zone),
            lead.custom || excluded.custom,
            case when excluded.phone_status is null then lead.phone_e164 else excluded.phone_e164 end,
            coalesce(excluded.phone_status, lead.phone_status),
            case when excluded.phone_status is null then lead.phone_reason else excluded.phone_reason end)
    returning id, email_norm, (xmax = 0) as inserted`;
  return (await upsert.execute(db)).rows;
}
