import type { Clock } from '../../common/clock.ts';
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
import { activityBody, markerOf } from './activities.ts';
import { decodeCursor, encodeCursor, initialCursor, readStream } from './changes.ts';
import { PipedriveClient, PipedriveRefusal } from './client.ts';
import { ensurePersonFields, fieldKeys, listPersonFields } from './fields.ts';
import { primaryEmail, toContact, toDeal, type PdDeal, type PdPerson } from './records.ts';

/**
 * The Pipedrive connector (API v2 where Pipedrive has it, v1 for users, person fields and
 * filters). Activities: one Pipedrive activity per fact (activities.ts), attached to the person
 * with the prospect's address. Pipedrive has no batch create, so a batch is small and one
 * writeActivities call makes, for a batch of at most 5:
 *
 *   per address   GET  /api/v2/persons/search?term=<email>&fields=email&exact_match=true
 *                 → no person: `no_contact` (Cadenza never creates persons)
 *   per person    GET  /api/v2/activities?person_id=<id>&updated_since=<earliest fact - 1 h>
 *                 → the activities an earlier call wrote, by the marker in their note
 *   per activity  POST /api/v2/activities, only for those not found
 *
 * so at most 3 requests per activity (requestsPerBatch 15), within the burst limit of the lowest
 * plan (20 per 2 s per API token) and its search limit (10 per 2 s). A retry after a lost answer
 * finds the activity by its marker and does not write it again. The activity list is narrowed to
 * what changed since the earliest fact of the batch (less an hour for clocks that disagree): an
 * activity Cadenza wrote for a fact was written after the fact happened.
 *
 * Changes in (changes.ts): persons and deals by update_time; lists are people filters.
 */
export interface PipedriveConnectorOptions {
  /** https://<company>.pipedrive.com, or https://api.pipedrive.com with an OAuth token. */
  baseUrl: string;
  token: () => string | Promise<string>;
  /** 'api_token' (default): the x-api-token header; 'oauth': Authorization: Bearer. */
  auth?: 'api_token' | 'oauth';
  timeoutMs?: number;
  clock?: Clock;
  /** The plan's burst limit per token per 2 s (default 20: Essential's api_token limit, the lowest). */
  burstPerTwoSeconds?: number;
  /** How far before the last change read a change read starts again (default 60 s). */
  overlapMs?: number;
}

const maxBatch = 5;
/** An activity written for a fact is written after it: searched from this long before the earliest fact. */
const clockSlackMs = 3_600_000;

export class PipedriveConnector implements CrmConnector, CrmChangeReader, CrmFieldWriter {
  readonly kind = 'pipedrive' as const;
  readonly limits: CrmLimits;
  private readonly client: PipedriveClient;
  private readonly overlapMs: number;

  constructor(opts: PipedriveConnectorOptions) {
    this.client = new PipedriveClient({ baseUrl: opts.baseUrl, token: opts.token, auth: opts.auth, timeoutMs: opts.timeoutMs, clock: opts.clock });
    this.limits = { maxBatch, requests: opts.burstPerTwoSeconds ?? 20, windowMs: 2000, requestsPerBatch: 3 * maxBatch };
    this.overlapMs = opts.overlapMs ?? 60_000;
  }

  /**
   * Webhooks v2 for persons and deals, every action (developers.pipedrive.com "Webhooks v2"): each
   * delivery only wakes the change reader (src/crm/webhooks/), which reads by update_time as ever.
   * Activities are left out: they are Cadenza's own writes.
   */
  async registerWebhooks(url: string, auth: { user: string; password: string }): Promise<string[]> {
    const ids: string[] = [];
    for (const object of ['person', 'deal']) {
      const r = await this.client.post('/v1/webhooks', { subscription_url: url, event_action: '*', event_object: object, http_auth_user: auth.user, http_auth_password: auth.password, version: '2.0' });
      ids.push(String(r.data.id));
    }
    return ids;
  }

  async deleteWebhook(id: string): Promise<void> {
    try {
      await this.client.delete(`/v1/webhooks/${encodeURIComponent(id)}`);
    } catch (e) {
      // Deleted in Pipedrive already (by an admin, or with its user): nothing left to do.
      if (!(e instanceof PipedriveRefusal && e.status === 404)) throw e;
    }
  }

  /** Creates Cadenza's person fields when missing (activities need nothing: their marker is in the note). */
  prepare(): Promise<void> {
    return ensurePersonFields(this.client);
  }

