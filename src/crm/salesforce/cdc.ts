import { CrmCursorExpiredError, type CrmChangePage, type CrmContact, type CrmDeal } from '../connector.ts';
import { planEvents, parseEvent, type CdcEvent, type EventPlan, type Heard } from './change-events.ts';
import type { SalesforceClient } from './client.ts';
import { readChannel } from './cometd.ts';
import { pollChanges, pollCursorFrom, pollPosition } from './poll.ts';
import { rowsById, toRecords, type Stream } from './records.ts';
import { inChunks, queryAll, quote, type Row } from './soql.ts';

/**
 * Changes in by Change Data Capture where the org has it, with the SystemModstamp poll (poll.ts)
 * for what CDC cannot give (docs/providers/salesforce.md "Changes in"):
 *
 *   poll ──caught up──► cdc   a full sync (cursor null) is the poll from the start; once it has
 *                             caught up, reading goes on from the event bus, subscribed to
 *                             /data/ChangeEvents from replay id -2 (all kept, 72 h) the first
 *                             time, events committed before the poll's last read skipped
 *   cdc ──────────────► cdc   from the replay id taken last (cometd.ts): events give record ids,
 *                             the records are read by id (records.ts: one mapping for both ways)
 *   cdc ──► poll              - the replay id is older than the events kept (72 h): the poll from
 *                               the last caught-up read, which is itself refused past 30 days
 *                               (CrmCursorExpiredError → the sync's bounded full resync);
 *                             - a gap event without record ids (GAP_OVERFLOW): the poll from its time;
 *                             - CDC not available (subscribe refused: not enabled, the entity not
 *                               selected, no permission): the poll, and CDC not tried again in
 *                               this process for `retryUnavailableMs`
 *   poll ──caught up──► cdc   again, from the replay id held (or -2 with the skip)
 *
 * A GAP event with record ids is filled by reading those records, like any event.
 *
 * The cursor holds the mode, the replay id, the skip and the poll's own cursor (its last caught-up
 * position while on CDC, so that a fallback knows where to start); a cursor of the poll alone (made
 * before CDC was used) is read as one in poll mode.
 *
 * Caught-up CDC reads move the fallback's start to `overlapMs` before the read: an event is
 * published a moment after its commit, and the overlap covers that. Deletions: a DELETE event's
 * record is read through queryAll (the Recycle Bin); one already gone for good is given as a
 * deleted record with the event's time and user.
 */
export const retentionMs = 72 * 3_600_000;
const channel = '/data/ChangeEvents';

interface Cursor {
  v: 2;
  mode: 'poll' | 'cdc';
  /** The poll's cursor (poll.ts); null before a full sync's first page. */
  poll: string | null;
  /** The replay id of the last event taken; null: none yet (subscribe from -2). */
  replay: number | null;
  /** Events committed before this (ms) were given by the poll. */
  skipBefore: number | null;
}

export interface ChangeSourceOptions {
  client: SalesforceClient;
  now: () => number;
  overlapMs: number;
  /** Try Change Data Capture (default true); false: poll only. */
  changeDataCapture?: boolean;
  /** After CDC was found unavailable, how long this process polls before trying it again (default 1 h). */
  retryUnavailableMs?: number;
}

