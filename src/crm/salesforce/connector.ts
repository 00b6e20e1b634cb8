import { systemClock, type Clock } from '../../common/clock.ts';
import type { CrmActivity, CrmChangePage, CrmChangeReader, CrmConnector, CrmFieldWriter, CrmLimits, CrmList, CrmListPage, CrmWriteResult } from '../connector.ts';
import { SalesforceChanges } from './cdc.ts';
import { SalesforceClient } from './client.ts';
import { parseCredentials } from './credentials.ts';
import { writeContactFields } from './fields.ts';
import { contactListMembers, contactLists } from './lists.ts';
import { checkActivityIdField } from './prepare.ts';
import { worstChunks } from './soql.ts';
import { maxEmailLength, maxRecords, writeTasks } from './write.ts';

/**
 * CRM sync to Salesforce (REST API v60.0, a connected app's OAuth refresh token). Each activity is
 * one completed Task on the Contact (else the open Lead) with the prospect's address, upserted by
 * the external-id field Cadenza_Activity_Id__c (write.ts, tasks.ts): a retry after a lost answer
 * updates the Task it wrote instead of writing another. Changes in to Contacts, Leads and
 * Opportunities come from Change Data Capture where the org has it (cdc.ts), else by polling
 * SystemModstamp (poll.ts; deletions included); lists are Contact list views
 * (lists.ts); Cadenza-owned fields are written to the Contact (fields.ts).
 *
 * Limits. Salesforce counts calls per org over a rolling 24 h (Enterprise Edition: 100,000 plus
 * 1,000 per user license), shared by every integration of the org. Cadenza takes a share of it,
 * `apiShare` (default a fifth) of `dailyApiCalls` (default 100,000), spread evenly as a window of
 * one hour: 833 calls an hour by default, so a busy hour can never spend the day's share at once.
 * An admin who knows the org's allocation sets both. The OAuth token endpoint is not counted by
 * Salesforce and not here.
 *
 * requestsPerBatch: the address lookups (Contacts, then Leads for the addresses left) split into
 * as many queries as keep each URL within the REST API's URI limit (soql.ts), at most
 * worstChunks(200, 80) each; then one upsert, and a second only for Tasks a lost answer had written.
 */
export interface SalesforceConnectorOptions {
  /** The org's My Domain URL (https://acme.my.salesforce.com), given by the admin. */
  baseUrl: string;
  /** The sealed JSON string the connection stores (credentials.ts). */
  token: string;
  timeoutMs?: number;
  clock?: Clock;
  /** The org's daily API allocation (default 100,000). */
  dailyApiCalls?: number;
  /** The part of it Cadenza may use (default 0.2). */
  apiShare?: number;
  /** How far back each change read starts from the newest stamp seen (default 5 minutes; poll.ts, cdc.ts). */
  overlapMs?: number;
  /** Read changes by Change Data Capture where the org offers it (default true; cdc.ts); false: poll only. */
  changeDataCapture?: boolean;
}

export class SalesforceConnector implements CrmConnector, CrmChangeReader, CrmFieldWriter {
  readonly kind = 'salesforce' as const;
  readonly limits: CrmLimits;
  private readonly client: SalesforceClient;
  private readonly clock: Clock;
  private readonly changes: SalesforceChanges;

  constructor(opts: SalesforceConnectorOptions) {
    const lookups = worstChunks(maxRecords, maxEmailLength);
    const requestsPerBatch = 2 * lookups + 2;
    const perHour = Math.floor(((opts.dailyApiCalls ?? 100_000) * (opts.apiShare ?? 0.2)) / 24);
    if (perHour < requestsPerBatch) throw new Error(`Salesforce: a share of ${perHour} API calls an hour is less than one batch needs (${requestsPerBatch})`);
    this.limits = { maxBatch: maxRecords, requests: perHour, windowMs: 3_600_000, requestsPerBatch };
    this.clock = opts.clock ?? systemClock;
    this.client = new SalesforceClient({ baseUrl: opts.baseUrl, credentials: parseCredentials(opts.token), timeoutMs: opts.timeoutMs, clock: this.clock, requestsPerBatch });
    this.changes = new SalesforceChanges({ client: this.client, now: () => this.clock.now(), overlapMs: opts.overlapMs ?? 5 * 60_000, changeDataCapture: opts.changeDataCapture });
  }

  prepare(): Promise<void> {
    return checkActivityIdField(this.client);
  }

  writeActivities(batch: readonly CrmActivity[]): Promise<CrmWriteResult[]> {
    if (batch.length > maxRecords) throw new RangeError(`writeActivities takes at most ${maxRecords} activities, got ${batch.length}`);
    if (batch.length === 0) return Promise.resolve([]);
    return writeTasks(this.client, batch);
  }
  requestsMade(): number {
    return this.client.requests;
  }


  readChanges(cursor: string | null, limit: number): Promise<CrmChangePage> {
    return this.changes.read(cursor, limit);
  }

  integrationUserId(): Promise<string | null> {
    return this.client.userId();
  }

  lists(): Promise<CrmList[]> {
    return contactLists(this.client);
  }

  listMembers(listId: string, page: string | null): Promise<CrmListPage> {
    return contactListMembers(this.client, listId, page);
  }

  writeContactFields(updates: ReadonlyArray<{ crmId: string; fields: Readonly<Record<string, string | null>> }>): Promise<void> {
    return writeContactFields(this.client, updates);
  }
}
