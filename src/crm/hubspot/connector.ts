import { systemClock, type Clock } from '../../common/clock.ts';
import {
  CrmTransientError,
  type CrmActivity,
  type CrmChangePage,
  type CrmChangeReader,
  type CrmConnector,
  type CrmFieldWriter,
  type CrmLimits,
  type CrmList,
  type CrmListPage,
  type CrmWriteResult,
} from '../connector.ts';
import { HubSpotChanges } from './changes.ts';
import { LAST_ACTIVITY_PROPERTY, SEQUENCE_STATUS_PROPERTY, WRITABLE } from './contact-fields.ts';
import { ACTIVITY_ID_PROPERTY, activityKey, contactAssociationTypeId, engagementFor, engagementTypes, type EngagementType } from './engagements.ts';
import { hubspotGet, hubspotPost, type HubSpotHttpOptions } from './http.ts';
import { hubspotListMembers, hubspotLists } from './lists.ts';
import { HubSpotOwners } from './owners.ts';
import { SearchPacer } from './search-pacer.ts';

/**
 * CRM sync to HubSpot (CRM v3 objects API, a private app's token). One writeActivities call:
 *
 *   a. one contacts search, email IN [the batch's addresses]: an activity whose address has no
 *      contact is `no_contact` (Cadenza never creates contacts);
 *   b. per engagement type it will write, one search on cadenza_activity_id IN [ids]: what an
 *      earlier call wrote and never heard back about is `written` with the id found, not written
 *      again;
 *   c. per engagement type, one batch create of the rest, each associated with its contact and
 *      carrying an objectWriteTraceId, so that HubSpot's multi-status answer (207) names an input
 *      it refused; a 400 naming none refuses that type's whole batch.
 *
 * So at most 1 + 4 + 4 requests (limits.requestsPerBatch), done one after another; searches are
 * paced to the search endpoints' per-second limit (search-pacer.ts). The dedupe of (b) depends on
 * search seeing the record: HubSpot documents that new records take "a few moments" to appear, so
 * a retry must come later than that (the writer's backoff is seconds).
 */

export interface HubSpotConnectorOptions {
  /** Default https://api.hubapi.com. */
  baseUrl?: string;
  /** The private app's access token (or a fresh OAuth access token). */
  token: () => string | Promise<string>;
  /** Per request, connection to last byte (default 20 s). */
  timeoutMs?: number;
  /** Paces searches (default the system clock). */
  clock?: Clock;
  /** Search requests per second (documented 5; default 4). */
  searchesPerSecond?: number;
  /** How far back each new change scan starts, for writes HubSpot's search saw late (changes.ts; default 5 min). */
  changeOverlapMs?: number;
}

/** HubSpot's batch and search limits: 100 inputs per batch create, 100 results per search page. */
const maxBatch = 100;
/** The property group prepare() files cadenza_activity_id in (its own, so no default group's name is assumed). */
const GROUP = 'cadenza';

interface Pending {
  key: string;
  contactId: string;
  properties: Record<string, string>;
}

type Found = { ok: true; records: Array<{ id: string; properties: Record<string, string | null> }> } | { ok: false; error: string };

export class HubSpotConnector implements CrmConnector, CrmChangeReader, CrmFieldWriter {
  readonly kind = 'hubspot' as const;
  /** Private apps: 100 requests per rolling 10 s (Free/Starter; 190 on Professional and Enterprise). */
  readonly limits: CrmLimits = { maxBatch, requests: 100, windowMs: 10_000, requestsPerBatch: 1 + 2 * engagementTypes.length };
  private readonly http: HubSpotHttpOptions;
  private readonly pacer: SearchPacer;
  private readonly owners: HubSpotOwners;
  private readonly changes: HubSpotChanges;
  private userId: string | null | undefined;

  constructor(opts: HubSpotConnectorOptions) {
    const clock = opts.clock ?? systemClock;
    this.http = { baseUrl: opts.baseUrl ?? 'https://api.hubapi.com', token: opts.token, timeoutMs: opts.timeoutMs ?? 20_000, clock };
    this.pacer = new SearchPacer(clock, opts.searchesPerSecond ?? 4);
    this.owners = new HubSpotOwners(this.http);
    this.changes = new HubSpotChanges(this.http, this.pacer, this.owners, opts.changeOverlapMs !== undefined ? { overlapMs: opts.changeOverlapMs } : {});
  }

  /**
   * Creates the `cadenza` property group and cadenza_activity_id on each engagement type, and on
   * contacts the two fields Cadenza owns (its sequence status and last activity); a 409 means it is there.
   */
  async prepare(): Promise<void> {
    await this.prepareActivityIds();
    await this.ensureGroup('contacts');
    await this.ensureProperty('contacts', { name: SEQUENCE_STATUS_PROPERTY, label: 'Cadenza sequence status', type: 'string', fieldType: 'text', description: "Set by Cadenza: the contact's sequence state (active, paused, replied, stopped, finished…)." });
    await this.ensureProperty('contacts', { name: LAST_ACTIVITY_PROPERTY, label: 'Cadenza last activity', type: 'datetime', fieldType: 'date', description: 'Set by Cadenza: when Cadenza last emailed, called or heard from the contact.' });
  }

