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
import { activityInput, externalIdField, objectFor, type ActivityObject } from './activity-records.ts';
import { TwentyClient, TwentyRefusal, filterable, inFilter, listPageSize } from './client.ts';
import { OwnActor } from './actor.ts';
import { writeTwentyContactFields } from './fields.ts';
import { twentyListMembers, twentyLists } from './lists.ts';
import { ensureCustomFields } from './prepare.ts';
import { readTwentyChanges } from './reader.ts';

/**
 * The Twenty CRM connector (twenty.com, open source; REST API per docs.twenty.com). Activities
 * become notes and tasks (activity-records.ts) attached to the person with the prospect's address
 * through a noteTarget / taskTarget. crmId is `note:<id>` or `task:<id>` (Twenty's record page is
 * /object/<note|task>/<id>).
 *
 * One writeActivities call, at most 9 requests for a batch of up to 60:
 *
 *   1  people whose primary email is one of the batch's       GET /rest/people?filter=emails.primaryEmail[in]:[…]
 *      → no such person: `no_contact`
 *   per object (notes, tasks), only when the batch has some:
 *   2  records already written, by cadenzaActivityId           GET /rest/notes?filter=cadenzaActivityId[in]:[…]
 *   3  the rest, created in one batch                          POST /rest/batch/notes
 *   4  targets of the records found in 2 (a retry after a      GET /rest/noteTargets?filter=noteId[in]:[…]
 *      lost answer: the note may be there without its target)
 *   5  the missing targets, in one batch                       POST /rest/batch/noteTargets
 *
 * A record is found before it is created and a target is created only when missing, so a batch
 * retried after any lost answer ends with exactly one note (task) and one target per activity.
 *
 * When Twenty refuses a batch create (a 400), it does not say which record it refused: the
 * connector looks up what the batch may have written anyway, then creates the rest one by one, and
 * a record Twenty refuses on its own is `rejected` with Twenty's message. That path makes up to one
 * request per record more than the 9 the writer reserved (limits.requestsPerBatch covers the usual
 * path); a 429 it meets is a CrmTransientError like any other, and the retry is safe.
 *
 * Addresses are compared lowercased (Twenty stores them so). Only a person's primary email is
 * matched: Twenty's additionalEmails is a JSON list, and filtering inside it over REST is
 * unverified.
 *
 * Changes in: readChanges (reader.ts), integrationUserId (actor.ts), lists and listMembers
 * (lists.ts: saved views), writeContactFields (fields.ts).
 */
export interface TwentyConnectorOptions {
  /** https://api.twenty.com (Twenty Cloud) or a self-hosted server's URL. */
  baseUrl: string;
  apiKey: () => string | Promise<string>;
  /** Deadline of one request (default 30 s). */
  timeoutMs?: number;
  clock?: Clock;
  /** The workspace's API rate limit (default the documented 100 per minute; a self-hosted server sets its own). */
  rateLimit?: { requests: number; windowMs: number };
  /**
   * The API key's name as created in Twenty (Settings → APIs & Webhooks): Twenty stamps it on every
   * record the key writes (updatedBy.name), which is how its own changes are recognised. Absent:
   * learned from the first write's answer, and integrationUserId() is null until then.
   */
  apiKeyName?: string;
  /** How far back each change read reaches past the newest change seen (default 60 s): changes committed late. */
  changeOverlapMs?: number;
}

/** Documented: at most 60 records per batch create (docs.twenty.com, "Batch size: 60 records per call"). */
const twentyBatchMax = 60;
const requestsPerBatch = 9;

export class TwentyConnector implements CrmConnector, CrmChangeReader, CrmFieldWriter {
  readonly kind = 'twenty' as const;
  readonly limits: CrmLimits;
  private readonly client: TwentyClient;
  private readonly own: OwnActor;
  private readonly overlapMs: number;

