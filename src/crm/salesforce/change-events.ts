/**
 * Change Data Capture events in Cadenza's terms, and which of a delivered batch a read takes (pure;
 * cdc.ts does the I/O). Change Data Capture Developer Guide, "Change Event Header Fields":
 * `entityName`, `recordIds` (several when one transaction changed many records alike),
 * `changeType` (CREATE, UPDATE, DELETE, UNDELETE, and GAP_* when Salesforce could not build the
 * event: the subscriber must read the records itself; GAP_OVERFLOW names no records),
 * `commitTimestamp` (epoch ms), `commitUser`; the replay id is the message's `event.replayId`.
 *
 * The event's own field values are not used: the records are read by id afterwards (records.ts), so
 * that a record maps to Cadenza's words in one place whichever way its change was heard of, and
 * what is stored is the record as it is now (an event's diff would need the previous state).
 */
export interface CdcEvent {
  replayId: number;
  /** Null when the header is unreadable: treated as a gap with no records (read the stretch by SystemModstamp). */
  header: { entity: string; type: string; recordIds: string[]; commitTimestamp: number; commitUser: string | null } | null;
}

/** The entities the connector reads, and which stream each feeds. */
export const streamOf: Record<string, 'contacts' | 'leads' | 'deals' | 'roles' | undefined> = {
  Contact: 'contacts',
  Lead: 'leads',
  Opportunity: 'deals',
  // A contact added to or taken off a deal: the deal is read again.
  OpportunityContactRole: 'roles',
};

/** A delivered message as a CdcEvent; null when it carries no replay id (nothing can place it). */
export function parseEvent(data: unknown): CdcEvent | null {
  const d = data as { event?: { replayId?: unknown }; payload?: { ChangeEventHeader?: Record<string, unknown> } } | null;
  const replayId = d?.event?.replayId;
  if (typeof replayId !== 'number' || !Number.isInteger(replayId)) return null;
  const h = d?.payload?.ChangeEventHeader;
  const ok = h && typeof h.entityName === 'string' && typeof h.changeType === 'string' && Array.isArray(h.recordIds) && typeof h.commitTimestamp === 'number';
  if (!ok) return { replayId, header: null };
  return {
    replayId,
    header: {
      entity: h.entityName as string,
      type: h.changeType as string,
      recordIds: (h.recordIds as unknown[]).filter((x): x is string => typeof x === 'string'),
      commitTimestamp: h.commitTimestamp as number,
      commitUser: typeof h.commitUser === 'string' ? h.commitUser : null,
    },
  };
}

/** The last change heard of for a record: what a record that cannot be read any more is given as. */
export interface Heard {
  type: string;
  at: number;
  by: string | null;
}

export interface EventPlan {
  /** Per stream, the records to read, each with the last change heard of. */
  ids: Record<'contacts' | 'leads' | 'deals' | 'roles', Map<string, Heard>>;
  /** The replay id of the last event taken (the cursor's next), or null when none was. */
  last: number | null;
  /** Events were left for the next read (the limit was reached, or a gap follows the events taken). */
  left: boolean;
  /**
   * A gap with no record ids (or an unreadable event), taken alone: the stretch from its time on
   * (`at`; null: unknown) must be read by SystemModstamp.
   */
  gap: { at: number | null } | null;
}

export interface PlanOptions {
  /** The replay id taken last; events at or before it are duplicates. */
  after: number | null;
  /** Events committed before this (ms) were given by the poll already. */
  skipBefore: number | null;
  /** The connection's own user: its changes are Cadenza's writes coming back. */
  ownUser: string | null;
  /** About how many records one read gives. */
  limit: number;
}

/**
 * Takes events in replay order, each once, until `limit` records are named. Duplicates (the bus
 * may deliver an event twice, and a replay resends from the stored id) are dropped by replay id.
 * Events for other entities, events the poll already covered and the own user's changes are taken
 * without records. A gap with no ids is taken alone, so the page before it is stored first.
 */
export function planEvents(events: readonly CdcEvent[], o: PlanOptions): EventPlan {
  const plan: EventPlan = { ids: { contacts: new Map(), leads: new Map(), deals: new Map(), roles: new Map() }, last: null, left: false, gap: null };
  let taken = o.after ?? Number.NEGATIVE_INFINITY;
  let named = 0;
  for (const e of [...events].sort((a, b) => a.replayId - b.replayId)) {
    if (e.replayId <= taken) continue;
    const h = e.header;
    const blind = h === null || (h.type.startsWith('GAP_') && h.recordIds.length === 0);
    if (named >= Math.max(1, o.limit) || (blind && plan.last !== null)) {
      plan.left = true;
      break;
    }
    taken = plan.last = e.replayId;
    if (blind) {
      // An unreadable event has no time: the stretch since the last caught-up read is read again (cdc.ts).
      plan.gap = { at: h?.commitTimestamp ?? null };
      plan.left = true;
      break;
    }
    const stream = streamOf[h.entity];
    if (!stream || (o.skipBefore !== null && h.commitTimestamp < o.skipBefore)) continue;
    if (!h.type.startsWith('GAP_') && o.ownUser !== null && h.commitUser === o.ownUser) continue;
    for (const id of h.recordIds) {
      if (!plan.ids[stream].has(id)) named++;
      plan.ids[stream].set(id, { type: h.type, at: h.commitTimestamp, by: h.commitUser });
    }
  }
  return plan;
}
