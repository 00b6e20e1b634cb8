import { normalizeEmail } from '../leads/email.ts';
import { updateLead } from '../leads/sql/leads.ts';
import type { Applied } from '../sequence/enrollment-service.ts';
import { suppress, type StopEngine } from '../sequence/suppress.ts';
import type { Tx } from '../store/store.ts';
import type { CrmChangePage, CrmContact, CrmDeal, CrmKind } from './connector.ts';
import type { FieldOwner, SyncedField } from './field-ownership.ts';
import { insertConflict, leadsByAddress, liveEnrollmentsOf, mirrorContacts, mirrorDeals, storeCursor, upsertContact, upsertDeal, type LeadFields } from './sql/changes.ts';
import { contactVerdict, dealVerdict, type StopRules } from './stop-rules.ts';

/**
 * Stores one page of CRM changes, in the caller's transaction together with the cursor after it
 * (promise 5: the cursor advances only with what it covers). For each change newer than the
 * mirror's version (an older or equal one was stored already: a page read again is a no-op):
 *
 * 1. the mirror takes the new version (crm_contact, crm_deal), linked to the lead of its address;
 * 2. a change the connection's own CRM user made is Cadenza's own write coming back: nothing more
 *    (no loop: Cadenza's write is never taken as news);
 * 3. the CRM-owned lead fields that changed are set on the lead;
 * 4. a Cadenza-owned field whose CRM value differs from what Cadenza last wrote is a person's edit
 *    in the CRM: logged in crm_conflict, not applied;
 * 5. the stop rules (stop-rules.ts): the do-not-contact flag suppresses the address through
 *    suppress() (promise 6), the others stop the live enrollments through the engine, so each stop
 *    has its state, journal entry and cancelled work as any stop does.
 *
 * The engine's transitions are returned for its notify() after the caller's commit.
 */
export interface ConnectionContext {
  connectionId: string;
  workspaceId: string;
  kind: CrmKind;
  /** When the connection was made: deals created before it are not news (stop-rules.ts). */
  connectedAt: number;
  integrationUserId: string | null;
  owners: Readonly<Record<SyncedField, FieldOwner>>;
  rules: StopRules;
}

export interface StoredPage {
  /** Versions stored (new to the mirror). */
  contacts: number;
  deals: number;
  /** Changes the connection's own user made. */
  own: number;
  /** Older or equal versions the mirror had already. */
  repeated: number;
  leadsUpdated: number;
  conflicts: number;
  suppressed: number;
  /** Enrollments the stop rules ended. */
  stopped: number;
}

/** Lead columns the CRM's contact fields set, when the CRM owns them. */
const LEAD_COLUMNS = { firstName: 'first_name', lastName: 'last_name', company: 'company', title: 'title', phone: 'phone' } as const;
type LeadField = keyof typeof LEAD_COLUMNS;

/** A contact's synced fields as the mirror keeps them. */
function fieldsOf(c: CrmContact): Record<string, unknown> {
  const f: Record<string, unknown> = {
    email: c.email,
    firstName: c.firstName,
    lastName: c.lastName,
    company: c.company,
    title: c.title,
    phone: c.phone,
    ownerEmail: c.ownerEmail,
    lifecycleStage: c.lifecycleStage,
    doNotContact: c.doNotContact,
  };
  if (c.cadenzaSequenceStatus !== undefined) f.cadenzaSequenceStatus = c.cadenzaSequenceStatus;
  if (c.cadenzaLastActivityAt !== undefined) f.cadenzaLastActivityAt = c.cadenzaLastActivityAt;
  return f;
}

/**
 * Whether two values of a field are the same: a date-time Cadenza wrote may come back in another
 * spelling of the same instant (no milliseconds, an offset), which is no edit.
 */
function same(field: string, a: string | null, b: string | null): boolean {
  if (a === b) return true;
  if (field !== 'cadenzaLastActivityAt' || a === null || b === null) return false;
  const [x, y] = [Date.parse(a), Date.parse(b)];
  return Number.isFinite(x) && x === y;
}

const asText = (v: unknown): string | null => (v === undefined || v === null ? null : String(v));
const addressOf = (email: string | null): string | null => (email ? (normalizeEmail(email) ?? email.toLowerCase()) : null);

/** The newest of each record in a page (a page may hold a record twice: the reader's overlap). */
function newest<T extends { crmId: string; updatedAt: string }>(items: readonly T[]): T[] {
  const by = new Map<string, T>();
  for (const i of items) {
    const had = by.get(i.crmId);
    if (!had || Date.parse(i.updatedAt) > Date.parse(had.updatedAt)) by.set(i.crmId, i);
  }
  return [...by.values()].sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt));
}