  async writeActivities(batch: readonly CrmActivity[]): Promise<CrmWriteResult[]> {
    if (batch.length > maxBatch) throw new RangeError(`Pipedrive: a batch of ${batch.length} activities, more than ${maxBatch}`);
    const results = new Map<string, CrmWriteResult>();
    const persons = new Map<string, number | { error: string } | null>();
    for (const email of new Set(batch.map((a) => a.email.trim().toLowerCase()))) persons.set(email, await this.personByEmail(email));

    const byPerson = new Map<number, CrmActivity[]>();
    for (const a of batch) {
      const p = persons.get(a.email.trim().toLowerCase());
      if (p === null || p === undefined) results.set(a.externalId, { externalId: a.externalId, status: 'no_contact' });
      else if (typeof p === 'object') results.set(a.externalId, { externalId: a.externalId, status: 'rejected', error: p.error });
      else byPerson.set(p, [...(byPerson.get(p) ?? []), a]);
    }

    for (const [personId, acts] of byPerson) {
      const found = await this.writtenFor(personId, acts);
      for (const a of acts) {
        // The same id twice in a batch is one fact: written once, answered for each.
        const id = found.get(a.externalId);
        if (id !== undefined) {
          results.set(a.externalId, { externalId: a.externalId, status: 'written', crmId: id });
          continue;
        }
        const r = await this.create(a, personId);
        results.set(a.externalId, r);
        if (r.status === 'written') found.set(a.externalId, r.crmId);
      }
    }
    return batch.map((a) => results.get(a.externalId)!);
  }

  /** The person whose address is `email` (the oldest when several), null when none, or why the search was refused. */
  private async personByEmail(email: string): Promise<number | { error: string } | null> {
    let body: any;
    try {
      body = await this.client.get('/api/v2/persons/search', { term: email, fields: 'email', exact_match: true, limit: 100 });
    } catch (e) {
      if (e instanceof PipedriveRefusal) return { error: `Pipedrive refused the search for ${JSON.stringify(email)}: ${e.message}` };
      throw e;
    }
    const items = (body?.data?.items ?? []) as Array<{ item?: { id?: number; emails?: unknown[] } }>;
    // exact_match compares the whole address; it is checked again here, without regard to case.
    const ids = items
      .map((i) => i.item)
      .filter((p): p is { id: number; emails?: unknown[] } => typeof p?.id === 'number' && (p.emails ?? []).some((e) => typeof e === 'string' && e.trim().toLowerCase() === email))
      .map((p) => p.id);
    return ids.length ? Math.min(...ids) : null;
  }