  private async ensureGroup(type: string): Promise<void> {
    const group = await hubspotPost(this.http, `/crm/v3/properties/${type}/groups`, { name: GROUP, label: 'Cadenza' }, [400, 409]);
    if (group.status === 400) throw new Error(`HubSpot refused the '${GROUP}' property group on ${type}: ${messageOf(group.body)}`);
  }

  private async ensureProperty(type: string, p: { name: string; label: string; type: string; fieldType: string; description: string }): Promise<void> {
    const prop = await hubspotPost(this.http, `/crm/v3/properties/${type}`, { ...p, groupName: GROUP }, [400, 409]);
    if (prop.status === 400) throw new Error(`HubSpot refused the ${p.name} property on ${type}: ${messageOf(prop.body)}`);
  }

  readChanges(cursor: string | null, limit: number): Promise<CrmChangePage> {
    return this.changes.read(cursor, limit);
  }

  /**
   * The user this token acts as, from the token's metadata (GET /oauth/v1/access-tokens/{token},
   * documented for OAuth access tokens): its `user_id` is what hs_updated_by_user_id holds for this
   * connection's own writes. A token HubSpot gives no metadata for (a 404 or 400, as a private app's
   * may) has none: null, and the sync falls back on comparing Cadenza's fields with what it wrote.
   */
  async integrationUserId(): Promise<string | null> {
    if (this.userId !== undefined) return this.userId;
    const token = await this.http.token();
    const answer = await hubspotGet(this.http, `/oauth/v1/access-tokens/${encodeURIComponent(token)}`, [400, 404]);
    this.userId = answer.status === 200 && answer.body?.user_id != null ? String(answer.body.user_id) : null;
    return this.userId;
  }

  lists(): Promise<CrmList[]> {
    return hubspotLists(this.http);
  }

  listMembers(listId: string, page: string | null): Promise<CrmListPage> {
    return hubspotListMembers(this.http, this.owners, listId, page);
  }

  /**
   * Sets Cadenza-owned fields on contacts, 100 per batch update (null clears: HubSpot's empty
   * string). A field HubSpot has no writable property for is refused before anything is sent.
   */
  async writeContactFields(updates: ReadonlyArray<{ crmId: string; fields: Readonly<Record<string, string | null>> }>): Promise<void> {
    const inputs = updates.map((u) => ({
      id: u.crmId,
      properties: Object.fromEntries(
        Object.entries(u.fields).map(([field, value]) => {
          const property = WRITABLE[field];
          if (!property) throw new RangeError(`HubSpot has no writable contact property for the field ${field}`);
          return [property, value ?? ''];
        }),
      ),
    }));
    for (let i = 0; i < inputs.length; i += maxBatch) {
      const answer = await hubspotPost(this.http, '/crm/v3/objects/contacts/batch/update', { inputs: inputs.slice(i, i + maxBatch) }, [400]);
      // Refused values are the caller's to see (a stage the account lacks); the rest of the batch is not written either (all or nothing).
      if (answer.status === 400) throw new Error(`HubSpot refused the contact field update: ${messageOf(answer.body)}`);
    }
  }

  private async prepareActivityIds(): Promise<void> {
    for (const type of engagementTypes) {
      const group = await hubspotPost(this.http, `/crm/v3/properties/${type}/groups`, { name: GROUP, label: 'Cadenza' }, [400, 409]);
      if (group.status === 400) throw new Error(`HubSpot refused the '${GROUP}' property group on ${type}: ${messageOf(group.body)}`);
      const prop = await hubspotPost(
        this.http,
        `/crm/v3/properties/${type}`,
        {
          name: ACTIVITY_ID_PROPERTY,
          label: 'Cadenza activity id',
          type: 'string',
          fieldType: 'text',
          groupName: GROUP,
          description: "Set by Cadenza: the activity's id, so that a write retried after a lost answer finds this record instead of writing it again.",
        },
        [400, 409],
      );
      if (prop.status === 400) throw new Error(`HubSpot refused the ${ACTIVITY_ID_PROPERTY} property on ${type}: ${messageOf(prop.body)}`);
    }
  }

