import { compositeSubFields, type FieldDef, type ObjectDef } from './schema.ts';

/**
 * Twenty's REST `filter` query parameter, parsed as its server parses it
 * (twenty-server api/rest/input-request-parsers/filter-parser-utils/): a predicate is
 * `field[comparator]:value` or `field.subField[comparator]:value`; predicates combine with
 * `and(…)`, `or(…)`, `not(…)` (one predicate); a list of predicates without a conjunction is an
 * `and`. The `in` comparator takes `[v1,v2]`, split at every comma (quotes do not protect one);
 * a value in double or single quotes loses them; `is` takes NULL or NOT_NULL.
 *
 * Comparators Twenty lists: eq, neq, in, containsAny, is, gt, gte, lt, lte, startsWith, endsWith,
 * like, ilike. containsAny (array fields) is not implemented here: asked for, it is a loud 400.
 */
export type FilterNode =
  | { and: FilterNode[] }
  | { or: FilterNode[] }
  | { not: FilterNode }
  | { path: string[]; op: Comparator; value: string | string[] };

const comparators = ['eq', 'neq', 'in', 'containsAny', 'is', 'gt', 'gte', 'lt', 'lte', 'startsWith', 'endsWith', 'like', 'ilike'] as const;
type Comparator = (typeof comparators)[number];

export class FilterError extends Error {}

const conjunctionRe = /^(and|or|not)\((.+)\)$/s;

export function parseFilter(query: string): FilterNode {
  let depth = 0;
  for (const c of query) {
    depth += c === '(' ? 1 : c === ')' ? -1 : 0;
    if (depth < 0) break;
  }
  // Twenty's checkFilterQuery: the text is unverified.
  if (depth !== 0) throw new FilterError(`'filter' invalid. ${query} has unbalanced parentheses`);
  return parseNode(conjunctionRe.test(query) ? query : `and(${query})`);
}

function parseNode(text: string): FilterNode {
  const m = conjunctionRe.exec(text);
  if (!m) return parseBase(text);
  const parts = splitContent(text).map(parseNode);
  if (m[1] === 'not') {
    if (parts.length !== 1) throw new FilterError(`'filter' invalid. 'not' conjunction should contain only 1 condition. eg: not(field[eq]:1)`);
    return { not: parts[0]! };
  }
  return m[1] === 'and' ? { and: parts } : { or: parts };
}

/** The predicates of `conj(a,b,…)`: commas at the first parenthesis level, outside brackets and quotes. */
function splitContent(text: string): string[] {
  let inBrackets = false;
  let inDouble = false;
  let inSingle = false;
  let depth = 0;
  const out: string[] = [];
  let cur = '';
  for (const c of text) {
    let keep = depth >= 1;
    if (c === '(') depth++;
    if (c === ')') {
      depth--;
      keep = depth >= 1;
    }
    if (c === '[' || c === ']') inBrackets = !inBrackets;
    if (c === '"') inDouble = !inDouble;
    if (c === "'") inSingle = !inSingle;
    if (c === ',' && depth === 1 && !inBrackets && !inDouble && !inSingle) {
      out.push(cur);
      cur = '';
      keep = false;
    }
    if (keep) cur += c;
  }
  out.push(cur);
  return out;
}

function parseBase(text: string): FilterNode {
  if (!/^(.+)\[(.+)\]:(.+)$/s.test(text)) throw new FilterError(`'filter' invalid for '${text}'. eg: price[gte]:10`);
  const open = text.indexOf('[');
  const close = text.indexOf(']', open);
  if (text[close + 1] !== ':') throw new FilterError(`'filter' invalid for '${text}'. eg: price[gte]:10`);
  const fields = text.slice(0, open);
  const op = text.slice(open + 1, close);
  const raw = text.slice(close + 2);
  if (!(comparators as readonly string[]).includes(op)) {
    throw new FilterError(`'filter' invalid for '${text}', comparator ${op} not in ${comparators.join(', ')}`);
  }
  const comparator = op as Comparator;
  if (comparator === 'in' || comparator === 'containsAny') {
    if (!raw.startsWith('[') || !raw.endsWith(']')) {
      throw new FilterError(`'filter' invalid for '${comparator}' operator. Received '${raw}' but array value expected eg: 'field[${comparator}]:[value_1,value_2]'`);
    }
    return { path: fields.split('.'), op: comparator, value: raw.slice(1, -1).split(',').map(unquote) };
  }
  return { path: fields.split('.'), op: comparator, value: comparator === 'is' ? raw : unquote(raw) };
}

