import { CrmCursorExpiredError, CrmTransientError, type CrmChangePage, type CrmDeal } from '../connector.ts';
import { CONTACT_PROPERTIES, modifiedAt, toCrmContact, type HubSpotObject } from './contact-fields.ts';
import { hubspotPost, type HubSpotHttpOptions } from './http.ts';
import type { HubSpotOwners } from './owners.ts';
import type { SearchPacer } from './search-pacer.ts';

/**
 * Changes in from HubSpot (docs/crm.md "Changes in"): HubSpot has no change feed for contacts and
 * deals that a private app can resume, so changes are read with the CRM search API, by modify date
 * (contacts' `lastmodifieddate`, deals' `hs_lastmodifieddate`), oldest first.
 *
 * Per object type the cursor holds `pos`, the newest modify date read, and where the current scan
 * stands. Each call reads one page per type:
 *
 * - The scan never pages with `after`. Paging an offset through results sorted by modify date
 *   loses records: one already read that changes again moves to the end and shifts the rest down
 *   by one. Instead every page is a new query from the newest modify date of the page before
 *   (GTE, so records of that instant are read again and deduplicated). This is also how the
 *   10,000-result cap of one query is met: no query is ever paged past its first page, so a
 *   window of any size is read by moving it.
 * - When one instant holds more records than a page, GTE from it cannot advance; the scan then
 *   reads that instant alone, by `hs_object_id` order (`tie`), and goes on after it.
 * - When a scan has read everything, the next one starts `overlapMs` before `pos`: search sees a
 *   write only "a few moments" after it (documented), so a change stamped before `pos` may show up
 *   after `pos` was read. The overlap reads those again; the sync deduplicates by (crmId, updatedAt).
 *
 * A cursor that does not parse (another version's) is expired: the sync resyncs from the start.
 */

export interface ChangeReadOptions {
  /** How far back each new scan starts, for writes search saw late (default 5 minutes). */
  overlapMs?: number;
}

interface Scan {
  /** The newest modify date read, epoch ms; null: nothing read yet. */
  pos: number | null;
  /** The lower bound of the scan under way; null: none (the next starts at pos - overlap). */
  from: number | null;
  /** Reading one instant by id: its time and the last id read. */
  tie: { at: number; afterId: string } | null;
}

interface Cursor {
  v: 1;
  contacts: Scan;
  deals: Scan;
}

type Kind = 'contacts' | 'deals';

const MODIFIED: Record<Kind, string> = { contacts: 'lastmodifieddate', deals: 'hs_lastmodifieddate' };
const DEAL_PROPERTIES = ['dealname', 'dealstage', 'pipeline', 'hubspot_owner_id', 'createdate', 'hs_lastmodifieddate', 'hs_updated_by_user_id'];
const maxPage = 100;

export class HubSpotChanges {
  private readonly overlapMs: number;

  constructor(
    private readonly http: HubSpotHttpOptions,
    private readonly pacer: SearchPacer,
    private readonly owners: HubSpotOwners,
    o: ChangeReadOptions = {},
  ) {
    this.overlapMs = o.overlapMs ?? 5 * 60_000;
  }

  async read(cursorText: string | null, limit: number): Promise<CrmChangePage> {
    const cursor = parseCursor(cursorText);
    const size = Math.max(1, Math.min(maxPage, limit));
    const c = await this.page('contacts', cursor.contacts, size);
    const d = await this.page('deals', cursor.deals, size);
    await this.owners.refresh([...c.records, ...d.records].flatMap((r) => (r.properties.hubspot_owner_id ? [r.properties.hubspot_owner_id] : [])));
    const contacts = dedupe(c.records, 'contacts').map((r) => toCrmContact(r, this.owners.emailOf));
    const deals = await this.deals(dedupe(d.records, 'deals'));
    return { contacts, deals, cursor: JSON.stringify({ v: 1, contacts: c.scan, deals: d.scan } satisfies Cursor), more: c.more || d.more };
  }

