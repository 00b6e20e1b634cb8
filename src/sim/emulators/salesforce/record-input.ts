import type { EmulatorReply } from '../server.ts';
import { sfErrors, type SfError } from './errors.ts';
import type { FieldDef, SObjectName } from './schema.ts';
import type { SalesforceStore } from './store.ts';

/**
 * What a create or update may write (REST API Developer Guide, "Status Codes and Error
 * Responses"; Object Reference field properties). Two kinds of refusal, as Salesforce makes them:
 *
 *   the whole request   a field the object lacks (INVALID_FIELD), a value of the wrong JSON type
 *                       (JSON_PARSER_ERROR): the body cannot be read as the sObject at all
 *   this record         a field not createable / updateable (INVALID_FIELD_FOR_INSERT_UPDATE), a
 *                       string over its length (STRING_TOO_LONG), a value outside a restricted
 *                       picklist, a bad address, a lookup to a missing record or one of the wrong
 *                       type, a required field missing: the record's `errors`, with `statusCode`
 *
 * Messages use the field's API name where Salesforce uses its label (unverified beyond that).
 */
export type Checked = { whole: EmulatorReply } | { errors: SfError[]; values: Record<string, unknown> };

export function checkRecord(store: SalesforceStore, object: SObjectName, input: Record<string, unknown>, mode: 'create' | 'update'): Checked {
  const values: Record<string, unknown> = {};
  const errors: SfError[] = [];
  for (const [key, value] of Object.entries(input)) {
    const f = store.schema.field(object, key);
    if (!f) return { whole: sfErrors.noSuchColumn(key, object) };
    const typeError = jsonTypeError(f, value);
    if (typeError) return { whole: sfErrors.jsonParser(typeError) };
    if (mode === 'create' ? !f.createable : !f.updateable) {
      errors.push({
        errorCode: 'INVALID_FIELD_FOR_INSERT_UPDATE',
        message: `Unable to create/update fields: ${f.name}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`,
        fields: [f.name],
      });
      continue;
    }
    const problem = value === null ? (f.nillable ? null : required([f.name])) : valueProblem(store, f, value);
    if (problem) errors.push(problem);
    else values[f.name] = value;
  }
  if (mode === 'create') {
    const missing = store.schema
      .fields(object)
      .filter((f) => f.createable && !f.nillable && f.defaultValue === undefined && f.type !== 'boolean' && (values[f.name] === undefined || values[f.name] === null))
      .map((f) => f.name);
    if (missing.length) errors.push(required(missing));
  }
  return { errors, values };
}

const required = (names: string[]): SfError => ({ errorCode: 'REQUIRED_FIELD_MISSING', message: `Required fields are missing: [${names.join(', ')}]`, fields: names });

/** JSON the deserializer cannot turn into the field's type (text modelled on Jackson's, unverified). */
function jsonTypeError(f: FieldDef, v: unknown): string | null {
  if (v === null) return null;
  const bad = (javaType: string) => `Cannot deserialize instance of ${javaType} from ${typeof v === 'string' ? `VALUE_STRING value ${v}` : `${typeof v} value`} or request may be missing a required field`;
  switch (f.type) {
    case 'boolean':
      return typeof v === 'boolean' ? null : bad('boolean');
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) ? null : bad('int');
    case 'date':
      return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)) ? null : bad('date');
    case 'datetime':
      return typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? null : bad('datetime');
    default:
      return typeof v === 'string' ? null : bad(f.type);
  }
}

function valueProblem(store: SalesforceStore, f: FieldDef, v: unknown): SfError | null {
  const s = String(v);
  if (f.length !== undefined && typeof v === 'string' && s.length > f.length && f.type !== 'reference') {
    return { errorCode: 'STRING_TOO_LONG', message: `${f.name}: data value too large: ${s.slice(0, 40)}... (max length=${f.length})`, fields: [f.name] };
  }
  if (f.type === 'picklist' && f.picklistValues && !f.picklistValues.includes(s)) {
    return { errorCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', message: `${f.name}: bad value for restricted picklist field: ${s}`, fields: [f.name] };
  }
  if (f.type === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s)) {
    return { errorCode: 'INVALID_EMAIL_ADDRESS', message: `${f.name}: invalid email address: ${s}`, fields: [f.name] };
  }
  if (f.type === 'reference') {
    const target = store.objectOf(s);
    if (!/^[A-Za-z0-9]{15}(?:[A-Za-z0-5]{3})?$/.test(s)) return { errorCode: 'MALFORMED_ID', message: `${f.name}: id value of incorrect type: ${s}`, fields: [f.name] };
    if (!target || !f.referenceTo?.includes(target)) return { errorCode: 'FIELD_INTEGRITY_EXCEPTION', message: `${f.name}: id value of incorrect type: ${s}`, fields: [f.name] };
    const rec = store.get(target, s);
    if (!rec || rec.IsDeleted === true) return { errorCode: 'INVALID_CROSS_REFERENCE_KEY', message: 'invalid cross reference id', fields: [f.name] };
    // A converted lead takes no new activities (unverified text).
    if (target === 'Lead' && rec.IsConverted === true) return { errorCode: 'FIELD_INTEGRITY_EXCEPTION', message: `${f.name}: converted lead: ${s}`, fields: [f.name] };
  }
  return null;
}
