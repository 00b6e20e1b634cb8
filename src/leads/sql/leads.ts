/**
 * One lead at a time, as a person changes it (the API): read, create, change, delete. Imports
 * write in batches through insert-leads.ts; both keep the workspace's addresses unique on
 * (workspace_id, email_norm).
 */
import { sql, type Selectable } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import type { LeadTable } from '../../store/schema.ts';
import { inTx } from '../../store/in-tx.ts';
import type { Db } from '../../store/store.ts';
import type { LeadColumns } from '../lead-fields.ts';
import { phoneVerdict, type PhoneColumns } from '../phone.ts';

/** The columns a person sees of a lead (no search text, no timestamps). */
export const LEAD_VIEW_COLUMNS = [
  'id', 'email', 'first_name', 'last_name', 'company', 'title', 'phone', 'phone_e164', 'phone_status', 'phone_reason',
  'country', 'time_zone', 'custom', 'hygiene_verdict', 'hygiene_reasons', 'hygiene_checked_at', 'hygiene_review',
] as const;
export type LeadView = Pick<Selectable<LeadTable>, (typeof LEAD_VIEW_COLUMNS)[number]>;

/** Custom fields as a person sends them: a string sets one, null removes it. */
export type CustomChange = Record<string, string | null>;

/** The fields a change sets (nulls dropped): what a new lead keeps, and what a merge adds. */
function customSet(c: CustomChange | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(c ?? {}).filter((e): e is [string, string] => e[1] !== null));
}

/** The unique (workspace_id, email_norm) index refused the address: another lead of the workspace has it. */
function uniqueEmail(e: { code?: string }): never {
  if (e.code === '23505') throw cadenzaError('CONFLICT', 'another lead in this workspace has this address', { field: 'email' });
  throw e;
}

/** The workspace's lead, every column, or undefined (another workspace's lead is not found). */
export async function findLead(db: Db, workspaceId: string, leadId: string): Promise<Selectable<LeadTable> | undefined> {
  return db.selectFrom('lead').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
}

/** The workspace's country: what reads a national number on a lead without a country (phone.ts). */
async function workspaceCountry(db: Db, workspaceId: string): Promise<string | null> {
  const w = await db.selectFrom('workspace').select('country').where('id', '=', workspaceId).executeTakeFirst();
  return w?.country ?? null;
}

/**
 * Creates a lead from checked columns (leadColumns) with an address, its number's E.164 form and
 * verdict beside it (phone.ts); CONFLICT when the workspace has the address.
 */
export async function insertLead(db: Db, o: { id: string; workspaceId: string; cols: LeadColumns & { email: string; email_norm: string }; custom: CustomChange | undefined }): Promise<LeadView> {
  const phone = phoneVerdict(o.cols.phone ?? null, o.cols.country ?? null, await workspaceCountry(db, o.workspaceId)).columns;
  return db
    .insertInto('lead')
    .values({ ...o.cols, ...phone, id: o.id, workspace_id: o.workspaceId, custom: JSON.stringify(customSet(o.custom)) })
    .returning(LEAD_VIEW_COLUMNS)
    .executeTakeFirstOrThrow()
    .catch(uniqueEmail);
}

/**
 * Changes the given columns of the workspace's lead; custom fields merge key by key, a null
 * removing one. Undefined when there is no such lead; CONFLICT when the new address is another lead's.
 *
 * A change of number or country reads the number again (phone.ts), the half not changed taken from
 * the stored lead, read under a row lock in the same transaction as the update: two changes at once
 * (one of the number, one of the country) cannot leave a verdict for a pair the lead never had.
 */
export async function updateLead(db: Db, o: { workspaceId: string; leadId: string; cols: LeadColumns; custom: CustomChange | undefined; now: Date }): Promise<LeadView | undefined> {
  if (o.cols.phone === undefined && o.cols.country === undefined) return updateColumns(db, o);
  return inTx(db, async (tx) => {
    const stored = await tx
      .selectFrom('lead as l')
      .innerJoin('workspace as w', 'w.id', 'l.workspace_id')
      .select(['l.phone', 'l.country', 'w.country as workspace_country'])
      .where('l.workspace_id', '=', o.workspaceId)
      .where('l.id', '=', o.leadId)
      .forUpdate('l')
      .executeTakeFirst();
    if (!stored) return undefined;
    const phone = o.cols.phone !== undefined ? o.cols.phone : stored.phone;
    const country = o.cols.country !== undefined ? o.cols.country : stored.country;
    return updateColumns(tx, { ...o, cols: { ...o.cols, ...phoneVerdict(phone, country, stored.workspace_country).columns } });
  });
}

async function updateColumns(db: Db, o: { workspaceId: string; leadId: string; cols: LeadColumns & Partial<PhoneColumns>; custom: CustomChange | undefined; now: Date }): Promise<LeadView | undefined> {
  const custom = o.custom;
  const removed = Object.keys(custom ?? {}).filter((k) => custom![k] === null);
  return db
    .updateTable('lead')
    .set({
      ...o.cols,
      updated_at: o.now,
      ...(custom ? { custom: sql`(custom || ${JSON.stringify(customSet(custom))}::jsonb) - ${removed}::text[]` } : {}),
    })
    .where('workspace_id', '=', o.workspaceId)
    .where('id', '=', o.leadId)
    .returning(LEAD_VIEW_COLUMNS)
    .executeTakeFirst()
    .catch(uniqueEmail);
}

/** Deletes the workspace's lead (its enrollments and tasks go with it, by cascade); false when there was none. */
export async function deleteLead(db: Db, workspaceId: string, leadId: string): Promise<boolean> {
  const r = await db.deleteFrom('lead').where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The workspace's first `limit` leads (oldest first), with the fields a template reads: the sample a template is checked against. */
export async function oldestLeads(db: Db, workspaceId: string, limit: number) {
  return db
    .selectFrom('lead')
    .select(['email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'region', 'custom'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}