  /** One page of one type's scan, and the scan after it. */
  private async page(kind: Kind, scan: Scan, size: number): Promise<{ records: HubSpotObject[]; scan: Scan; more: boolean }> {
    const modified = MODIFIED[kind];
    const properties = kind === 'contacts' ? [...CONTACT_PROPERTIES] : DEAL_PROPERTIES;
    if (scan.tie) {
      const { at, afterId } = scan.tie;
      const body = await this.search(kind, {
        filterGroups: [{ filters: [{ propertyName: modified, operator: 'BETWEEN', value: String(at), highValue: String(at) }, { propertyName: 'hs_object_id', operator: 'GT', value: afterId }] }],
        sorts: [{ propertyName: 'hs_object_id', direction: 'ASCENDING' }],
        properties,
        limit: size,
      });
      const records = results(body);
      if (records.length > 0 && Number(body.total ?? 0) > records.length) {
        return { records, scan: { ...scan, tie: { at, afterId: records[records.length - 1]!.id } }, more: true };
      }
      // The instant is read; the scan goes on just after it (anything newer has a later modify date).
      return { records, scan: { pos: Math.max(scan.pos ?? at, at), from: at + 1, tie: null }, more: true };
    }
    const lower = scan.from ?? (scan.pos === null ? null : scan.pos - this.overlapMs);
    const body = await this.search(kind, {
      ...(lower === null ? {} : { filterGroups: [{ filters: [{ propertyName: modified, operator: 'GTE', value: String(lower) }] }] }),
      sorts: [{ propertyName: modified, direction: 'ASCENDING' }],
      properties,
      limit: size,
    });
    const records = results(body);
    if (records.length === 0) return { records, scan: { pos: scan.pos, from: null, tie: null }, more: false };
    const newest = Math.max(...records.map((r) => modifiedAt(r, modified)));
    const pos = Math.max(scan.pos ?? newest, newest);
    // `total` counts every match, past the cap too: more than this page means the scan goes on.
    if (Number(body.total ?? records.length) <= records.length) return { records, scan: { pos, from: null, tie: null }, more: false };
    if (lower !== null && newest <= lower) {
      // A full page of one instant: GTE cannot move past it.
      return { records, scan: { pos, from: lower, tie: { at: lower, afterId: records[records.length - 1]!.id } }, more: true };
    }
    if (lower === null && records.every((r) => modifiedAt(r, modified) === newest)) {
      return { records, scan: { pos, from: newest, tie: { at: newest, afterId: records[records.length - 1]!.id } }, more: true };
    }
    return { records, scan: { pos, from: newest, tie: null }, more: true };
  }

  private async search(kind: Kind, body: unknown): Promise<any> {
    const answer = await this.pacer.run(() => hubspotPost(this.http, `/crm/v3/objects/${kind}/search`, body, [400]));
    // A 400 here is a query this code built wrong or a property HubSpot lacks: not the data's fault,
    // and not final either (an admin can fix the account); retried with backoff, loudly.
    if (answer.status === 400) throw new CrmTransientError(`HubSpot refused the ${kind} change search: ${answer.body?.message ?? 'no reason given'}`);
    return answer.body ?? {};
  }

  /** Deals with the addresses of their contacts (v4 associations, then the contacts by id). */
  private async deals(records: HubSpotObject[]): Promise<CrmDeal[]> {
    if (records.length === 0) return [];
    const assoc = await hubspotPost(this.http, '/crm/v4/associations/deals/contacts/batch/read', { inputs: records.map((r) => ({ id: r.id })) });
    const contactsOf = new Map<string, string[]>();
    for (const r of (assoc.body?.results ?? []) as Array<{ from: { id: string }; to: Array<{ toObjectId: number | string }> }>) {
      contactsOf.set(String(r.from.id), r.to.map((t) => String(t.toObjectId)));
    }
    const ids = [...new Set([...contactsOf.values()].flat())];
    const emailOf = new Map<string, string>();
    for (let i = 0; i < ids.length; i += maxPage) {
      const read = await hubspotPost(this.http, '/crm/v3/objects/contacts/batch/read', { inputs: ids.slice(i, i + maxPage).map((id) => ({ id })), properties: ['email'] });
      for (const c of (read.body?.results ?? []) as HubSpotObject[]) if (c.properties.email) emailOf.set(c.id, c.properties.email.toLowerCase());
    }
    return records.map((r) => {
      const p = r.properties;
      const owner = p.hubspot_owner_id || null;
      return {
        crmId: r.id,
        name: p.dealname ?? '',
        stage: p.dealstage ?? '',
        stageLabel: null,
        contactEmails: (contactsOf.get(r.id) ?? []).flatMap((id) => (emailOf.has(id) ? [emailOf.get(id)!] : [])),
        ownerEmail: owner ? this.owners.emailOf(owner) : null,
        createdAt: new Date(p.createdate ?? modifiedAt(r, 'hs_lastmodifieddate')).toISOString(),
        updatedAt: new Date(modifiedAt(r, 'hs_lastmodifieddate')).toISOString(),
        updatedBy: p.hs_updated_by_user_id || null,
        ...(r.archived ? { deleted: true } : {}),
      };
    });
  }
}

function results(body: any): HubSpotObject[] {
  return (body?.results ?? []) as HubSpotObject[];
}

/** One record per (id, modify date) within a page: a record read twice at one instant is one change. */
function dedupe(records: HubSpotObject[], kind: Kind): HubSpotObject[] {
  const seen = new Set<string>();
  return records.filter((r) => {
    const key = `${r.id}@${modifiedAt(r, MODIFIED[kind])}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const emptyScan = (): Scan => ({ pos: null, from: null, tie: null });

function parseCursor(text: string | null): Cursor {
  if (text === null) return { v: 1, contacts: emptyScan(), deals: emptyScan() };
  try {
    const c = JSON.parse(text) as Cursor;
    if (c?.v === 1 && isScan(c.contacts) && isScan(c.deals)) return c;
  } catch {
    // falls through: not a cursor of this version
  }
  throw new CrmCursorExpiredError('the HubSpot change cursor is not one this version reads: a full resync follows');
}

function isScan(s: any): s is Scan {
  const num = (v: unknown) => v === null || typeof v === 'number';
  return s && num(s.pos) && num(s.from) && (s.tie === null || (typeof s.tie?.at === 'number' && typeof s.tie?.afterId === 'string'));
}
