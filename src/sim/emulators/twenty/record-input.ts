import type { Actor } from './actor.ts';
import type { FieldDef, ObjectDef } from './schema.ts';

/**
 * One record of a create body checked against its object's fields and completed with the
 * defaults, or the reason Twenty refuses it (a 400). Twenty validates the input against the
 * workspace's metadata and lets PostgreSQL refuse the rest (a malformed uuid or timestamp, a
 * foreign key to nothing), surfacing the database's text as a 400; those texts below are
 * PostgreSQL's own, and that Twenty passes them through unchanged is unverified, as is the text
 * for an unknown field.
 */
export type StoredRecord = Record<string, unknown> & { id: string };

export type InputResult = { ok: true; record: StoredRecord } | { ok: false; message: string };

export interface InputContext {
  /** Whether a record with this id exists in the object named by its plural. */
  exists(objectPlural: string, id: string): boolean;
  newId(): string;
  nowIso: string;
  position: number;
  /** Who writes: stamped into createdBy (unless given) and updatedBy (actor.ts). */
  actor: Actor;
}

const uuidRe = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// PostgreSQL reads many more forms than this (even 'yesterday'); an API client sends ISO 8601.
const isoRe = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export function recordFromInput(obj: ObjectDef, input: unknown, ctx: InputContext): InputResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return fail('Body must be an object');
  const body = input as Record<string, unknown>;
  const record: StoredRecord = { id: '' };
  for (const [key, value] of Object.entries(body)) {
    const f = obj.fields.get(key);
    if (!f) return fail(`Object ${obj.nameSingular} doesn't have any "${key}" field.`);
    if (f.system && key !== 'id' && key !== 'position') return fail(`Field "${key}" of ${obj.nameSingular} is set by the server and cannot be given`);
    const checked = checkValue(obj, f, value, ctx);
    if (typeof checked === 'string') return fail(checked);
    record[key] = checked.value;
  }
  if (record.id === '' || record.id === undefined || record.id === null) record.id = ctx.newId();
  for (const f of obj.fields.values()) if (!(f.name in record)) record[f.name] = defaultValue(obj, f, ctx);
  return { ok: true, record };
}

/**
 * The fields of an update body (PATCH /rest/<plural>/<id>), checked as a create's are; what it does
 * not name keeps its value. id and the server's fields may not be given.
 */
export function patchFromInput(obj: ObjectDef, input: unknown, ctx: InputContext): { ok: true; patch: Record<string, unknown> } | { ok: false; message: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, message: 'Body must be an object' };
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const f = obj.fields.get(key);
    if (!f) return { ok: false, message: `Object ${obj.nameSingular} doesn't have any "${key}" field.` };
    if (f.system || key === 'createdBy') return { ok: false, message: `Field "${key}" of ${obj.nameSingular} is set by the server and cannot be given` };
    const checked = checkValue(obj, f, value, ctx);
    if (typeof checked === 'string') return { ok: false, message: checked };
    patch[key] = checked.value;
  }
  return { ok: true, patch };
}

function fail(message: string): InputResult {
  return { ok: false, message };
}

