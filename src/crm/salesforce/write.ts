import type { CrmActivity, CrmWriteResult } from '../connector.ts';
import { CrmTransientError } from '../connector.ts';
import { SalesforceRefusal, type SalesforceClient } from './client.ts';
import { inChunks, queryAll, quote } from './soql.ts';
import { ACTIVITY_ID_FIELD, taskFor } from './tasks.ts';

/**
 * One writeActivities call (connector.ts has the overview):
 *
 *   1. Contacts whose Email is one of the batch's, oldest first     GET query (chunked IN)
 *   2. for the addresses left, open Leads (IsConverted = false)     GET query (chunked IN)
 *      → neither: `no_contact`
 *   3. one upsert of every Task by Cadenza_Activity_Id__c           PATCH composite/sobjects/Task/Cadenza_Activity_Id__c
 *   4. only when 3 matched Tasks an earlier, lost answer had
 *      written: those again without TaskSubtype                     PATCH (the same)
 *
 * Step 4 exists because TaskSubtype can be set when a Task is created but not updated (Object
 * Reference: Create, not Update); Salesforce refuses the record that the upsert turned into an
 * update (INVALID_FIELD_FOR_INSERT_UPDATE naming TaskSubtype), and the same record without it is
 * answered `created: false`, the Task that is there.
 */

/** Documented: sObject Collections take at most 200 records. */
export const maxRecords = 200;
/** Salesforce's Email fields hold at most 80 characters: a longer address has no Contact or Lead. */
export const maxEmailLength = 80;

type Who = Map<string, string>;

export async function writeTasks(client: SalesforceClient, batch: readonly CrmActivity[]): Promise<CrmWriteResult[]> {
  const results = new Map<string, CrmWriteResult>();
  const key = (a: CrmActivity) => a.externalId.toLowerCase();
  const pending = new Map<string, { a: CrmActivity; whoId: string }>();

  const addresses = [...new Set(batch.map((a) => a.email.trim().toLowerCase()).filter((e) => e !== '' && e.length <= maxEmailLength))];
  let who: Who;
  try {
    who = await findPeople(client, 'Contact', addresses, '');
    const left = addresses.filter((e) => !who.has(e));
    if (left.length) for (const [e, id] of await findPeople(client, 'Lead', left, ' AND IsConverted = false')) who.set(e, id);
  } catch (e) {
    // A lookup refused for good (the integration user may not read Contact or Lead, or Email):
    // asking again gets the same, so the batch is rejected with the reason.
    if (!(e instanceof SalesforceRefusal)) throw e;
    return batch.map((a) => ({ externalId: a.externalId, status: 'rejected', error: `Salesforce refused the lookup of the addresses: ${e.message}` }));
  }

  for (const a of batch) {
    const whoId = who.get(a.email.trim().toLowerCase());
    if (Number.isNaN(Date.parse(a.occurredAt))) results.set(a.externalId, { externalId: a.externalId, status: 'rejected', error: `occurredAt is not a date: ${a.occurredAt}` });
    else if (!whoId) results.set(a.externalId, { externalId: a.externalId, status: 'no_contact' });
    // The same id twice in a batch is one fact: written once, answered for each.
    else if (!pending.has(key(a))) pending.set(key(a), { a, whoId });
  }

  if (pending.size) {
    const outcome = await upsert(client, [...pending.values()].map((p) => taskFor(p.a, p.whoId)));
    const again = [...pending.values()].filter((p) => outcome.get(key(p.a)) === 'update-refused');
    if (again.length) {
      const second = await upsert(
        client,
        again.map((p) => {
          const { TaskSubtype: _createOnly, ...rest } = taskFor(p.a, p.whoId);
          return rest;
        }),
      );
      for (const [k, r] of second) outcome.set(k, r === 'update-refused' ? { error: 'Salesforce refused updating the Task written earlier' } : r);
    }
    for (const a of batch) {
      if (results.has(a.externalId)) continue;
      const r = outcome.get(key(a));
      if (r === undefined || r === 'update-refused') throw new CrmTransientError(`Salesforce's upsert answer did not account for ${a.externalId}`);
      results.set(a.externalId, 'id' in r ? { externalId: a.externalId, status: 'written', crmId: r.id } : { externalId: a.externalId, status: 'rejected', error: r.error });
    }
  }
  return batch.map((a) => results.get(a.externalId)!);
}

/** Lower-cased address → the oldest record of `object` with it. */
async function findPeople(client: SalesforceClient, object: 'Contact' | 'Lead', emails: string[], extra: string): Promise<Who> {
  const out: Who = new Map();
  for (const chunk of inChunks(emails)) {
    const rows = await queryAll(client, `SELECT Id, Email FROM ${object} WHERE Email IN (${chunk.map(quote).join(', ')})${extra} ORDER BY CreatedDate, Id`);
    for (const r of rows) {
      const e = typeof r.Email === 'string' ? r.Email.toLowerCase() : '';
      if (e && !out.has(e)) out.set(e, r.Id);
    }
  }
  return out;
}

type Outcome = { id: string } | { error: string } | 'update-refused';

/** Upserts `records` (allOrNone false): each external id (lower-cased) → what became of it. */
async function upsert(client: SalesforceClient, records: Array<Record<string, unknown>>): Promise<Map<string, Outcome>> {
  const out = new Map<string, Outcome>();
  const keyOf = (r: Record<string, unknown>) => String(r[ACTIVITY_ID_FIELD]).toLowerCase();
  let answer;
  try {
    answer = await client.request('PATCH', `/composite/sobjects/Task/${ACTIVITY_ID_FIELD}`, {}, { allOrNone: false, records });
  } catch (e) {
    if (!(e instanceof SalesforceRefusal)) throw e;
    // Refused whole (the external-id field missing: prepare() not passed; a body Salesforce cannot read).
    for (const r of records) out.set(keyOf(r), { error: `Salesforce refused the Task upsert: ${e.message}` });
    return out;
  }
  const list = Array.isArray(answer.body) ? (answer.body as Array<{ id?: string; success?: boolean; errors?: Array<{ statusCode?: string; message?: string; fields?: string[] }> }>) : [];
  // UpsertResults come in the order of the records (documented).
  records.forEach((r, i) => {
    const res = list[i];
    if (!res) return;
    if (res.success && typeof res.id === 'string') out.set(keyOf(r), { id: res.id });
    else if ('TaskSubtype' in r && (res.errors ?? []).some((e) => e.statusCode === 'INVALID_FIELD_FOR_INSERT_UPDATE' && (e.fields ?? []).includes('TaskSubtype'))) out.set(keyOf(r), 'update-refused');
    else out.set(keyOf(r), { error: `Salesforce refused it: ${(res.errors ?? []).map((e) => `${e.statusCode ?? 'ERROR'}: ${e.message ?? 'no reason given'}`).join('; ') || 'no reason given'}` });
  });
  return out;
}
