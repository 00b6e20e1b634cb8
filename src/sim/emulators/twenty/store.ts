import type { Clock } from '../../../common/clock.ts';
import type { Actor } from './actor.ts';
import { checkFilterFields, matches, mentionsDeletedAt, parseFilter, type FilterNode } from './filter.ts';
import { compareKeys, keyValues, parseOrderBy } from './order.ts';
import { page, type PageInfo } from './paging.ts';
import { patchFromInput, recordFromInput, type InputContext, type InputResult, type StoredRecord } from './record-input.ts';
import { creatableFieldTypes, standardObjects, type FieldDef, type FieldType, type ObjectDef } from './schema.ts';
import { ViewStore } from './views.ts';

/**
 * One Twenty workspace in memory: its objects (standard ones and the custom fields added to
 * them) and their records. No idempotency, as in Twenty: the same body created twice is two
 * records. A batch create is all or nothing (Twenty inserts the batch in one statement; that a
 * failure leaves none of it is unverified).
 *
 * Every write stamps its actor (actor.ts): createdBy and updatedBy on a create, updatedBy on an
 * update, and updatedAt = the clock's now on both. A delete is soft (deletedAt set, the record kept
 * and hidden from lists) or a destroy (gone). Whether a soft delete also moves updatedAt is
 * unverified: here it does not, so a reader that wants deletes asks for deletedAt.
 */
export type CreateResult = { ok: true; records: StoredRecord[] } | { ok: false; message: string };

export class TwentyStore {
  readonly objects = new Map<string, ObjectDef>();
  private readonly rows = new Map<string, Map<string, StoredRecord>>();
  private seq = 0;
  readonly views: ViewStore;

  constructor(private readonly clock: Clock) {
    this.views = new ViewStore(() => this.newId());
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

  create(plural: string, inputs: readonly unknown[], actor: Actor): CreateResult {
    const obj = this.objects.get(plural)!;
    const table = this.rows.get(plural)!;
    const made: StoredRecord[] = [];
    const ids = new Set<string>();
    for (const input of inputs) {
      const r: InputResult = recordFromInput(obj, input, this.inputContext(made.length, actor));
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
  list(
    plural: string,
    q: { filter?: string; orderBy?: string; limit: number; startingAfter?: string; endingBefore?: string },
  ): { records: StoredRecord[]; totalCount: number; pageInfo: PageInfo } {
    const obj = this.objects.get(plural)!;
    let node: FilterNode | null = null;
    if (q.filter !== undefined && q.filter !== '') {
      node = parseFilter(q.filter);
      checkFilterFields(node, obj);
    }
    const keys = parseOrderBy(q.orderBy, obj);
    // Soft-deleted records are left out unless the filter names deletedAt anywhere: Twenty's
    // GraphqlQueryParser.applyDeletedAtToBuilder then lists with deleted rows (withDeleted).
    const withDeleted = node !== null && mentionsDeletedAt(node);
    const all = this.records(plural)
      .filter((r) => withDeleted || r.deletedAt === null || r.deletedAt === undefined)
      .filter((r) => node === null || matches(node, r, obj))
      .sort((a, b) => compareKeys(keyValues(a, keys), keyValues(b, keys), keys));
    return { ...page(all, keys, q), totalCount: all.length };
  }

  /**
   * PATCH /rest/<plural>/<id>: the fields given, then updatedAt and updatedBy. A soft-deleted or
   * missing record is not found (Twenty's update looks among live records; unverified text).
   */
  update(plural: string, id: string, input: unknown, actor: Actor): { ok: true; record: StoredRecord } | { ok: false; status: 400 | 404; message: string } {
    const obj = this.objects.get(plural)!;
    const r = this.rows.get(plural)!.get(id.toLowerCase());
    if (!r || r.deletedAt) return { ok: false, status: 404, message: `Record ${id} not found` };
    const p = patchFromInput(obj, input, this.inputContext(0, actor));
    if (!p.ok) return { ok: false, status: 400, message: p.message };
    Object.assign(r, p.patch, { updatedAt: new Date(this.clock.now()).toISOString(), updatedBy: actor });
    return { ok: true, record: r };
  }

  /** DELETE: soft (deletedAt = now; the record stays for the trash) or a destroy. */
  remove(plural: string, id: string, soft: boolean): StoredRecord | null {
    const table = this.rows.get(plural)!;
    const r = table.get(id.toLowerCase());
    if (!r || (soft && r.deletedAt)) return null;
    if (soft) r.deletedAt = new Date(this.clock.now()).toISOString();
    else table.delete(r.id);
    return r;
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

  private inputContext(offset: number, actor: Actor): InputContext {
    return {
      actor,
      exists: (plural, id) => this.rows.get(plural)?.has(id) ?? false,
      newId: () => this.newId(),
      nowIso: new Date(this.clock.now()).toISOString(),
      position: this.seq + offset,
    };
  }
}