  constructor(opts: TwentyConnectorOptions) {
    const rate = opts.rateLimit ?? { requests: 100, windowMs: 60_000 };
    // One list page must hold a whole batch's people and records (one page = one request).
    const maxBatch = Math.min(twentyBatchMax, listPageSize);
    this.limits = { maxBatch, requests: rate.requests, windowMs: rate.windowMs, requestsPerBatch };
    this.own = new OwnActor(opts.apiKeyName);
    this.overlapMs = opts.changeOverlapMs ?? 60_000;
    this.client = new TwentyClient({
      baseUrl: opts.baseUrl,
      apiKey: opts.apiKey,
      timeoutMs: opts.timeoutMs,
      clock: opts.clock,
      // Twenty's 429 names no wait: by then a batch's worth of requests has refilled the bucket.
      retryAfterFallbackMs: Math.ceil((requestsPerBatch * rate.windowMs) / rate.requests),
    });
  }

  prepare(): Promise<void> {
    return ensureCustomFields(this.client);
  }

  readChanges(cursor: string | null, limit: number): Promise<CrmChangePage> {
    // seenMax bounds the cursor: about 60 bytes per change remembered within the overlap.
    return readTwentyChanges(this.client, cursor, limit, { overlapMs: this.overlapMs, seenMax: 500 });
  }

  async integrationUserId(): Promise<string | null> {
    return this.own.get();
  }

  lists(): Promise<CrmList[]> {
    return twentyLists(this.client);
  }

  listMembers(listId: string, page: string | null): Promise<CrmListPage> {
    return twentyListMembers(this.client, listId, page);
  }

  writeContactFields(updates: ReadonlyArray<{ crmId: string; fields: Readonly<Record<string, string | null>> }>): Promise<void> {
    return writeTwentyContactFields(this.client, this.own, updates);
  }

  async writeActivities(batch: readonly CrmActivity[]): Promise<CrmWriteResult[]> {
    if (batch.length > this.limits.maxBatch) throw new Error(`Twenty: a batch of ${batch.length} activities, more than ${this.limits.maxBatch}`);
    const results: CrmWriteResult[] = [];
    const addressed: Array<{ a: CrmActivity; email: string }> = [];
    for (const a of batch) {
      const email = a.email.trim().toLowerCase();
      if (filterable(email)) addressed.push({ a, email });
      else results.push({ externalId: a.externalId, status: 'rejected', error: `the address ${JSON.stringify(a.email)} cannot be looked up through Twenty's REST filter` });
    }
    const people = await this.peopleByEmail([...new Set(addressed.map((x) => x.email))]);
    const byObject = new Map<ActivityObject, Array<{ a: CrmActivity; personId: string }>>();
    for (const { a, email } of addressed) {
      const personId = people.get(email);
      if (!personId) {
        results.push({ externalId: a.externalId, status: 'no_contact' });
        continue;
      }
      const o = objectFor(a);
      byObject.set(o, [...(byObject.get(o) ?? []), { a, personId }]);
    }
    for (const [object, items] of byObject) results.push(...(await this.write(object, items)));
    return results;
  }

  /** Primary email (lowercased) → person id; the oldest person when two share one. */
  private async peopleByEmail(emails: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (emails.length === 0) return out;
    for (const p of await this.client.listAll('people', inFilter('emails.primaryEmail', emails))) {
      const email = (p.emails as { primaryEmail?: unknown } | undefined)?.primaryEmail;
      if (typeof email === 'string' && !out.has(email.toLowerCase())) out.set(email.toLowerCase(), p.id);
    }
    return out;
  }

