import type { CrmList, CrmListPage } from '../connector.ts';
import type { SalesforceClient } from './client.ts';
import { contactFields, toContact } from './records.ts';
import { inChunks, queryAll, quote } from './soql.ts';

/**
 * Contact list views as the lists a sequence enrolls from (REST API Developer Guide, "List Views",
 * "List View Results"). A results page gives the view's columns, which the admin chose; the
 * connector reads only the Id column from it and queries those Contacts for the fields it maps, so
 * a view with any columns works. Two calls per page.
 *
 * The results resource pages by `offset`, documented up to 2000: a view longer than that cannot be
 * read to its end this way, and the page that would go past it is refused with that reason rather
 * than ending the list silently short.
 */
const pageSize = 200;
const maxOffset = 2000;

export async function contactLists(client: SalesforceClient): Promise<CrmList[]> {
  const answer = await client.request('GET', '/sobjects/Contact/listviews');
  const views = (answer.body?.listviews ?? []) as Array<{ id: string; label: string }>;
  return views.map((v) => ({ id: v.id, name: v.label, size: null }));
}

export async function contactListMembers(client: SalesforceClient, listId: string, page: string | null): Promise<CrmListPage> {
  if (!/^00B[0-9A-Za-z]{12}(?:[0-9A-Za-z]{3})?$/.test(listId)) throw new Error(`Salesforce: ${JSON.stringify(listId)} is not a list view id`);
  const offset = page === null ? 0 : Number(page);
  if (!Number.isInteger(offset) || offset < 0) throw new Error(`Salesforce: ${JSON.stringify(page)} is not a list page this connector made`);
  if (offset > maxOffset) throw new Error(`Salesforce: the list view has more than ${maxOffset} members, past what its results resource pages to`);
  const answer = await client.request('GET', `/sobjects/Contact/listviews/${listId}/results`, { limit: String(pageSize), offset: String(offset) });
  const records = (answer.body?.records ?? []) as Array<{ columns: Array<{ fieldNameOrPath: string; value: string | null }> }>;
  const ids = records.map((r) => r.columns.find((c) => c.fieldNameOrPath === 'Id')?.value).filter((v): v is string => typeof v === 'string');
  const byId = new Map<string, ReturnType<typeof toContact>>();
  for (const chunk of inChunks(ids)) {
    for (const row of await queryAll(client, `SELECT ${contactFields} FROM Contact WHERE Id IN (${chunk.map(quote).join(', ')})`)) byId.set(row.Id.slice(0, 15), toContact(row));
  }
  const contacts = ids.map((id) => byId.get(id.slice(0, 15))).filter((c) => c !== undefined);
  const done = answer.body?.done !== false || records.length === 0;
  return { contacts, next: done ? null : String(offset + records.length) };
}