function unquote(v: string): string {
  return (v[0] === '"' || v[0] === "'") && (v.endsWith('"') || v.endsWith("'")) ? v.slice(1, -1) : v;
}

/** Checks every predicate's field against the object: an unknown one is a 400 (the text is unverified). */
export function checkFilterFields(node: FilterNode, obj: ObjectDef): void {
  if ('and' in node) return node.and.forEach((n) => checkFilterFields(n, obj));
  if ('or' in node) return node.or.forEach((n) => checkFilterFields(n, obj));
  if ('not' in node) return checkFilterFields(node.not, obj);
  const [name, sub, ...rest] = node.path;
  const f = obj.fields.get(name!);
  const subs = f ? compositeSubFields[f.type] : undefined;
  const ok = f && rest.length === 0 && (subs ? sub !== undefined && subs.includes(sub) : sub === undefined);
  if (!ok) throw new FilterError(`Invalid filter : ${obj.nameSingular} object doesn't have any "${node.path.join('.')}" field`);
  if (node.op === 'containsAny') throw new FilterError(`twenty emulator: the containsAny comparator is not implemented`);
  if (node.op === 'is' && node.value !== 'NULL' && node.value !== 'NOT_NULL') {
    throw new FilterError(`'filter' invalid for '${node.path.join('.')}[is]:${node.value}'. eg: field[is]:NULL or field[is]:NOT_NULL`);
  }
}

/**
 * Whether a predicate on deletedAt sits anywhere in the and/or/not tree: Twenty then lists
 * soft-deleted records too (GraphqlQueryParser.checkForDeletedAtFilter, which looks only through
 * conjunctions), so `deletedAt[is]:NOT_NULL` lists the trash.
 */
export function mentionsDeletedAt(node: FilterNode): boolean {
  if ('and' in node) return node.and.some(mentionsDeletedAt);
  if ('or' in node) return node.or.some(mentionsDeletedAt);
  if ('not' in node) return mentionsDeletedAt(node.not);
  return node.path[0] === 'deletedAt';
}

export function matches(node: FilterNode, record: Record<string, unknown>, obj: ObjectDef): boolean {
  if ('and' in node) return node.and.every((n) => matches(n, record, obj));
  if ('or' in node) return node.or.some((n) => matches(n, record, obj));
  if ('not' in node) return !matches(node.not, record, obj);
  const f = obj.fields.get(node.path[0]!)!;
  let v: unknown = record[f.name];
  if (node.path[1] !== undefined) v = v === null || v === undefined ? null : (v as Record<string, unknown>)[node.path[1]];
  if (node.op === 'is') return node.value === 'NULL' ? v === null || v === undefined : v !== null && v !== undefined;
  // SQL: a comparison with NULL is never true.
  if (v === null || v === undefined) return false;
  const norm = (x: string) => (f.type === 'UUID' || f.type === 'RELATION_ID' ? x.toLowerCase() : x);
  const s = norm(String(v));
  const want = node.value;
  switch (node.op) {
    case 'eq':
      return s === norm(want as string);
    case 'neq':
      return s !== norm(want as string);
    case 'in':
      return (want as string[]).map(norm).includes(s);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const c = compare(f, v, want as string);
      return node.op === 'gt' ? c > 0 : node.op === 'gte' ? c >= 0 : node.op === 'lt' ? c < 0 : c <= 0;
    }
    case 'startsWith':
      return s.startsWith(want as string);
    case 'endsWith':
      return s.endsWith(want as string);
    case 'like':
    case 'ilike':
      return likeRe(want as string, node.op === 'ilike').test(s);
    default:
      return false;
  }
}

function compare(f: FieldDef, stored: unknown, value: string): number {
  if (f.type === 'DATE_TIME') return Date.parse(String(stored)) - Date.parse(value);
  if (typeof stored === 'number') return stored - Number(value);
  const s = String(stored);
  return s < value ? -1 : s > value ? 1 : 0;
}

/** SQL LIKE: % any run, _ one character, the rest literal. */
function likeRe(pattern: string, insensitive: boolean): RegExp {
  const body = [...pattern].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, insensitive ? 'is' : 's');
}
