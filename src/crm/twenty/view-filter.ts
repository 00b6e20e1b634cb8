import { filterable } from './client.ts';

/**
 * A Twenty saved view's filters (GET /rest/metadata/viewFilters?viewId=…) as one REST `filter`
 * on the view's object, so that listMembers lists what the view shows. Twenty serves no "records
 * of a view" endpoint; its app turns the filters into a query itself, and so does this. Pure.
 *
 * What is translated (all filters of the view combined with and(), as the app does for filters
 * outside a group):
 *
 *   TEXT, and a sub-field of EMAILS / FULL_NAME / PHONES (EMAILS without one: primaryEmail)
 *     CONTAINS v            field[ilike]:"%v%"
 *     DOES_NOT_CONTAIN v    not(field[ilike]:"%v%")
 *     IS_EMPTY              or(field[is]:NULL,field[eq]:"")
 *     IS_NOT_EMPTY          and(field[is]:NOT_NULL,field[neq]:"")
 *   FULL_NAME without a sub-field: CONTAINS / DOES_NOT_CONTAIN on either name
 *   SELECT   IS / IS_NOT [values]   field[in]:[…] / not(field[in]:[…])  (value: a JSON array, or its text)
 *   NUMBER   GREATER_THAN_OR_EQUAL / LESS_THAN_OR_EQUAL v   field[gte]:v / field[lte]:v
 *   DATE_TIME  IS_AFTER / IS_BEFORE an ISO instant   field[gt]:… / field[lt]:…
 *
 * Anything else (filter groups, relative dates, relations, a value holding a quote, a comma or a
 * bracket that Twenty's filter parser would split on) is refused with the reason: a list that
 * silently listed more people than the view shows would enroll them.
 */
export interface ViewFilterRow {
  fieldMetadataId?: unknown;
  operand?: unknown;
  value?: unknown;
  subFieldName?: unknown;
  viewFilterGroupId?: unknown;
}

export interface FieldInfo {
  name: string;
  type: string;
}

export type Translation = { ok: true; filter: string } | { ok: false; reason: string };

export function translateViewFilters(filters: readonly ViewFilterRow[], fields: ReadonlyMap<string, FieldInfo>): Translation {
  const parts: string[] = [];
  for (const f of filters) {
    const r = translateOne(f, fields);
    if (!r.ok) return r;
    parts.push(r.filter);
  }
  return { ok: true, filter: parts.length === 0 ? '' : parts.length === 1 ? parts[0]! : `and(${parts.join(',')})` };
}

const textSubFields: Record<string, readonly string[]> = {
  EMAILS: ['primaryEmail'],
  FULL_NAME: ['firstName', 'lastName'],
  PHONES: ['primaryPhoneNumber'],
};

function translateOne(f: ViewFilterRow, fields: ReadonlyMap<string, FieldInfo>): Translation {
  if (f.viewFilterGroupId !== null && f.viewFilterGroupId !== undefined) return no('the view uses filter groups');
  const field = typeof f.fieldMetadataId === 'string' ? fields.get(f.fieldMetadataId) : undefined;
  if (!field) return no(`the view filters on a field this object does not list (${String(f.fieldMetadataId)})`);
  const op = String(f.operand);
  const sub = typeof f.subFieldName === 'string' && f.subFieldName !== '' ? f.subFieldName : null;

  if (field.type === 'TEXT' || textSubFields[field.type]) {
    let paths: string[];
    if (field.type === 'TEXT') paths = [field.name];
    else if (sub) {
      if (!textSubFields[field.type]!.includes(sub)) return no(`the view filters on ${field.name}.${sub}`);
      paths = [`${field.name}.${sub}`];
    } else paths = textSubFields[field.type]!.map((s) => `${field.name}.${s}`);
    if (paths.length > 1 && op !== 'CONTAINS' && op !== 'DOES_NOT_CONTAIN') return no(`the view uses ${op} on all of ${field.name}`);
    const one = (p: string): Translation => textPredicate(p, op, f.value);
    const each = paths.map(one);
    const bad = each.find((x) => !x.ok);
    if (bad) return bad;
    const preds = each.map((x) => (x as { filter: string }).filter);
    if (preds.length === 1) return { ok: true, filter: preds[0]! };
    // Either name contains it; neither contains it.
    return { ok: true, filter: op === 'CONTAINS' ? `or(${preds.join(',')})` : `and(${preds.join(',')})` };
  }
  if (field.type === 'SELECT') {
    const values = selectValues(f.value);
    if (!values || values.length === 0 || !values.every(filterable)) return no(`the view's ${field.name} values cannot be put in a filter`);
    const inList = `${field.name}[in]:[${values.map((v) => `"${v}"`).join(',')}]`;
    if (op === 'IS') return { ok: true, filter: inList };
    if (op === 'IS_NOT') return { ok: true, filter: `not(${inList})` };
  }
  if (field.type === 'NUMBER' && (op === 'GREATER_THAN_OR_EQUAL' || op === 'LESS_THAN_OR_EQUAL')) {
    const n = Number(f.value);
    if (!Number.isFinite(n)) return no(`the view's ${field.name} value is not a number`);
    return { ok: true, filter: `${field.name}[${op === 'GREATER_THAN_OR_EQUAL' ? 'gte' : 'lte'}]:${n}` };
  }
  if (field.type === 'DATE_TIME' && (op === 'IS_AFTER' || op === 'IS_BEFORE')) {
    const ms = Date.parse(String(f.value));
    if (!Number.isFinite(ms)) return no(`the view's ${field.name} date is not an instant`);
    return { ok: true, filter: `${field.name}[${op === 'IS_AFTER' ? 'gt' : 'lt'}]:"${new Date(ms).toISOString()}"` };
  }
  return no(`the view uses ${op} on ${field.name} (${field.type})`);
}

function textPredicate(path: string, op: string, value: unknown): Translation {
  if (op === 'IS_EMPTY') return { ok: true, filter: `or(${path}[is]:NULL,${path}[eq]:"")` };
  if (op === 'IS_NOT_EMPTY') return { ok: true, filter: `and(${path}[is]:NOT_NULL,${path}[neq]:"")` };
  if (op !== 'CONTAINS' && op !== 'DOES_NOT_CONTAIN') return no(`the view uses ${op} on ${path}`);
  if (typeof value !== 'string' || !filterable(value) || /[%_]/.test(value)) return no(`the view's value for ${path} cannot be put in a filter`);
  const like = `${path}[ilike]:"%${value}%"`;
  return { ok: true, filter: op === 'CONTAINS' ? like : `not(${like})` };
}

/** A select filter's value: Twenty's app stores a JSON array of option values as text. */
function selectValues(v: unknown): string[] | null {
  let x = v;
  if (typeof x === 'string') {
    try {
      x = JSON.parse(x);
    } catch {
      return null;
    }
  }
  return Array.isArray(x) && x.every((s) => typeof s === 'string') ? (x as string[]) : null;
}

function no(reason: string): Translation {
  return { ok: false, reason };
}