export class SalesforceChanges {
  private unavailableUntil = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: ChangeSourceOptions) {}

  async read(cursorText: string | null, limit: number): Promise<CrmChangePage> {
    const now = this.o.now();
    let c = cursorText === null ? { v: 2 as const, mode: 'poll' as const, poll: null, replay: null, skipBefore: null } : decode(cursorText);
    if (c.mode === 'cdc' && this.canStream(c, now)) {
      const r = await this.stream(c, limit, now);
      if ('page' in r) return r.page;
      c = r.fallback;
    }
    const page = await pollChanges(this.o.client, c.poll, limit, now, this.o.overlapMs);
    let next: Cursor = { ...c, mode: 'poll', poll: page.cursor };
    if (!page.more && this.cdcWorthTrying(now)) next = { ...next, mode: 'cdc', skipBefore: now - this.o.overlapMs };
    return { ...page, cursor: encode(next) };
  }

  private cdcWorthTrying(now: number): boolean {
    return this.o.changeDataCapture !== false && now >= this.unavailableUntil;
  }

  /** Whether the bus can continue this cursor: from -2, the skip must lie within the events kept. */
  private canStream(c: Cursor, now: number): boolean {
    if (!this.cdcWorthTrying(now)) return false;
    return c.replay !== null || (c.skipBefore !== null && now - c.skipBefore < retentionMs - this.o.overlapMs);
  }

  private async stream(c: Cursor, limit: number, now: number): Promise<{ page: CrmChangePage } | { fallback: Cursor }> {
    const { client, overlapMs } = this.o;
    const own = await client.userId();
    const read = await readChannel(client, channel, c.replay ?? -2);
    if (read.kind === 'unavailable') {
      this.unavailableUntil = now + (this.o.retryUnavailableMs ?? 3_600_000);
      return { fallback: { ...c, mode: 'poll' } };
    }
    // Older than the events kept: the poll from the last caught-up read fills the gap (or is itself expired past 30 days).
    if (read.kind === 'invalid-replay') return { fallback: { ...c, mode: 'poll', replay: null } };
    const events = read.messages.map((m) => parseEvent(m.data)).filter((e): e is CdcEvent => e !== null);
    const plan = planEvents(events, { after: c.replay, skipBefore: c.skipBefore, ownUser: own, limit });
    if (plan.gap) {
      const from = plan.gap.at !== null ? plan.gap.at - overlapMs : (pollPosition(c.poll)?.from ?? 0);
      return { fallback: { ...c, mode: 'poll', replay: plan.last, poll: pollCursorFrom(from, now) } };
    }
    const caughtUp = plan.last === null;
    const next: Cursor = { ...c, replay: plan.last ?? c.replay, poll: caughtUp ? pollCursorFrom(now - overlapMs, now) : c.poll };
    return { page: { ...(await this.records(plan)), cursor: encode(next), more: !caughtUp } };
  }

  /** The records the plan names, read by id; a deal for each contact role changed; deleted ones gone for good as tombstones. */
  private async records(plan: EventPlan): Promise<{ contacts: CrmContact[]; deals: CrmDeal[] }> {
    const { client } = this.o;
    const ids = plan.ids;
    for (const chunk of inChunks([...ids.roles.keys()])) {
      for (const role of await queryAll(client, `SELECT Id, OpportunityId FROM OpportunityContactRole WHERE Id IN (${chunk.map(quote).join(', ')})`, true)) {
        const deal = String(role.OpportunityId ?? '');
        if (deal && !ids.deals.has(deal)) ids.deals.set(deal, { ...ids.roles.get(role.Id)!, type: 'UPDATE' });
      }
    }
    const rows: Record<Stream, Row[]> = { contacts: [], leads: [], deals: [] };
    for (const s of ['contacts', 'leads', 'deals'] as const) if (ids[s].size) rows[s] = await rowsById(client, s, [...ids[s].keys()]);
    const got = await toRecords(client, rows);
    const found = new Set(Object.values(rows).flatMap((r) => r.map((x) => x.Id.slice(0, 15))));
    const gone = (s: Stream) => [...ids[s]].filter(([id, h]) => !found.has(id.slice(0, 15)) && /DELETE$/.test(h.type));
    return {
      contacts: [...got.contacts, ...[...gone('contacts'), ...gone('leads')].map(([id, h]) => goneContact(id, h))],
      deals: [...got.deals, ...gone('deals').map(([id, h]) => goneDeal(id, h))],
    };
  }
}

function goneContact(crmId: string, h: Heard): CrmContact {
  const at = new Date(h.at).toISOString();
  return { crmId, email: null, firstName: null, lastName: null, company: null, title: null, phone: null, ownerEmail: null, lifecycleStage: null, doNotContact: false, updatedAt: at, updatedBy: h.by, deleted: true };
}

function goneDeal(crmId: string, h: Heard): CrmDeal {
  const at = new Date(h.at).toISOString();
  return { crmId, name: '', stage: '', stageLabel: null, contactEmails: [], ownerEmail: null, createdAt: at, updatedAt: at, updatedBy: h.by, deleted: true };
}

function encode(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

/** A cursor of this reader, or the poll's alone (from before CDC): anything else is expired (a full resync). */
function decode(text: string): Cursor {
  let c: Omit<Partial<Cursor>, 'v'> & { v?: unknown } = {};
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as typeof c;
  } catch {
    // Judged below.
  }
  if (c?.v === 1) {
    pollPosition(text);
    return { v: 2, mode: 'poll', poll: text, replay: null, skipBefore: null };
  }
  const num = (x: unknown) => x === null || (typeof x === 'number' && Number.isFinite(x));
  if (c?.v !== 2 || (c.mode !== 'poll' && c.mode !== 'cdc') || !(c.poll === null || typeof c.poll === 'string') || !num(c.replay) || !num(c.skipBefore)) {
    throw new CrmCursorExpiredError('Salesforce: the cursor is not one this connector made');
  }
  if (c.poll !== null) pollPosition(c.poll);
  return c as Cursor;
}
