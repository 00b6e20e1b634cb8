import type { CrmContact, CrmDeal } from '../connector.ts';
import { actorKey } from './actor.ts';
import { inFilter, type Page, type TwentyClient } from './client.ts';
import { objectsMetadata } from './metadata.ts';

/**
 * Twenty records in Cadenza's words (CrmContact, CrmDeal), with what they point at looked up in
 * one request per object: a person's company (its name, and its accountOwner, a workspace member,
 * whose userEmail is the owner: Twenty's person has no owner of its own), an opportunity's
 * pointOfContact (a person: its address) and owner (a member), and the stage labels from the
 * opportunity object's metadata.
 *
 * Twenty has no standard lifecycle stage or do-not-contact field on a person: lifecycleStage is
 * null and doNotContact false (a workspace's custom field for either is not read).
 */
type Row = Page['records'][number];

export async function toContacts(client: TwentyClient, people: readonly Row[]): Promise<CrmContact[]> {
  const companies = await byIds(client, 'companies', people.map((p) => p.companyId));
  const owners = await byIds(client, 'workspaceMembers', [...companies.values()].map((c) => c.accountOwnerId));
  return people.map((p) => {
    const company = typeof p.companyId === 'string' ? companies.get(p.companyId) : undefined;
    const owner = typeof company?.accountOwnerId === 'string' ? owners.get(company.accountOwnerId) : undefined;
    const name = (p.name ?? {}) as { firstName?: unknown; lastName?: unknown };
    return {
      crmId: p.id,
      email: emailOf(p),
      firstName: text(name.firstName),
      lastName: text(name.lastName),
      company: text(company?.name),
      title: text(p.jobTitle),
      phone: phoneOf(p.phones),
      ownerEmail: memberEmail(owner),
      lifecycleStage: null,
      doNotContact: false,
      updatedAt: String(p.updatedAt),
      updatedBy: actorKey(p.updatedBy),
      deleted: p.deletedAt !== null && p.deletedAt !== undefined,
    };
  });
}

export async function toDeals(client: TwentyClient, opportunities: readonly Row[]): Promise<CrmDeal[]> {
  const contacts = await byIds(client, 'people', opportunities.map((o) => o.pointOfContactId));
  const owners = await byIds(client, 'workspaceMembers', opportunities.map((o) => o.ownerId));
  // A workspace may rename or add stages: their labels are the stage field's options.
  const labels = new Map<string, string>();
  if (opportunities.length > 0) {
    const stage = (await objectsMetadata(client)).get('opportunity').fields.find((f) => f.name === 'stage');
    for (const o of stage?.options ?? []) labels.set(o.value, o.label);
  }
  return opportunities.map((o) => {
    const contact = typeof o.pointOfContactId === 'string' ? contacts.get(o.pointOfContactId) : undefined;
    const email = contact ? emailOf(contact) : null;
    return {
      crmId: o.id,
      name: text(o.name) ?? '',
      // Twenty's stage is a SELECT: its value (NEW, …, CUSTOMER) is the id, the option's label the label.
      stage: typeof o.stage === 'string' ? o.stage : '',
      stageLabel: typeof o.stage === 'string' ? (labels.get(o.stage) ?? null) : null,
      contactEmails: email ? [email] : [],
      ownerEmail: memberEmail(typeof o.ownerId === 'string' ? owners.get(o.ownerId) : undefined),
      createdAt: String(o.createdAt),
      updatedAt: String(o.updatedAt),
      updatedBy: actorKey(o.updatedBy),
      deleted: o.deletedAt !== null && o.deletedAt !== undefined,
    };
  });
}

/** id → record of `plural` for the ids given (non-strings and repeats ignored); one request, more past 60. */
async function byIds(client: TwentyClient, plural: string, ids: readonly unknown[]): Promise<Map<string, Row>> {
  const wanted = [...new Set(ids.filter((x): x is string => typeof x === 'string' && x !== ''))];
  const out = new Map<string, Row>();
  if (wanted.length === 0) return out;
  for (const r of await client.listAll(plural, inFilter('id', wanted))) out.set(r.id, r);
  return out;
}

function emailOf(p: Row): string | null {
  const e = (p.emails as { primaryEmail?: unknown } | undefined)?.primaryEmail;
  return typeof e === 'string' && e.trim() !== '' ? e.trim().toLowerCase() : null;
}

function memberEmail(m: Row | undefined): string | null {
  return typeof m?.userEmail === 'string' && m.userEmail !== '' ? m.userEmail.toLowerCase() : null;
}

function phoneOf(v: unknown): string | null {
  const p = (v ?? {}) as { primaryPhoneNumber?: unknown; primaryPhoneCallingCode?: unknown };
  if (typeof p.primaryPhoneNumber !== 'string' || p.primaryPhoneNumber === '') return null;
  return `${typeof p.primaryPhoneCallingCode === 'string' ? p.primaryPhoneCallingCode : ''}${p.primaryPhoneNumber}`;
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}
