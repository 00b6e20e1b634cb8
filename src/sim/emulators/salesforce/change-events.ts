import { createHash } from 'node:crypto';
import type { Clock } from '../../../common/clock.ts';
import type { SObjectName } from './schema.ts';
import type { StoreWrite } from './store.ts';

/**
 * The org's Change Data Capture event bus (Change Data Capture Developer Guide, "Change Event
 * Message Structure", "Change Event Storage and Delivery"): every committed write to an entity
 * selected for CDC becomes one change event, kept 72 hours and identified by a replay id that
 * grows with each event. One sequence of replay ids serves every channel, so each channel's ids
 * grow too (Salesforce promises per channel only; a client must not assume ids are dense).
 *
 *   CREATE     the record's non-null fields
 *   UPDATE     the fields that changed (changedFields names them), LastModifiedDate always
 *   DELETE     the header only
 *   UNDELETE   the record's non-null fields (IsDeleted back to false)
 *   GAP_*      the header only: Salesforce could not build the event (a change made outside the
 *              application server, an event too large); the subscriber must read the records.
 *   GAP_OVERFLOW  a transaction too large for events: no record ids, the entity only.
 *
 * Each store write is one transaction here (its own transactionKey, sequenceNumber 1).
 */
export type ChangeType = 'CREATE' | 'UPDATE' | 'DELETE' | 'UNDELETE' | 'GAP_CREATE' | 'GAP_UPDATE' | 'GAP_DELETE' | 'GAP_UNDELETE' | 'GAP_OVERFLOW';

export interface ChangeEventHeader {
  entityName: SObjectName;
  recordIds: string[];
  changeType: ChangeType;
  changeOrigin: string;
  transactionKey: string;
  sequenceNumber: number;
  /** Epoch milliseconds, as the header gives it. */
  commitTimestamp: number;
  commitNumber: number;
  commitUser: string;
  changedFields: string[];
  nulledFields: string[];
  diffFields: string[];
}

export interface ChangeEvent {
  replayId: number;
  header: ChangeEventHeader;
  /** The payload's record fields (besides ChangeEventHeader). */
  fields: Record<string, unknown>;
}

/** The entities the connector reads that Salesforce supports for CDC. */
export const cdcEntities: readonly SObjectName[] = ['Contact', 'Lead', 'Opportunity', 'OpportunityContactRole'];

/** Documented: change events are kept 72 hours (three days) on the event bus. */
export const retentionMs = 72 * 3_600_000;

/** The standard channel of all selected entities, and each entity's own. */
export const allChannel = '/data/ChangeEvents';
export const entityChannel = (e: SObjectName) => `/data/${e}ChangeEvent`;

/** The entity a channel carries; null for the standard channel; undefined for no channel of CDC. */
export function channelEntity(channel: string): SObjectName | null | undefined {
  if (channel === allChannel) return null;
  const m = /^\/data\/(\w+)ChangeEvent$/.exec(channel);
  return m && (cdcEntities as readonly string[]).includes(m[1]!) ? (m[1] as SObjectName) : undefined;
}

/** Fields the platform keeps out of change event bodies. */
const hidden = new Set(['Id', 'IsDeleted', 'SystemModstamp']);

export class ChangeEventLog {
  private events: ChangeEvent[] = [];
  private nextReplay = 1;
  private commits = 0;
  private waiters: Array<() => void> = [];
  /** While set, writes make no event (a change that gap() accounts for instead). */
  silent = false;

  constructor(
    private readonly clock: Clock,
    /** The entities an admin selected for Change Data Capture; empty: CDC is not enabled. */
    readonly entities: ReadonlySet<SObjectName>,
  ) {}

  get enabled(): boolean {
    return this.entities.size > 0;
  }

  /** A committed write, as CDC sees it. */
  record(w: StoreWrite): void {
    if (this.silent || !this.entities.has(w.object)) return;
    const { record, before } = w;
    let type: ChangeType;
    let fields: Record<string, unknown>;
    if (before === null) {
      type = 'CREATE';
      fields = visible(record);
    } else if (record.IsDeleted === true && before.IsDeleted !== true) {
      type = 'DELETE';
      fields = {};
    } else if (record.IsDeleted !== true && before.IsDeleted === true) {
      type = 'UNDELETE';
      fields = visible(record);
    } else {
      type = 'UPDATE';
      fields = { LastModifiedDate: record.LastModifiedDate };
      for (const [k, v] of Object.entries(record)) if (!hidden.has(k) && before[k] !== v) fields[k] = v;
    }
    const changed = type === 'UPDATE' ? Object.keys(fields) : [];
    this.append(w.object, [record.Id], type, w.by, fields, changed);
  }

  /** A gap event for records changed without an event of their own (or GAP_OVERFLOW with no ids). */
  gap(entity: SObjectName, recordIds: string[], type: Extract<ChangeType, `GAP_${string}`>, by: string): void {
    this.append(entity, type === 'GAP_OVERFLOW' ? [] : recordIds, type, by, {}, []);
  }

  private append(entity: SObjectName, recordIds: string[], changeType: ChangeType, by: string, fields: Record<string, unknown>, changedFields: string[]): void {
    const n = ++this.commits;
    const transactionKey = createHash('sha256').update(`tx.${n}`).digest('hex').slice(0, 36);
    this.events.push({
      replayId: this.nextReplay++,
      header: { entityName: entity, recordIds, changeType, changeOrigin: '', transactionKey, sequenceNumber: 1, commitTimestamp: this.clock.now(), commitNumber: 10_000_000 + n, commitUser: by, changedFields, nulledFields: [], diffFields: [] },
      fields,
    });
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  /** Drops what is past the 72 h (on the emulator's clock) and answers what is left, oldest first. */
  retained(): ChangeEvent[] {
    const cutoff = this.clock.now() - retentionMs;
    const keep = this.events.findIndex((e) => e.header.commitTimestamp >= cutoff);
    if (keep !== 0) this.events = keep < 0 ? [] : this.events.slice(keep);
    return this.events;
  }

  /** The newest replay id given (0: none yet). */
  latest(): number {
    return this.nextReplay - 1;
  }

  /**
   * Where a subscription given `replay` starts (it receives events after it): -1 the newest (new
   * events only), -2 before the oldest kept; a replay id must be one the bus can resume after
   * without loss: no newer than the newest, no older than the one before the oldest kept. Null:
   * the id is invalid (too old: its successors were dropped; or never issued).
   */
  startAfter(replay: number): number | null {
    const kept = this.retained();
    const first = kept[0]?.replayId ?? this.nextReplay;
    if (replay === -1) return this.latest();
    if (replay === -2) return first - 1;
    if (!Number.isInteger(replay) || replay > this.latest() || replay < first - 1) return null;
    return replay;
  }

  /** Up to `max` kept events after `position` that `channel` carries. */
  after(position: number, channel: string, max: number): ChangeEvent[] {
    const entity = channelEntity(channel);
    return this.retained()
      .filter((e) => e.replayId > position && (entity === null || e.header.entityName === entity))
      .slice(0, max);
  }

  /** Resolves at the next event (a held long poll waits on it). */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

function visible(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (!hidden.has(k) && v !== null) out[k] = v;
  return out;
}

/** The message a subscriber receives for one event on one channel (Streaming API over CometD). */
export function eventMessage(e: ChangeEvent, channel: string): Record<string, unknown> {
  const h = e.header;
  return {
    channel,
    data: {
      schema: `${h.entityName}ChangeEvent-schema`,
      payload: { ChangeEventHeader: { ...h }, ...e.fields },
      event: { replayId: e.replayId },
    },
  };
}
