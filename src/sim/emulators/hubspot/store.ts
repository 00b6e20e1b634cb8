import type { Clock } from '../../../common/clock.ts';
import { defaultGroup, defaultProperties, objectTypes, systemProperties, type ObjectType, type PropertyDef } from './schema.ts';

/**
 * One HubSpot account in memory: its records of each object type, with their properties and their
 * associations to contacts, and its property definitions (the defaults and those created through
 * the Properties API). Values are stored as HubSpot stores them, as strings. Checking what a request
 * may write is validate.ts's; the routes call it before create().
 */

export interface CrmAssociation {
  toObjectType: 'contacts';
  toId: string;
  associationCategory: string;
  associationTypeId: number;
}

export interface CrmRecord {
  id: string;
  type: ObjectType;
  properties: Record<string, string>;
  associations: CrmAssociation[];
  createdAt: number;
  updatedAt: number;
  /**
   * What search sees: each write's properties and when the search index has it (the write's time
   * plus the lag then in force). Search answers from the newest version indexed by now.
   */
  versions: Array<{ indexedAt: number; properties: Record<string, string> }>;
}

export interface PropertyGroup {
  name: string;
  label: string;
  displayOrder: number;
}

export class HubSpotStore {
  private readonly records = new Map<ObjectType, Map<string, CrmRecord>>();
  readonly properties = new Map<ObjectType, Map<string, PropertyDef>>();
  readonly groups = new Map<ObjectType, Map<string, PropertyGroup>>();
  /** Record ids are numbers as strings, one sequence for all object types, as HubSpot's look. */
  private seq = 51_000;

  /** How long a write takes to reach search (search.ts); the emulator's option, changeable by a test. */
  searchLagMs = 0;

  /** Hears each create and update (the webhooks, hubspot/webhooks.ts), with the properties it was given. */
  listener: ((r: CrmRecord, action: 'creation' | 'propertyChange', properties: Record<string, string>) => void) | undefined;

  constructor(readonly clock: Clock) {
    for (const t of objectTypes) {
      this.records.set(t, new Map());
      this.properties.set(t, defaultProperties(t));
      this.groups.set(t, new Map([[defaultGroup[t], { name: defaultGroup[t], label: defaultGroup[t], displayOrder: -1 }]]));
    }
  }

  /** Stores a record whose properties and associations validate.ts accepted; the system properties are HubSpot's. */
  create(type: ObjectType, properties: Record<string, string>, associations: CrmAssociation[] = [], o: { by?: string; lagMs?: number } = {}): CrmRecord {
    const now = this.clock.now();
    const id = String(++this.seq);
    const iso = new Date(now).toISOString();
    const sys = systemProperties[type];
    const props: Record<string, string> = { ...properties, hs_object_id: id, [sys.created]: iso, [sys.modified]: iso, ...(o.by ? { hs_updated_by_user_id: o.by } : {}) };
    // HubSpot keeps a contact's address in lower case (the CRM treats addresses case-insensitively).
    if (type === 'contacts' && props.email !== undefined) props.email = props.email.toLowerCase();
    const record: CrmRecord = { id, type, properties: props, associations, createdAt: now, updatedAt: now, versions: [] };
    this.index(record, o.lagMs);
    this.of(type).set(id, record);
    this.listener?.(record, 'creation', properties);
    return record;
  }

  /**
   * Changes a record's properties (an empty string clears one, as HubSpot does): its modify date
   * moves to now and hs_updated_by_user_id names who changed it (the token's user through the API,
   * or a test's person). Returns undefined when there is no such record.
   */
  update(type: ObjectType, id: string, properties: Record<string, string>, o: { by?: string; lagMs?: number } = {}): CrmRecord | undefined {
    const r = this.get(type, id);
    if (!r) return undefined;
    const now = this.clock.now();
    // Two writes within one millisecond still read as two changes: the modify date only moves forward.
    const at = Math.max(now, r.updatedAt + 1);
    const next = { ...r.properties };
    for (const [k, v] of Object.entries(properties)) {
      if (v === '') delete next[k];
      else next[k] = type === 'contacts' && k === 'email' ? v.toLowerCase() : v;
    }
    next[systemProperties[type].modified] = new Date(at).toISOString();
    if (o.by) next.hs_updated_by_user_id = o.by;
    else delete next.hs_updated_by_user_id;
    r.properties = next;
    r.updatedAt = at;
    this.index(r, o.lagMs);
    this.listener?.(r, 'propertyChange', properties);
    return r;
  }

  /** Properties as search sees them now: the newest version indexed, or undefined (not yet searchable). */
  searchable(r: CrmRecord): Record<string, string> | undefined {
    const now = this.clock.now();
    for (let i = r.versions.length - 1; i >= 0; i--) if (r.versions[i]!.indexedAt <= now) return r.versions[i]!.properties;
    return undefined;
  }

  private index(r: CrmRecord, lagMs = this.searchLagMs): void {
    r.versions.push({ indexedAt: this.clock.now() + lagMs, properties: { ...r.properties } });
  }

  of(type: ObjectType): Map<string, CrmRecord> {
    return this.records.get(type)!;
  }

  all(type: ObjectType): CrmRecord[] {
    return [...this.of(type).values()];
  }

  get(type: ObjectType, id: string): CrmRecord | undefined {
    return this.of(type).get(id);
  }

  contactByEmail(email: string): CrmRecord | undefined {
    const e = email.toLowerCase();
    return this.all('contacts').find((c) => c.properties.email === e);
  }

  property(type: ObjectType, name: string): PropertyDef | undefined {
    return this.properties.get(type)!.get(name);
  }
}

/**
 * A record as the objects API answers it (SimplePublicObject): all its properties, or only `names`
 * (with hs_object_id and the create and modify dates, which HubSpot always adds).
 */
export function publicObject(r: CrmRecord, names?: readonly string[]): Record<string, unknown> {
  let properties = r.properties;
  if (names) {
    const sys = systemProperties[r.type];
    const keep = new Set([...names, 'hs_object_id', sys.created, sys.modified]);
    properties = Object.fromEntries(Object.entries(r.properties).filter(([k]) => keep.has(k)));
  }
  return { id: r.id, properties, createdAt: new Date(r.createdAt).toISOString(), updatedAt: new Date(r.updatedAt).toISOString(), archived: false };
}