function checkValue(obj: ObjectDef, f: FieldDef, v: unknown, ctx: InputContext): { value: unknown } | string {
  if (v === null) return f.name === 'id' ? `null value in column "id" of relation "${obj.nameSingular}" violates not-null constraint` : { value: null };
  const bad = () => `Invalid value for field "${f.name}" of ${obj.nameSingular}: ${JSON.stringify(v)}`;
  switch (f.type) {
    case 'UUID':
      return typeof v === 'string' && uuidRe.test(v) ? { value: v.toLowerCase() } : `invalid input syntax for type uuid: "${String(v)}"`;
    case 'RELATION_ID': {
      if (typeof v !== 'string' || !uuidRe.test(v)) return `invalid input syntax for type uuid: "${String(v)}"`;
      if (!ctx.exists(f.target!, v.toLowerCase())) {
        return `insert or update on table "${obj.nameSingular}" violates foreign key constraint on "${f.name}"`;
      }
      return { value: v.toLowerCase() };
    }
    case 'TEXT':
      return typeof v === 'string' ? { value: v } : bad();
    case 'NUMBER':
    case 'POSITION':
      return typeof v === 'number' && Number.isFinite(v) ? { value: v } : bad();
    case 'BOOLEAN':
      return typeof v === 'boolean' ? { value: v } : bad();
    case 'DATE_TIME':
      return typeof v === 'string' && isoRe.test(v) && Number.isFinite(Date.parse(v))
        ? { value: new Date(v).toISOString() }
        : `invalid input syntax for type timestamp with time zone: "${String(v)}"`;
    case 'SELECT':
      return typeof v === 'string' && f.options!.includes(v) ? { value: v } : `invalid input value for enum ${obj.nameSingular}_${f.name}_enum: "${String(v)}"`;
    case 'EMAILS': {
      const o = composite(v, ['primaryEmail', 'additionalEmails']);
      if (!o) return bad();
      const primary = o.primaryEmail ?? '';
      const extra = o.additionalEmails ?? null;
      if (typeof primary !== 'string') return bad();
      if (extra !== null && !(Array.isArray(extra) && extra.every((e) => typeof e === 'string'))) return bad();
      // Twenty stores addresses canonical: lowercased (integration test emails-domain-canonicalization).
      return { value: { primaryEmail: primary.toLowerCase(), additionalEmails: extra?.map((e: string) => e.toLowerCase()) ?? null } };
    }
    case 'FULL_NAME': {
      const o = composite(v, ['firstName', 'lastName']);
      if (!o || !stringsOrNull(o)) return bad();
      return { value: { firstName: o.firstName ?? '', lastName: o.lastName ?? '' } };
    }
    case 'RICH_TEXT_V2': {
      const o = composite(v, ['blocknote', 'markdown']);
      if (!o || !stringsOrNull(o)) return bad();
      // Whether Twenty derives the blocknote JSON from markdown-only input on the REST path is
      // unverified; the emulator keeps what was given.
      return { value: { blocknote: o.blocknote ?? null, markdown: o.markdown ?? null } };
    }
    case 'ACTOR': {
      const o = composite(v, ['source', 'workspaceMemberId', 'name', 'context']);
      if (!o) return bad();
      return { value: { ...ctx.actor, ...o } };
    }
    case 'PHONES': {
      const o = composite(v, ['primaryPhoneNumber', 'primaryPhoneCountryCode', 'primaryPhoneCallingCode', 'additionalPhones']);
      if (!o) return bad();
      const { additionalPhones, ...rest } = o;
      if (!stringsOrNull(rest)) return bad();
      return { value: { primaryPhoneNumber: rest.primaryPhoneNumber ?? '', primaryPhoneCountryCode: rest.primaryPhoneCountryCode ?? '', primaryPhoneCallingCode: rest.primaryPhoneCallingCode ?? '', additionalPhones: additionalPhones ?? null } };
    }
    case 'CURRENCY': {
      const o = composite(v, ['amountMicros', 'currencyCode']);
      if (!o) return bad();
      const micros = o.amountMicros ?? null;
      if (micros !== null && !(typeof micros === 'number' && Number.isFinite(micros))) return bad();
      if (o.currencyCode !== undefined && o.currencyCode !== null && typeof o.currencyCode !== 'string') return bad();
      return { value: { amountMicros: micros, currencyCode: o.currencyCode ?? '' } };
    }
  }
}

function composite(v: unknown, keys: readonly string[]): Record<string, unknown> | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  return Object.keys(v).every((k) => keys.includes(k)) ? (v as Record<string, unknown>) : null;
}

function stringsOrNull(o: Record<string, unknown>): boolean {
  return Object.values(o).every((x) => x === null || typeof x === 'string');
}

function defaultValue(obj: ObjectDef, f: FieldDef, ctx: InputContext): unknown {
  switch (f.name) {
    case 'createdAt':
    case 'updatedAt':
      return ctx.nowIso;
    case 'position':
      return ctx.position;
    case 'updatedBy':
      return ctx.actor;
  }
  switch (f.type) {
    case 'TEXT':
      return '';
    case 'EMAILS':
      return { primaryEmail: '', additionalEmails: null };
    case 'FULL_NAME':
      return { firstName: '', lastName: '' };
    case 'RICH_TEXT_V2':
      return { blocknote: null, markdown: null };
    case 'ACTOR':
      return ctx.actor;
    case 'PHONES':
      return { primaryPhoneNumber: '', primaryPhoneCountryCode: '', primaryPhoneCallingCode: '', additionalPhones: null };
    case 'CURRENCY':
      return { amountMicros: null, currencyCode: '' };
    case 'SELECT':
      // Twenty's task status defaults to TODO (unverified for other selects; none here).
      return obj.nameSingular === 'task' && f.name === 'status' ? 'TODO' : null;
    default:
      return null;
  }
}
