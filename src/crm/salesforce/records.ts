import type { CrmContact, CrmDeal } from '../connector.ts';
import type { SalesforceClient } from './client.ts';
import { inChunks, parseDateTime, queryAll, quote, type Row } from './soql.ts';

/**
 * Salesforce's people and deals in Cadenza's words, in one place for every way they are read: the
 * SystemModstamp poll (changes.ts), Change Data Capture's records by id (cdc.ts) and list members
 * (lists.ts). Contacts and Leads are both people (CrmContact); Opportunities are deals, with their
 * contacts' addresses from OpportunityContactRole.
 */
export const streams = ['contacts', 'leads', 'deals'] as const;
export type Stream = (typeof streams)[number];

export const contactFields = 'Id, Email, FirstName, LastName, Title, Phone, HasOptedOutOfEmail, Account.Name, Owner.Email, SystemModstamp, LastModifiedById';
/** Change reads add IsDeleted: they go through queryAll, which returns deleted records too. */
export const fieldsOf: Record<Stream, { object: string; fields: string }> = {
  contacts: { object: 'Contact', fields: `${contactFields}, IsDeleted` },
  leads: { object: 'Lead', fields: 'Id, Email, FirstName, LastName, Company, Title, Phone, Status, HasOptedOutOfEmail, IsConverted, Owner.Email, SystemModstamp, LastModifiedById, IsDeleted' },
  deals: { object: 'Opportunity', fields: 'Id, Name, StageName, Owner.Email, CreatedDate, SystemModstamp, LastModifiedById, IsDeleted' },
};

/** Rows of one stream's object by Id, deleted ones included (queryAll), in as many queries as keep each URL within the limit. */
export async function rowsById(client: SalesforceClient, stream: Stream, ids: readonly string[]): Promise<Row[]> {
  const { object, fields } = fieldsOf[stream];
  const rows: Row[] = [];
  for (const chunk of inChunks(ids)) rows.push(...(await queryAll(client, `SELECT ${fields} FROM ${object} WHERE Id IN (${chunk.map(quote).join(', ')}) ORDER BY SystemModstamp, Id`, true)));
  return rows;
}

/** The rows of a stream in Cadenza's words (deals with their contacts' addresses: one more query per chunk). */
export async function toRecords(client: SalesforceClient, rows: Record<Stream, Row[]>): Promise<{ contacts: CrmContact[]; deals: CrmDeal[] }> {
  return { contacts: [...rows.contacts.map(toContact), ...rows.leads.map(leadToContact)], deals: await withContactEmails(client, rows.deals) };
}

async function withContactEmails(client: SalesforceClient, rows: Row[]): Promise<CrmDeal[]> {
  if (rows.length === 0) return [];
  const emails = new Map<string, Set<string>>();
  for (const chunk of inChunks(rows.map((r) => r.Id))) {
    for (const role of await queryAll(client, `SELECT OpportunityId, Contact.Email FROM OpportunityContactRole WHERE OpportunityId IN (${chunk.map(quote).join(', ')})`)) {
      const e = role.Contact?.Email;
      if (typeof e !== 'string' || !e) continue;
      const key = String(role.OpportunityId).slice(0, 15);
      emails.set(key, (emails.get(key) ?? new Set()).add(e.toLowerCase()));
    }
  }
  return rows.map((r) => ({
    crmId: r.Id,
    name: String(r.Name ?? ''),
    stage: String(r.StageName ?? ''),
    stageLabel: r.StageName ?? null,
    contactEmails: [...(emails.get(r.Id.slice(0, 15)) ?? [])].sort(),
    ownerEmail: lower(r.Owner?.Email),
    createdAt: iso(r.CreatedDate),
    updatedAt: iso(r.SystemModstamp),
    updatedBy: r.LastModifiedById ?? null,
    ...(r.IsDeleted === true ? { deleted: true } : {}),
  }));
}

/** A Contact row (contactFields) in Cadenza's words; Contacts have no lead status, so no lifecycle stage. */
export function toContact(r: Row): CrmContact {
  return {
    crmId: r.Id,
    email: lower(r.Email),
    firstName: r.FirstName ?? null,
    lastName: r.LastName ?? null,
    company: r.Account?.Name ?? null,
    title: r.Title ?? null,
    phone: r.Phone ?? null,
    ownerEmail: lower(r.Owner?.Email),
    lifecycleStage: null,
    doNotContact: r.HasOptedOutOfEmail === true,
    updatedAt: iso(r.SystemModstamp),
    updatedBy: r.LastModifiedById ?? null,
    ...(r.IsDeleted === true ? { deleted: true } : {}),
  };
}

/**
 * A Lead is a person too (Leads are where most prospects start in Salesforce): its Status is the
 * lifecycle stage. A converted lead has become a Contact (which comes as a contact change of its
 * own), so the lead is given as gone, like a merged record.
 */
function leadToContact(r: Row): CrmContact {
  return {
    crmId: r.Id,
    email: lower(r.Email),
    firstName: r.FirstName ?? null,
    lastName: r.LastName ?? null,
    company: r.Company ?? null,
    title: r.Title ?? null,
    phone: r.Phone ?? null,
    ownerEmail: lower(r.Owner?.Email),
    lifecycleStage: r.Status ?? null,
    doNotContact: r.HasOptedOutOfEmail === true,
    updatedAt: iso(r.SystemModstamp),
    updatedBy: r.LastModifiedById ?? null,
    ...(r.IsDeleted === true || r.IsConverted === true ? { deleted: true } : {}),
  };
}

const lower = (v: unknown): string | null => (typeof v === 'string' && v ? v.toLowerCase() : null);
const iso = (v: unknown): string => new Date(parseDateTime(v)).toISOString();
