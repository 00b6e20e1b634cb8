import { sql } from 'kysely';
import type { Tx } from '../../store/store.ts';

/**
 * The queries of changes in (0055_crm_changes.sql): the mirror's rows a page touches, the leads
 * of addresses, a lead's live enrollments for a stop, the conflict log and the cursor. Only the
 * change reader (apply-changes.ts, change-reader.ts) and the list enroller call these.
 */

export interface MirrorContact {
  crm_id: string;
  fields: Record<string, unknown>;
  updated_at: Date;
  cadenza_written: Record<string, string | null>;
}

// -- name: mirror-contacts
export async function mirrorContacts(tx: Tx, connectionId: string, crmIds: readonly string[]): Promise<Map<string, MirrorContact>> {
  if (!crmIds.length) return new Map();
  const rows = await tx.selectFrom('crm_contact').select(['crm_id', 'fields', 'updated_at', 'cadenza_written']).where('connection_id', '=', connectionId).where('crm_id', 'in', [...crmIds]).execute();
  return new Map(rows.map((r) => [r.crm_id, { ...r, updated_at: new Date(r.updated_at) } as MirrorContact]));
}

// -- name: upsert-contact
// A newer version replaces the fields; what Cadenza wrote and what waits to be written stay.
export async function upsertContact(
  tx: Tx,
  r: { connectionId: string; workspaceId: string; crmId: string; email: string | null; leadId: string | null; fields: Record<string, unknown>; updatedAt: Date; updatedBy: string | null; now: Date },
): Promise<void> {
  await tx
    .insertInto('crm_contact')
    .values({ connection_id: r.connectionId, workspace_id: r.workspaceId, crm_id: r.crmId, email: r.email, lead_id: r.leadId, fields: JSON.stringify(r.fields), updated_at: r.updatedAt, updated_by: r.updatedBy, read_at: r.now })
    .onConflict((oc) =>
      oc.columns(['connection_id', 'crm_id']).doUpdateSet({ email: r.email, lead_id: r.leadId, fields: JSON.stringify(r.fields), updated_at: r.updatedAt, updated_by: r.updatedBy, read_at: r.now }),
    )
    .execute();
}

// -- name: mirror-deals
export async function mirrorDeals(tx: Tx, connectionId: string, crmIds: readonly string[]): Promise<Map<string, { stage: string; updated_at: Date }>> {
  if (!crmIds.length) return new Map();
  const rows = await tx.selectFrom('crm_deal').select(['crm_id', 'stage', 'updated_at']).where('connection_id', '=', connectionId).where('crm_id', 'in', [...crmIds]).execute();
  return new Map(rows.map((r) => [r.crm_id, { stage: r.stage, updated_at: new Date(r.updated_at) }]));
}

// -- name: upsert-deal
export async function upsertDeal(
  tx: Tx,
  r: { connectionId: string; workspaceId: string; crmId: string; name: string; stage: string; contactEmails: string[]; ownerEmail: string | null; createdAt: Date; updatedAt: Date; now: Date },
): Promise<void> {
  const v = { name: r.name, stage: r.stage, contact_emails: r.contactEmails, owner_email: r.ownerEmail, updated_at: r.updatedAt, read_at: r.now };
  await tx
    .insertInto('crm_deal')
    .values({ connection_id: r.connectionId, workspace_id: r.workspaceId, crm_id: r.crmId, created_at: r.createdAt, ...v })
    .onConflict((oc) => oc.columns(['connection_id', 'crm_id']).doUpdateSet(v))
    .execute();
}

export interface LeadFields {
  id: string;
  email_norm: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  title: string | null;
  phone: string | null;
}

// -- name: leads-by-address
export async function leadsByAddress(tx: Tx, workspaceId: string, emails: readonly string[]): Promise<Map<string, LeadFields>> {
  if (!emails.length) return new Map();
  const rows = await tx
    .selectFrom('lead')
    .select(['id', 'email_norm', 'first_name', 'last_name', 'company', 'title', 'phone'])
    .where('workspace_id', '=', workspaceId)
    .where('email_norm', 'in', [...new Set(emails)])
    .execute();
  return new Map(rows.map((r) => [r.email_norm, r]));
}

// -- name: live-enrollments-of-addresses
// The live enrollments of these addresses (the leads of the workspace with them), locked in id
// order, the order every stop locks in (sequence/sql/suppression.ts).
export async function liveEnrollmentsOf(tx: Tx, workspaceId: string, emails: readonly string[]): Promise<string[]> {
  if (!emails.length) return [];
  const r = await sql<{ id: string }>`
    select e.id from enrollment e join lead l on l.id = e.lead_id
    where l.workspace_id = ${workspaceId} and l.email_norm = any(${[...new Set(emails)]}::text[]) and e.state in ('active', 'paused')
    order by e.id
    for update of e`.execute(tx);
  return r.rows.map((x) => x.id);
}

// -- name: insert-conflict
// Once per (contact, field, CRM version): a page read again logs nothing new. True when logged now.
export async function insertConflict(
  tx: Tx,
  c: { connectionId: string; workspaceId: string; crmId: string; email: string | null; field: string; crmValue: string | null; cadenzaValue: string | null; crmUpdatedAt: Date; crmUpdatedBy: string | null; now: Date },
): Promise<boolean> {
  const r = await tx
    .insertInto('crm_conflict')
    .values({
      connection_id: c.connectionId,
      workspace_id: c.workspaceId,
      crm_id: c.crmId,
      email: c.email,
      field: c.field,
      crm_value: c.crmValue,
      cadenza_value: c.cadenzaValue,
      crm_updated_at: c.crmUpdatedAt,
      crm_updated_by: c.crmUpdatedBy,
      at: c.now,
    })
    .onConflict((oc) => oc.columns(['connection_id', 'crm_id', 'field', 'crm_updated_at']).doNothing())
    .returning('id')
    .execute();
  return r.length === 1;
}

// -- name: store-cursor
// In the transaction that stored the page: the position moves with what it covers, or not at all.
export async function storeCursor(tx: Tx, connectionId: string, cursor: string, newestChange: Date | null, now: Date): Promise<void> {
  await tx
    .updateTable('crm_connection')
    .set({
      change_cursor: cursor,
      change_cursor_at: now,
      read_error: null,
      ...(newestChange ? { last_change_at: sql<string>`greatest(last_change_at, ${newestChange}::timestamptz)` } : {}),
    })
    .where('id', '=', connectionId)
    .execute();
}
