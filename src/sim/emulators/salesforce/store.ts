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

export class SalesforceStore {
  readonly schema = new Schema();
  private readonly records = new Map<SObjectName, SRecord[]>();
  private seq = 0;
  readonly listViews: ListViewDef[] = [];
  /** Validation rules an admin added: each sees the record as it would be saved, and answers its error message or null. */
  readonly validationRules: Array<{ object: SObjectName; check: (r: Record<string, unknown>) => string | null }> = [];

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
    const id15 = id.slice(0, 15);
    return this.all(object).find((r) => r.Id.slice(0, 15) === id15);
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
    this.records.set(object, [...this.all(object), rec]);
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
    Object.assign(rec, fields, { LastModifiedDate: now, LastModifiedById: by, SystemModstamp: now });
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
