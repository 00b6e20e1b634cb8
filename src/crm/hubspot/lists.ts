import type { CrmList, CrmListPage } from '../connector.ts';
import { CONTACT_PROPERTIES, toCrmContact, type HubSpotObject } from './contact-fields.ts';
import { hubspotGet, hubspotPost, type HubSpotHttpOptions } from './http.ts';
import type { HubSpotOwners } from './owners.ts';

/**
 * Contact lists (Lists API v3) a sequence can enroll from: every contact list (objectTypeId 0-1)
 * by POST /crm/v3/lists/search, paged by offset; a list's members by GET
 * /crm/v3/lists/{listId}/memberships (record ids, paged by an opaque `after` passed back as the
 * page token), then the contacts themselves by batch read, 100 at a time.
 */
const CONTACTS = '0-1';
const memberPage = 100;

export async function hubspotLists(http: HubSpotHttpOptions): Promise<CrmList[]> {
  const out: CrmList[] = [];
  let offset = 0;
  for (;;) {
    const answer = await hubspotPost(http, '/crm/v3/lists/search', { query: '', offset, count: 500, additionalProperties: ['hs_list_size'] });
    const lists = (answer.body?.lists ?? []) as Array<{ listId: string; name: string; objectTypeId?: string; additionalProperties?: Record<string, string> }>;
    for (const l of lists) {
      if (l.objectTypeId !== undefined && l.objectTypeId !== CONTACTS) continue;
      const size = Number(l.additionalProperties?.hs_list_size);
      out.push({ id: String(l.listId), name: l.name, size: Number.isFinite(size) ? size : null });
    }
    if (!answer.body?.hasMore || lists.length === 0) return out;
    offset = Number(answer.body.offset ?? offset + lists.length);
  }
}

export async function hubspotListMembers(http: HubSpotHttpOptions, owners: HubSpotOwners, listId: string, page: string | null): Promise<CrmListPage> {
  const q = `limit=${memberPage}${page ? `&after=${encodeURIComponent(page)}` : ''}`;
  const answer = await hubspotGet(http, `/crm/v3/lists/${encodeURIComponent(listId)}/memberships?${q}`);
  const ids = ((answer.body?.results ?? []) as Array<{ recordId: string }>).map((r) => String(r.recordId));
  let contacts: HubSpotObject[] = [];
  if (ids.length > 0) {
    const read = await hubspotPost(http, '/crm/v3/objects/contacts/batch/read', { inputs: ids.map((id) => ({ id })), properties: [...CONTACT_PROPERTIES] });
    contacts = (read.body?.results ?? []) as HubSpotObject[];
  }
  await owners.refresh(contacts.flatMap((c) => (c.properties.hubspot_owner_id ? [c.properties.hubspot_owner_id] : [])));
  return { contacts: contacts.map((c) => toCrmContact(c, owners.emailOf)), next: answer.body?.paging?.next?.after ?? null };
}