  async writeActivities(batch: readonly CrmActivity[]): Promise<CrmWriteResult[]> {
    if (batch.length > maxBatch) throw new RangeError(`writeActivities takes at most ${maxBatch} activities, got ${batch.length}`);
    if (batch.length === 0) return [];
    const results = new Map<string, CrmWriteResult>();
    const done = (key: string, r: (externalId: string) => CrmWriteResult) => {
      for (const a of batch) if (activityKey(a.externalId) === key) results.set(a.externalId, r(a.externalId));
    };

    const contacts = await this.find('contacts', 'email', [...new Set(batch.map((a) => a.email.toLowerCase()))]);
    if (!contacts.ok) return batch.map((a) => ({ externalId: a.externalId, status: 'rejected', error: contacts.error }));
    const contactOf = new Map<string, string>();
    for (const c of contacts.records) if (c.properties.email) contactOf.set(c.properties.email.toLowerCase(), c.id);

    const byType = new Map<EngagementType, Map<string, Pending>>();
    for (const a of batch) {
      const contactId = contactOf.get(a.email.toLowerCase());
      if (!contactId) {
        results.set(a.externalId, { externalId: a.externalId, status: 'no_contact' });
        continue;
      }
      const { type, properties } = engagementFor(a);
      if (!byType.has(type)) byType.set(type, new Map());
      // The same id twice in a batch is one fact: written once, answered for each.
      byType.get(type)!.set(activityKey(a.externalId), { key: activityKey(a.externalId), contactId, properties });
    }

    for (const [type, pending] of byType) {
      const found = await this.find(type, ACTIVITY_ID_PROPERTY, [...pending.keys()]);
      if (!found.ok) {
        for (const key of pending.keys()) done(key, (externalId) => ({ externalId, status: 'rejected', error: found.error }));
        continue;
      }
      for (const r of found.records) {
        const key = r.properties[ACTIVITY_ID_PROPERTY]?.toLowerCase();
        // Results come in id order, so a record written twice (before this dedupe existed) answers with its first id.
        if (key && pending.delete(key)) done(key, (externalId) => ({ externalId, status: 'written', crmId: r.id }));
      }
      if (pending.size > 0) await this.create(type, [...pending.values()], done);
    }
    return batch.map((a) => results.get(a.externalId)!);
  }

  /**
   * Every record of `type` whose `property` is one of `values` (at most 100). A page holds 100, so
   * a second page comes only when some value matches more than one record (a contact address
   * never does); the requests of that rare case are beyond requestsPerBatch.
   */
  private async find(type: 'contacts' | EngagementType, property: string, values: string[]): Promise<Found> {
    const records: Array<{ id: string; properties: Record<string, string | null> }> = [];
    let after: string | undefined;
    do {
      const answer = await this.pacer.run(() =>
        hubspotPost(
          this.http,
          `/crm/v3/objects/${type}/search`,
          { filterGroups: [{ filters: [{ propertyName: property, operator: 'IN', values }] }], properties: [property], limit: maxBatch, ...(after ? { after } : {}) },
          [400],
        ),
      );
      // A search refused as malformed (the property missing: prepare() not run) refuses the writes it was for.
      if (answer.status === 400) return { ok: false, error: `HubSpot refused the ${type} search: ${messageOf(answer.body)}` };
      records.push(...((answer.body?.results ?? []) as typeof records));
      after = answer.body?.paging?.next?.after;
    } while (after !== undefined);
    return { ok: true, records };
  }

  private async create(type: EngagementType, pending: Pending[], done: (key: string, r: (externalId: string) => CrmWriteResult) => void): Promise<void> {
    const inputs = pending.map((p) => ({
      properties: p.properties,
      associations: [{ to: { id: p.contactId }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: contactAssociationTypeId[type] }] }],
      objectWriteTraceId: p.key,
    }));
    const answer = await hubspotPost(this.http, `/crm/v3/objects/${type}/batch/create`, { inputs }, [400]);
    if (answer.status === 400) {
      const error = `HubSpot refused the ${type}: ${messageOf(answer.body)}`;
      for (const p of pending) done(p.key, (externalId) => ({ externalId, status: 'rejected', error }));
      return;
    }
    const left = new Set(pending.map((p) => p.key));
    for (const r of (answer.body?.results ?? []) as Array<{ id: string; objectWriteTraceId?: string; properties?: Record<string, string> }>) {
      // Results are not promised in input order: matched by trace id, or by the activity id they carry.
      const key = (r.objectWriteTraceId ?? r.properties?.[ACTIVITY_ID_PROPERTY])?.toLowerCase();
      if (key && left.delete(key)) done(key, (externalId) => ({ externalId, status: 'written', crmId: r.id }));
    }
    for (const e of (answer.body?.errors ?? []) as Array<{ message?: string; context?: { objectWriteTraceId?: string[] } }>) {
      for (const key of e.context?.objectWriteTraceId ?? []) {
        if (left.delete(key)) done(key, (externalId) => ({ externalId, status: 'rejected', error: `HubSpot refused it: ${e.message ?? 'no reason given'}` }));
      }
    }
    // An answer that accounts for less than was sent: what was written, a retry finds by its id.
    if (left.size > 0) throw new CrmTransientError(`HubSpot's answer to the ${type} batch create did not account for ${left.size} of ${pending.length} inputs`);
  }
}

function messageOf(body: any): string {
  return typeof body?.message === 'string' ? body.message : 'no reason given';
}
