import { hubspotGet, type HubSpotHttpOptions } from './http.ts';

/**
 * HubSpot owners by id (GET /crm/v3/owners, paged): a record's hubspot_owner_id is an owner id,
 * and Cadenza matches owners to its members by address. Read once and again only when a record
 * names an owner the cache lacks (a user added since), at most once per `refresh()` call.
 */
export class HubSpotOwners {
  private byId = new Map<string, string>();
  private loaded = false;

  constructor(private readonly http: HubSpotHttpOptions) {}

  /** Makes sure every id in `ids` is known if HubSpot knows it. */
  async refresh(ids: Iterable<string>): Promise<void> {
    const missing = [...ids].some((id) => !this.byId.has(id));
    if (this.loaded && !missing) return;
    const next = new Map<string, string>();
    let after: string | undefined;
    do {
      const answer = await hubspotGet(this.http, `/crm/v3/owners?limit=500${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      for (const o of (answer.body?.results ?? []) as Array<{ id: string; email?: string }>) if (o.email) next.set(String(o.id), o.email.toLowerCase());
      after = answer.body?.paging?.next?.after;
    } while (after !== undefined);
    this.byId = next;
    this.loaded = true;
  }

  emailOf = (ownerId: string): string | null => this.byId.get(ownerId) ?? null;
}
