import type { CrmList, CrmListPage } from '../connector.ts';
import { listPageSize, type TwentyClient } from './client.ts';
import { objectsMetadata } from './metadata.ts';
import { toContacts } from './records.ts';
import { translateViewFilters, type FieldInfo, type ViewFilterRow } from './view-filter.ts';

/**
 * Lists for Twenty: the saved views on people. Views live in Twenty's metadata and are read over
 * its REST metadata API (GET /rest/metadata/views?objectMetadataId=<person>, an array of views;
 * GET /rest/metadata/viewFilters?viewId=<id>, an array of filters). A view's members are the people
 * its filters select (view-filter.ts), listed 60 a page with Twenty's cursor; the page token is
 * Twenty's endCursor. A view whose filters cannot be translated is refused (TwentyViewError)
 * rather than listed wider than it is. Twenty gives no view size: size is null.
 */
export class TwentyViewError extends Error {
  readonly code = 'twenty_view_unsupported';
  constructor(
    readonly viewId: string,
    readonly reason: string,
  ) {
    super(`Twenty view ${viewId} cannot be listed: ${reason}`);
    this.name = 'TwentyViewError';
  }
}

export async function twentyLists(client: TwentyClient): Promise<CrmList[]> {
  const person = (await objectsMetadata(client)).get('person');
  const body = await client.request('GET', '/rest/metadata/views', { objectMetadataId: person.id });
  if (!Array.isArray(body)) throw new Error('Twenty: /rest/metadata/views answered no array');
  return (body as Array<{ id?: unknown; name?: unknown; objectMetadataId?: unknown }>)
    .filter((v) => typeof v.id === 'string' && v.objectMetadataId === person.id)
    .map((v) => ({ id: v.id as string, name: typeof v.name === 'string' ? v.name : '', size: null }));
}

export async function twentyListMembers(client: TwentyClient, viewId: string, page: string | null): Promise<CrmListPage> {
  const person = (await objectsMetadata(client)).get('person');
  const body = await client.request('GET', '/rest/metadata/viewFilters', { viewId });
  if (!Array.isArray(body)) throw new Error('Twenty: /rest/metadata/viewFilters answered no array');
  const fields = new Map<string, FieldInfo>(person.fields.map((f) => [f.id, f]));
  const t = translateViewFilters((body as ViewFilterRow[]).filter((f) => (f as { viewId?: unknown }).viewId === viewId), fields);
  if (!t.ok) throw new TwentyViewError(viewId, t.reason);
  const r = await client.listPage('people', { filter: t.filter, limit: listPageSize, after: page });
  return { contacts: await toContacts(client, r.records), next: r.hasNextPage ? r.endCursor : null };
}