  /** externalId → activity id of what an earlier call wrote for `acts` on this person. */
  private async writtenFor(personId: number, acts: CrmActivity[]): Promise<Map<string, string>> {
    const earliest = Math.min(...acts.map((a) => Date.parse(a.occurredAt)).filter(Number.isFinite));
    const since = Number.isFinite(earliest) ? new Date(earliest - clockSlackMs).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
    const wanted = new Set(acts.map((a) => a.externalId));
    const found = new Map<string, string>();
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const body = await this.client.get('/api/v2/activities', { person_id: personId, updated_since: since, sort_by: 'update_time', limit: 500, cursor });
      for (const act of (body?.data ?? []) as Array<{ id: number; note?: unknown }>) {
        const key = markerOf(act.note);
        // Oldest first (update_time order): a fact written twice before this dedupe answers with the first.
        if (key && wanted.has(key) && !found.has(key)) found.set(key, String(act.id));
      }
      cursor = body?.additional_data?.next_cursor ?? undefined;
      if (!cursor) return found;
    }
    // Thousands of activities changed on one person since the facts: do not write blind.
    throw new CrmTransientError(`Pipedrive: more than 10 pages of activities on person ${personId}; not writing without knowing what is there`);
  }

  private async create(a: CrmActivity, personId: number): Promise<CrmWriteResult> {
    let body: Record<string, unknown>;
    try {
      body = activityBody(a, personId);
    } catch (e) {
      return { externalId: a.externalId, status: 'rejected', error: (e as Error).message };
    }
    try {
      const answer = await this.client.post('/api/v2/activities', body);
      const id = answer?.data?.id;
      if (typeof id !== 'number') throw new CrmTransientError('Pipedrive POST /api/v2/activities: the answer has no activity id');
      return { externalId: a.externalId, status: 'written', crmId: String(id) };
    } catch (e) {
      if (e instanceof PipedriveRefusal) return { externalId: a.externalId, status: 'rejected', error: `Pipedrive refused the activity: ${e.message}` };
      throw e;
    }
  }

  async integrationUserId(): Promise<string | null> {
    const me = await this.client.get('/v1/users/me');
    return typeof me?.data?.id === 'number' ? String(me.data.id) : null;
  }

  async readChanges(cursor: string | null, limit: number): Promise<CrmChangePage> {
    const pos = cursor === null ? initialCursor() : decodeCursor(cursor);
    const per = Math.max(1, Math.ceil(limit / 2));
    const persons = await readStream<PdPerson>(this.client, '/api/v2/persons', pos.persons, per, this.overlapMs, { include_fields: 'marketing_status' });
    const deals = await readStream<PdDeal>(this.client, '/api/v2/deals', pos.deals, per, this.overlapMs);
    const owners = persons.records.length || deals.records.length ? await this.userEmails() : new Map<number, string>();
    const ownerEmail = (id: number | null | undefined) => (id == null ? null : (owners.get(id) ?? null));
    const stageNames = deals.records.length ? await this.stageNames() : new Map<number, string>();
    const emails = await this.personEmails(deals.records.map((d) => d.person_id).filter((id): id is number => id !== null), persons.records);
    return {
      contacts: persons.records.map((p) => toContact(p, ownerEmail)),
      deals: deals.records.map((d) => toDeal(d, (id) => stageNames.get(id) ?? null, (id) => emails.get(id) ?? null, ownerEmail)),
      cursor: encodeCursor({ v: 1, persons: persons.pos, deals: deals.pos }),
      more: persons.more || deals.more,
    };
  }

  async lists(): Promise<CrmList[]> {
    const body = await this.client.get('/v1/filters', { type: 'people' });
    return ((body?.data ?? []) as Array<{ id: number; name: string }>).map((f) => ({ id: String(f.id), name: f.name, size: null }));
  }

  async listMembers(listId: string, page: string | null): Promise<CrmListPage> {
    const body = await this.client.get('/api/v2/persons', { filter_id: listId, include_fields: 'marketing_status', limit: 100, cursor: page ?? undefined });
    const persons = (body?.data ?? []) as PdPerson[];
    const owners = persons.length ? await this.userEmails() : new Map<number, string>();
    return {
      contacts: persons.map((p) => toContact(p, (id) => (id == null ? null : (owners.get(id) ?? null)))),
      next: body?.additional_data?.next_cursor ?? null,
    };
  }

  /**
   * One PATCH per person (Pipedrive has no batch update). A person deleted in Pipedrive (404) has
   * nothing to write and is passed over; any other refusal stops with its reason.
   */
  async writeContactFields(updates: ReadonlyArray<{ crmId: string; fields: Readonly<Record<string, string | null>> }>): Promise<void> {
    if (updates.length === 0) return;
    const keys = fieldKeys(await listPersonFields(this.client), new Set(updates.flatMap((u) => Object.keys(u.fields))));
    for (const u of updates) {
      const custom = Object.fromEntries(Object.entries(u.fields).map(([name, v]) => [keys.get(name)!, v]));
      try {
        await this.client.patch(`/api/v2/persons/${encodeURIComponent(u.crmId)}`, { custom_fields: custom });
      } catch (e) {
        if (e instanceof PipedriveRefusal && e.status === 404) continue;
        if (e instanceof PipedriveRefusal) throw new Error(`Pipedrive refused the fields of person ${u.crmId}: ${e.message}`);
        throw e;
      }
    }
  }

  private async userEmails(): Promise<Map<number, string>> {
    const body = await this.client.get('/v1/users');
    return new Map(((body?.data ?? []) as Array<{ id: number; email: string }>).map((u) => [u.id, u.email.toLowerCase()]));
  }

  private async stageNames(): Promise<Map<number, string>> {
    const body = await this.client.get('/api/v2/stages', { limit: 500 });
    return new Map(((body?.data ?? []) as Array<{ id: number; name: string }>).map((s) => [s.id, s.name]));
  }

  /** Primary addresses of the deals' persons: those of this page, the rest by ids (100 per request). */
  private async personEmails(ids: number[], known: PdPerson[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const p of known) {
      const e = primaryEmail(p);
      if (e) out.set(p.id, e);
    }
    const missing = [...new Set(ids)].filter((id) => !out.has(id));
    for (let i = 0; i < missing.length; i += 100) {
      const body = await this.client.get('/api/v2/persons', { ids: missing.slice(i, i + 100).join(','), limit: 100 });
      for (const p of (body?.data ?? []) as PdPerson[]) {
        const e = primaryEmail(p);
        if (e) out.set(p.id, e);
      }
    }
    return out;
  }
}
