import type { Clock } from '../../../common/clock.ts';
import { checkFilterFields, matches, parseFilter } from './filter.ts';
import { page, type PageInfo } from './paging.ts';
import { recordFromInput, type InputContext, type InputResult, type StoredRecord } from './record-input.ts';
import { creatableFieldTypes, standardObjects, type FieldDef, type FieldType, type ObjectDef } from './schema.ts';

/**
 * One Twenty workspace in memory: its objects (standard ones and the custom fields added to
 * them) and their records. No idempotency, as in Twenty: the same body created twice is two
 * records. A batch create is all or nothing (Twenty inserts the batch in one statement; that a
 * failure leaves none of it is unverified).
 */
export type CreateResult = { ok: true; records: StoredRecord[] } | { ok: false; message: string };

export class TwentyStore {
  readonly objects = new Map<string, ObjectDef>();
  private readonly rows = new Map<string, Map<string, StoredRecord>>();
  private seq = 0;

  constructor(private readonly clock: Clock) {
    for (const o of standardObjects()) {
      this.objects.set(o.namePlural, o);
      this.rows.set(o.namePlural, new Map());
    }
  }

  /** Ids in creation order (Twenty's are v4 UUIDs; these are v4-shaped and sort by age). */
  newId(): string {
    return `00000000-0000-4000-8000-${(++this.seq).toString(16).padStart(12, '0')}`;
  }

  objectById(id: string): ObjectDef | undefined {
    return [...this.objects.values()].find((o) => o.id === id);
  }

  records(plural: string): StoredRecord[] {
    return [...(this.rows.get(plural)?.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get(plural: string, id: string): StoredRecord | undefined {
    return this.rows.get(plural)?.get(id);
  }

  create(plural: string, inputs: readonly unknown[]): CreateResult {
    const obj = this.objects.get(plural)!;
    const table = this.rows.get(plural)!;
    const made: StoredRecord[] = [];
    const ids = new Set<string>();
    for (const input of inputs) {
      const r: InputResult = recordFromInput(obj, input, this.inputContext(made.length));
      if (!r.ok) return r;
      // The integration test's text for an id that exists (rest-api-core-create-many).
      if (table.has(r.record.id) || ids.has(r.record.id)) return { ok: false, message: `A duplicate entry was detected: ${obj.nameSingular} ${r.record.id} already exists` };
      ids.add(r.record.id);
      made.push(r.record);
    }
    for (const r of made) table.set(r.id, r);
    return { ok: true, records: made };
  }

  /**
   * The records matching a REST `filter`, one page of them, and how many match in all. Throws
   * FilterError or PagingError (a 400) for a filter or a cursor Twenty would refuse.
   */
  list(plural: string, q: { filter?: string; limit: number; startingAfter?: string; endingBefore?: string }): { records: StoredRecord[]; totalCount: number; pageInfo: PageInfo } {
    const obj = this.objects.get(plural)!;
    let all = this.records(plural);
    if (q.filter !== undefined && q.filter !== '') {
      const node = parseFilter(q.filter);
      checkFilterFields(node, obj);
      all = all.filter((r) => matches(node, r, obj));
    }
    return { ...page(all, q), totalCount: all.length };
  }

  /**
   * A custom field on an object (the metadata API's createOneField). Returns the field, or why
   * Twenty refuses it. Texts: "Field already exists" is the field-metadata service's; the others
   * are unverified.
   */
  addField(input: Record<string, unknown>): { ok: true; field: FieldDef; object: ObjectDef } | { ok: false; message: string } {
    const obj = typeof input.objectMetadataId === 'string' ? this.objectById(input.objectMetadataId) : undefined;
    if (!obj) return { ok: false, message: 'Object metadata does not exist' };
    if (typeof input.name !== 'string' || !/^[a-z][a-zA-Z0-9]*$/.test(input.name)) return { ok: false, message: `Name should be in camelCase: ${String(input.name)}` };
    if (typeof input.label !== 'string' || input.label.trim() === '') return { ok: false, message: 'Label is required' };
    if (typeof input.type !== 'string') return { ok: false, message: 'Field type is required' };
    if (!creatableFieldTypes.has(input.type as FieldType)) return { ok: false, message: `twenty emulator: creating a field of type ${input.type} is not implemented` };
    if (obj.fields.has(input.name)) return { ok: false, message: 'Field already exists' };
    const field: FieldDef = {
      name: input.name,
      type: input.type as FieldType,
      isCustom: true,
      label: input.label,
      id: this.newId(),
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    obj.fields.set(field.name, field);
    // Existing records get the field's default (a TEXT custom field: '').
    for (const r of this.rows.get(obj.namePlural)!.values()) r[field.name] = field.type === 'TEXT' ? '' : null;
    return { ok: true, field, object: obj };
  }

  private inputContext(offset: number): InputContext {
    return {
      exists: (plural, id) => this.rows.get(plural)?.has(id) ?? false,
      newId: () => this.newId(),
      nowIso: new Date(this.clock.now()).toISOString(),
      position: this.seq + offset,
    };
  }
}