  private async write(object: ActivityObject, items: Array<{ a: CrmActivity; personId: string }>): Promise<CrmWriteResult[]> {
    const owner = object === 'notes' ? 'note' : 'task';
    const findRecords = (ids: string[]) => this.findByExternalId(object, ids);
    const existing = await findRecords(items.map((x) => x.a.externalId));
    const created = await this.createMissing(
      object,
      items.filter((x) => !existing.has(x.a.externalId)).map((x) => ({ key: x.a.externalId, input: activityInput(x.a) })),
      (r) => String(r[externalIdField]),
      findRecords,
    );

    const results: CrmWriteResult[] = [];
    const written: Array<{ a: CrmActivity; personId: string; recordId: string }> = [];
    for (const x of items) {
      const r = existing.get(x.a.externalId) ?? created.get(x.a.externalId)!;
      if (typeof r === 'string') written.push({ ...x, recordId: r });
      else results.push({ externalId: x.a.externalId, status: 'rejected', error: r.error });
    }

    // Only a record found (not one created just now) can already have its target.
    const targetKey = (recordId: string, personId: string) => `${recordId}|${personId}`;
    const findTargets = async (keys: string[]) => {
      const ids = [...new Set(keys.map((k) => k.split('|')[0]!))];
      const found = new Map<string, string>();
      for (const t of await this.client.listAll(`${owner}Targets`, inFilter(`${owner}Id`, ids))) {
        found.set(targetKey(String(t[`${owner}Id`]), String(t.personId)), t.id);
      }
      return found;
    };
    const foundIds = written.filter((w) => existing.has(w.a.externalId));
    const haveTargets = foundIds.length ? await findTargets(foundIds.map((w) => targetKey(w.recordId, w.personId))) : new Map<string, string>();
    const targets = await this.createMissing(
      `${owner}Targets`,
      written.filter((w) => !haveTargets.has(targetKey(w.recordId, w.personId))).map((w) => ({ key: targetKey(w.recordId, w.personId), input: { [`${owner}Id`]: w.recordId, personId: w.personId } })),
      (t) => targetKey(String(t[`${owner}Id`]), String(t.personId)),
      findTargets,
    );
    for (const w of written) {
      const t = targets.get(targetKey(w.recordId, w.personId));
      if (t !== undefined && typeof t !== 'string') {
        results.push({ externalId: w.a.externalId, status: 'rejected', error: `the ${owner} ${w.recordId} was written, but Twenty refused attaching it to the person: ${t.error}` });
      } else {
        results.push({ externalId: w.a.externalId, status: 'written', crmId: `${owner}:${w.recordId}` });
      }
    }
    return results;
  }

  /** externalId → record id of the records of `object` already carrying one of `externalIds`. */
  private async findByExternalId(object: ActivityObject, externalIds: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const ids = externalIds.filter(filterable);
    if (ids.length === 0) return out;
    for (const r of await this.client.listAll(object, inFilter(externalIdField, ids))) {
      const key = r[externalIdField];
      if (typeof key === 'string' && !out.has(key)) out.set(key, r.id);
    }
    return out;
  }

  /**
   * Creates `items` in one batch; each key maps to the new record's id, or to Twenty's reason when
   * it refused that record. On a refused batch: what it may have written is looked up (`find`),
   * and the rest is created one by one.
   */
  private async createMissing(
    plural: string,
    items: Array<{ key: string; input: Record<string, unknown> }>,
    keyOf: (record: Record<string, unknown>) => string,
    find: (keys: string[]) => Promise<Map<string, string>>,
  ): Promise<Map<string, string | { error: string }>> {
    const out = new Map<string, string | { error: string }>();
    if (items.length === 0) return out;
    try {
      for (const r of await this.client.createMany(plural, items.map((i) => i.input))) {
        out.set(keyOf(r), r.id);
        // What Twenty stamped on a record this key just created names the key (actor.ts).
        this.own.learnFrom(r, 'createdBy');
      }
    } catch (e) {
      if (!(e instanceof TwentyRefusal)) throw e;
      return this.createOneByOne(plural, items, find);
    }
    // The answer lists the records created, in any order; one missing is an answer not to trust
    // (the retry finds whatever was written).
    const lacking = items.filter((i) => !out.has(i.key));
    if (lacking.length) throw new CrmTransientError(`Twenty: the batch create of ${plural} answered without ${lacking.map((i) => i.key).join(', ')}`);
    return out;
  }

  private async createOneByOne(
    plural: string,
    items: Array<{ key: string; input: Record<string, unknown> }>,
    find: (keys: string[]) => Promise<Map<string, string>>,
  ): Promise<Map<string, string | { error: string }>> {
    const out = new Map<string, string | { error: string }>();
    const found = await find(items.map((i) => i.key));
    for (const { key, input } of items) {
      const id = found.get(key);
      if (id !== undefined) {
        out.set(key, id);
        continue;
      }
      try {
        out.set(key, (await this.client.createOne(plural, input)).id);
      } catch (e) {
        if (!(e instanceof TwentyRefusal)) throw e;
        out.set(key, { error: e.message });
      }
    }
    return out;
  }
}
