import type { CrmChangePage } from '../connector.ts';
import { readStream, type StreamRecord, type StreamSpec } from './change-stream.ts';
import { listPageSize, type TwentyClient } from './client.ts';
import { decodeChangeCursor, encodeChangeCursor, streamNames, type ChangeCursor, type StreamName } from './cursor.ts';
import { toContacts, toDeals } from './records.ts';

/**
 * readChanges for Twenty (CrmChangeReader): four streams (change-stream.ts), read one after the
 * other, each at most a quarter of `limit` (and at most a list page, 60):
 *
 *   peopleChanged          people by updatedAt, soft-deleted ones included (the filter names
 *                          deletedAt, so Twenty lists them: GraphqlQueryParser.checkForDeletedAtFilter)
 *   peopleDeleted          people by deletedAt: a soft delete that does not move updatedAt is
 *                          still seen (whether Twenty's soft delete moves it is unverified)
 *   opportunitiesChanged   the same for opportunities (deals)
 *   opportunitiesDeleted
 *
 * A record read by two streams in one call is reported once, deduped by (id, updatedAt). A
 * soft-deleted record is reported `deleted: true` with updatedAt = the later of its updatedAt and
 * deletedAt, so that the sync, which dedupes by (crmId, updatedAt), takes the delete as a newer
 * version of a record it holds. A record destroyed outright (REST DELETE without soft_delete, or
 * emptied from the trash) leaves nothing to read: it is not reported.
 *
 * Typical cost: 4 to 8 list requests, plus one per related object looked up and one for the
 * stage labels when there are deals (records.ts).
 */
export interface ReaderOptions {
  overlapMs: number;
  seenMax: number;
}

const includeDeleted = 'or(deletedAt[is]:NULL,deletedAt[is]:NOT_NULL)';

function specs(o: ReaderOptions): Record<StreamName, StreamSpec> {
  const s = (plural: string, field: 'updatedAt' | 'deletedAt'): StreamSpec => ({
    plural,
    field,
    base: field === 'updatedAt' ? includeDeleted : '',
    overlapMs: o.overlapMs,
    seenMax: o.seenMax,
  });
  return {
    peopleChanged: s('people', 'updatedAt'),
    peopleDeleted: s('people', 'deletedAt'),
    opportunitiesChanged: s('opportunities', 'updatedAt'),
    opportunitiesDeleted: s('opportunities', 'deletedAt'),
  };
}

export async function readTwentyChanges(client: TwentyClient, cursor: string | null, limit: number, o: ReaderOptions): Promise<CrmChangePage> {
  const from = decodeChangeCursor(cursor);
  const per = Math.max(1, Math.min(listPageSize, Math.ceil(limit / streamNames.length)));
  const spec = specs(o);
  const next = { ...from } as ChangeCursor;
  const got = {} as Record<StreamName, StreamRecord[]>;
  let more = false;
  for (const name of streamNames) {
    const r = await readStream(client, spec[name], from[name], per);
    got[name] = r.records;
    next[name] = r.position;
    more ||= r.more;
  }
  const people = latestVersions([...got.peopleChanged, ...got.peopleDeleted]);
  const opportunities = latestVersions([...got.opportunitiesChanged, ...got.opportunitiesDeleted]);
  return {
    contacts: await toContacts(client, people),
    deals: await toDeals(client, opportunities),
    cursor: encodeChangeCursor(next),
    more,
  };
}

/** One record per (id, effective updatedAt), oldest first; a deleted record's updatedAt moved to its deletedAt when later. */
function latestVersions(records: StreamRecord[]): StreamRecord[] {
  const out = new Map<string, StreamRecord>();
  for (const r of records) {
    const version = effectiveUpdatedAt(r);
    out.set(`${r.id}@${version}`, { ...r, updatedAt: version });
  }
  return [...out.values()].sort((a, b) => Date.parse(String(a.updatedAt)) - Date.parse(String(b.updatedAt)) || (a.id < b.id ? -1 : 1));
}

function effectiveUpdatedAt(r: StreamRecord): string {
  const u = String(r.updatedAt);
  const d = typeof r.deletedAt === 'string' ? r.deletedAt : null;
  return d !== null && Date.parse(d) > Date.parse(u) ? new Date(Date.parse(d)).toISOString() : u;
}
