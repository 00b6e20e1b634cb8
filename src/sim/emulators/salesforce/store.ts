import type { Clock } from '../../../common/clock.ts';
import { keyPrefix, Schema, type SObjectName } from './schema.ts';

/**
 * The org's records, in memory. Every write stamps CreatedDate / LastModifiedDate /
 * SystemModstamp from the injected clock and LastModifiedById with the acting user, as the
 * platform does; nothing a client sends can set those. Ids are real-shaped 18-character ids (the
 * object's key prefix, a counter, and the case-safe suffix), so a connector that checks an id's
 * prefix (003 Contact, 00Q Lead) sees what it would in an org.
 */
export type SRecord = Record<string, unknown> & { Id: string };

/** Salesforce's datetime in JSON: `2026-01-05T09:30:00.000+0000` (REST answers use +0000, not Z). */
export function sfDateTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

export interface ListViewDef {
  id: string;
  label: string;
  developerName: string;
  sobjectType: 'Contact';
  /** Which contacts the view shows (the view's filter, as Setup would hold it). */
  filter: (c: SRecord) => boolean;
}

/** A write as the platform commits it: what Change Data Capture (change-events.ts) turns into an event. */
export interface StoreWrite {
  object: SObjectName;
  record: SRecord;
  /** The record's values before the write; null for a create. */
  before: Record<string, unknown> | null;
  by: string;
}

export class SalesforceStore {
  readonly schema = new Schema();
  private readonly records = new Map<SObjectName, SRecord[]>();
  /** Records by their 15-character id, so a soak of tens of thousands stays linear. */
  private readonly byId = new Map<string, SRecord>();
  /** Per object and field, records by the field's lower-cased text value (external-id lookups), built on first use. */
  private readonly byField = new Map<string, Map<string, SRecord[]>>();
  private seq = 0;
  readonly listViews: ListViewDef[] = [];
  /** Validation rules an admin added: each sees the record as it would be saved, and answers its error message or null. */
  readonly validationRules: Array<{ object: SObjectName; check: (r: Record<string, unknown>) => string | null }> = [];
  /** Told of every committed create and update (the change event log listens). */
  onWrite: ((w: StoreWrite) => void) | null = null;

  constructor(
    private readonly clock: Clock,
    readonly orgId: string,
  ) {}

  newId(object: SObjectName | '00B'): string {
    const prefix = object === '00B' ? '00B' : keyPrefix[object];
    const base = `${prefix}5g00000${(++this.seq).toString(36).toUpperCase().padStart(5, '0')}`;
    return base + caseSuffix(base);
  }

  all(object: SObjectName): SRecord[] {
    return this.records.get(object) ?? [];
  }

  get(object: SObjectName, id: string): SRecord | undefined {
    const r = this.byId.get(id.slice(0, 15));
    return r && this.objectOf(r.Id) === object ? r : undefined;
  }

  /** The records whose `field` holds `value`, compared without regard to case (as external ids are by default). */
  withValue(object: SObjectName, field: string, value: string): SRecord[] {
    return this.fieldIndex(object, field).get(value.toLowerCase()) ?? [];
  }

  private fieldIndex(object: SObjectName, field: string): Map<string, SRecord[]> {
    const k = `${object}.${field}`;
    let idx = this.byField.get(k);
    if (!idx) {
      this.byField.set(k, (idx = new Map()));
      for (const r of this.all(object)) this.indexOne(idx, r, field);
    }
    return idx;
  }

  private indexOne(idx: Map<string, SRecord[]>, r: SRecord, field: string): void {
    const v = r[field];
    if (typeof v !== 'string') return;
    const key = v.toLowerCase();
    const list = idx.get(key);
    if (list) list.push(r);
    else idx.set(key, [r]);
  }

  /** Keeps the field indexes of `object` true after `r` was created or changed (`before`: its values until now). */
  private reindex(object: SObjectName, r: SRecord, before: Record<string, unknown> | null): void {
    for (const [k, idx] of this.byField) {
      if (!k.startsWith(`${object}.`)) continue;
      const field = k.slice(object.length + 1);
      if (before && before[field] === r[field]) continue;
      const old = before?.[field];
      if (typeof old === 'string') {
        const list = idx.get(old.toLowerCase())?.filter((x) => x !== r);
        if (list?.length) idx.set(old.toLowerCase(), list);
        else idx.delete(old.toLowerCase());
      }
      this.indexOne(idx, r, field);
    }
  }

  /** The object an id belongs to, by its key prefix. */
  objectOf(id: string): SObjectName | undefined {
    return (Object.keys(keyPrefix) as SObjectName[]).find((o) => keyPrefix[o] === id.slice(0, 3));
  }

  /** Creates a record as `by` (a user id), with the fields' defaults; no validation (the routes validate). */
  create(object: SObjectName, fields: Record<string, unknown>, by: string): SRecord {
    const now = sfDateTime(this.clock.now());
    const rec: SRecord = { Id: this.newId(object) };
    for (const f of this.schema.fields(object)) if (f.name !== 'Id') rec[f.name] = f.defaultValue ?? null;
    Object.assign(rec, fields, { IsDeleted: false, CreatedDate: now, CreatedById: by, LastModifiedDate: now, LastModifiedById: by, SystemModstamp: now });
    if (object === 'User') for (const k of ['IsDeleted', 'CreatedDate', 'CreatedById', 'LastModifiedDate', 'LastModifiedById']) delete rec[k];
    if ('OwnerId' in rec && rec.OwnerId === null) rec.OwnerId = by;
    let list = this.records.get(object);
    if (!list) this.records.set(object, (list = []));
    list.push(rec);
    this.byId.set(rec.Id.slice(0, 15), rec);
    this.reindex(object, rec, null);
    this.onWrite?.({ object, record: rec, before: null, by });
    return rec;
  }

  /** Moves a record to the Recycle Bin: IsDeleted, stamped as a change by `by`. */
  remove(object: SObjectName, id: string, by: string): void {
    this.update(object, id, { IsDeleted: true }, by);
  }

  update(object: SObjectName, id: string, fields: Record<string, unknown>, by: string): SRecord {
    const rec = this.get(object, id);
    if (!rec) throw new Error(`update: no ${object} ${id}`);
    const now = sfDateTime(this.clock.now());
    const before = { ...rec };
    Object.assign(rec, fields, { LastModifiedDate: now, LastModifiedById: by, SystemModstamp: now });
    this.reindex(object, rec, before);
    this.onWrite?.({ object, record: rec, before, by });
    return rec;
  }
}

/**
 * The 3-character suffix that makes a 15-character id case-insensitively unique (documented
 * algorithm: per 5-character chunk, a bit per upper-case letter, read as an index into A–Z0–5).
 */
function caseSuffix(id15: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
  let out = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) if (/[A-Z]/.test(id15[chunk * 5 + i]!)) bits |= 1 << i;
    out += alphabet[bits];
  }
  return out;
}