export async function storePage(tx: Tx, engine: StopEngine, c: ConnectionContext, page: CrmChangePage, now: number): Promise<{ stored: StoredPage; applied: Applied[] }> {
  const out: StoredPage = { contacts: 0, deals: 0, own: 0, repeated: 0, leadsUpdated: 0, conflicts: 0, suppressed: 0, stopped: 0 };
  const applied: Applied[] = [];
  const at = new Date(now);
  const contacts = newest(page.contacts);
  const deals = newest(page.deals);
  const mine = (by: string | null | undefined) => by != null && c.integrationUserId !== null && by === c.integrationUserId;
  const stop = async (emails: string[], reason: string) => {
    const ids = await liveEnrollmentsOf(tx, c.workspaceId, emails);
    const done = await engine.stopEachInTx(tx, ids, reason, now);
    out.stopped += done.filter((a) => a.result.outcome === 'applied' && a.result.next.state === 'stopped').length;
    applied.push(...done);
  };

  const mirror = await mirrorContacts(tx, c.connectionId, contacts.map((x) => x.crmId));
  const leads = await leadsByAddress(tx, c.workspaceId, contacts.flatMap((x) => (addressOf(x.email) ? [addressOf(x.email)!] : [])));
  for (const contact of contacts) {
    const prev = mirror.get(contact.crmId) ?? null;
    const updatedAt = new Date(contact.updatedAt);
    if (prev && prev.updated_at.getTime() >= updatedAt.getTime()) {
      out.repeated++;
      continue;
    }
    const address = addressOf(contact.email);
    const lead = address ? (leads.get(address) ?? null) : null;
    const fields = fieldsOf(contact);
    await upsertContact(tx, { connectionId: c.connectionId, workspaceId: c.workspaceId, crmId: contact.crmId, email: address, leadId: lead?.id ?? null, fields, updatedAt, updatedBy: contact.updatedBy ?? null, now: at });
    out.contacts++;
    if (mine(contact.updatedBy)) {
      out.own++;
      continue;
    }
    if (contact.deleted) continue;
    const before = prev?.fields ?? null;
    if (lead && (await applyLeadFields(tx, c, lead, before, contact, at))) out.leadsUpdated++;
    for (const field of Object.keys(c.owners) as SyncedField[]) {
      if (c.owners[field] !== 'cadenza' || !(field in fields)) continue;
      const written = prev?.cadenza_written[field];
      const crmValue = asText(fields[field]);
      // No baseline until Cadenza wrote the field; an unchanged CRM value was judged when it was read.
      if (written === undefined || same(field, crmValue, written) || (before && same(field, asText(before[field]), crmValue))) continue;
      const logged = await insertConflict(tx, {
        connectionId: c.connectionId,
        workspaceId: c.workspaceId,
        crmId: contact.crmId,
        email: address,
        field,
        crmValue,
        cadenzaValue: written,
        crmUpdatedAt: updatedAt,
        crmUpdatedBy: contact.updatedBy ?? null,
        now: at,
      });
      if (logged) out.conflicts++;
    }
    const verdict = contactVerdict(c.rules, before as Partial<CrmContact> | null, contact, (f) => c.owners[f] === 'crm');
    if (verdict.suppress && address) {
      const s = await suppress(tx, engine, c.workspaceId, [{ email: address, reason: 'manual', source: `crm:${c.kind} do not contact (${contact.crmId})` }], { now });
      out.suppressed += s.added.length;
      out.stopped += s.stopped.length;
      applied.push(...s.applied);
    }
    if (verdict.stop && address && lead) await stop([address], verdict.stop);
  }

  const dealMirror = await mirrorDeals(tx, c.connectionId, deals.map((d) => d.crmId));
  for (const deal of deals) {
    const prev = dealMirror.get(deal.crmId) ?? null;
    const updatedAt = new Date(deal.updatedAt);
    if (prev && prev.updated_at.getTime() >= updatedAt.getTime()) {
      out.repeated++;
      continue;
    }
    const emails = deal.contactEmails.flatMap((e) => (addressOf(e) ? [addressOf(e)!] : []));
    await upsertDeal(tx, { connectionId: c.connectionId, workspaceId: c.workspaceId, crmId: deal.crmId, name: deal.name, stage: deal.stage, contactEmails: emails, ownerEmail: deal.ownerEmail, createdAt: new Date(deal.createdAt), updatedAt, now: at });
    out.deals++;
    if (mine(deal.updatedBy)) {
      out.own++;
      continue;
    }
    if (deal.deleted) continue;
    const reason = dealVerdict(c.rules, prev, deal as CrmDeal, c.connectedAt);
    if (reason) await stop(emails, reason);
  }

  await storeCursor(tx, c.connectionId, page.cursor, newestChange(page), at);
  return { stored: out, applied };
}

/** The CRM-owned lead fields that changed in this version (all of them the first time a contact is seen). */
async function applyLeadFields(tx: Tx, c: ConnectionContext, lead: LeadFields, before: Record<string, unknown> | null, contact: CrmContact, at: Date): Promise<boolean> {
  const cols: Record<string, string | null> = {};
  for (const [field, column] of Object.entries(LEAD_COLUMNS) as Array<[LeadField, (typeof LEAD_COLUMNS)[LeadField]]>) {
    if (c.owners[field] !== 'crm') continue;
    const value = contact[field];
    const changed = before ? asText(before[field]) !== value : value !== null;
    if (changed && lead[column] !== value) cols[column] = value;
  }
  if (Object.keys(cols).length === 0) return false;
  await updateLead(tx, { workspaceId: c.workspaceId, leadId: lead.id, cols, custom: undefined, now: at });
  return true;
}

function newestChange(page: CrmChangePage): Date | null {
  const times = [...page.contacts, ...page.deals].map((x) => Date.parse(x.updatedAt)).filter((t) => Number.isFinite(t));
  return times.length ? new Date(Math.max(...times)) : null;
}
