import type { EmulatorReply } from '../server.ts';
import { sfError, sfErrors } from './errors.ts';
import { isSObjectName, type FieldDef, type SObjectName } from './schema.ts';
import type { SalesforceStore, SRecord } from './store.ts';

/**
 * The subset of SOQL (SOQL and SOSL Reference) the CRM connector sends, parsed by hand:
 *
 *   SELECT field, Rel.field, … FROM Object
 *   [WHERE cond AND cond …]          cond: field IN (lit, …) | field = != < <= > >= lit
 *   [ORDER BY field [ASC|DESC], …]
 *   [LIMIT n]
 *
 * Literals: 'strings' (backslash escapes), true/false/null, integers, and date / dateTime
 * literals unquoted (2026-01-05, 2026-01-05T09:30:00.000Z or with ±hh:mm). String comparisons are
 * case-insensitive, as SOQL's are; ids compare by their 15-character case-sensitive form. Anything
 * else — OR, NOT, LIKE, subqueries, functions, GROUP BY, OFFSET, TYPEOF, a polymorphic path — is
 * MALFORMED_QUERY, a loud gap rather than a wrong answer. An unknown object is INVALID_TYPE, an
 * unknown field INVALID_FIELD; a dateTime literal in quotes and a filter on a long text area are
 * refused as Salesforce refuses them.
 *
 * Deleted records are left out, except through queryAll while they are in the Recycle Bin.
 */

type Literal = { kind: 'string'; value: string } | { kind: 'number'; value: number } | { kind: 'boolean'; value: boolean } | { kind: 'null' } | { kind: 'datetime'; value: number; text: string } | { kind: 'date'; value: string };
type Op = '=' | '!=' | '<' | '<=' | '>' | '>=';
interface Cond {
  field: FieldDef;
  op: Op | 'IN';
  values: Literal[];
}
interface SelectItem {
  /** A direct field, or a relationship and the field of the object it leads to. */
  field: FieldDef;
  via?: { rel: FieldDef; target: SObjectName };
}
export interface SoqlQuery {
  object: SObjectName;
  select: SelectItem[];
  where: Cond[];
  orderBy: Array<{ field: FieldDef; desc: boolean }>;
  limit: number | null;
}

type Token = { t: 'word' | 'string' | 'punct' | 'literal'; v: string; col: number };

const punct = ['<=', '>=', '!=', '<>', '(', ')', ',', '=', '<', '>'];

function tokenize(q: string): Token[] | { error: string } {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const col = i + 1;
    if (c === "'") {
      let s = '';
      i++;
      for (;;) {
        if (i >= q.length) return { error: `ERROR at Row:1:Column:${col}\nunterminated string literal` };
        const d = q[i]!;
        if (d === '\\') {
          const e = q[i + 1];
          const map: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', '"': '"', "'": "'", '\\': '\\', _: '\\_', '%': '\\%' };
          if (e === undefined || !(e in map)) return { error: `ERROR at Row:1:Column:${i + 1}\nInvalid string literal '\\${e ?? ''}'. Illegal character sequence '\\${e ?? ''}' in string literal.` };
          s += map[e];
          i += 2;
          continue;
        }
        if (d === "'") {
          i++;
          break;
        }
        s += d;
        i++;
      }
      out.push({ t: 'string', v: s, col });
      continue;
    }
    const p = punct.find((x) => q.startsWith(x, i));
    if (p) {
      out.push({ t: 'punct', v: p === '<>' ? '!=' : p, col });
      i += p.length;
      continue;
    }
    const m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(q.slice(i)) ?? null;
    if (m) {
      out.push({ t: 'word', v: m[0], col });
      i += m[0].length;
      continue;
    }
    const lit = /^-?[0-9][0-9A-Za-z:.+-]*/.exec(q.slice(i));
    if (lit) {
      out.push({ t: 'literal', v: lit[0], col });
      i += lit[0].length;
      continue;
    }
    return { error: `ERROR at Row:1:Column:${col}\nunexpected token: '${c}'` };
  }
  return out;
}

const kw = (tok: Token | undefined, word: string) => tok?.t === 'word' && tok.v.toUpperCase() === word;
const datetimeRe = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

class Refusal {
  constructor(readonly reply: EmulatorReply) {}
}

/** Parses `q` against the org's schema: the query, or the answer Salesforce gives. */
export function parseSoql(store: SalesforceStore, q: string): SoqlQuery | EmulatorReply {
  const tokens = tokenize(q);
  if (!Array.isArray(tokens)) return sfErrors.malformedQuery(tokens.error);
  let i = 0;
  const peek = () => tokens[i];
  const unexpected = (): never => {
    const t = tokens[i];
    throw new Refusal(sfErrors.malformedQuery(t ? `ERROR at Row:1:Column:${t.col}\nunexpected token: '${t.v}'` : `ERROR at Row:1:Column:${q.length + 1}\nunexpected token: <EOF>`));
  };
  const expectKw = (w: string) => (kw(peek(), w) ? i++ : unexpected());
  try {
    expectKw('SELECT');
    const paths: Token[] = [];
    for (;;) {
      const t = peek();
      if (t?.t !== 'word' || ['FROM', 'SELECT'].includes(t.v.toUpperCase())) unexpected();
      paths.push(t!);
      i++;
      if (peek()?.v === ',') {
        i++;
        continue;
      }
      break;
    }
    expectKw('FROM');
    const objTok = peek();
    if (objTok?.t !== 'word') unexpected();
    i++;
    const objectName = sobjectCase(objTok!.v);
    if (!objectName) return sfErrors.invalidType(objTok!.v);
    const object = objectName;
    const fieldOf = (name: string): FieldDef => {
      const f = store.schema.field(object, name);
      if (!f) throw new Refusal(sfErrors.invalidField(name, object));
      return f;
    };
    const select = paths.map((p): SelectItem => {
      const parts = p.v.split('.');
      if (parts.length === 1) return { field: fieldOf(parts[0]!) };
      if (parts.length !== 2) throw new Refusal(sfErrors.malformedQuery(`ERROR at Row:1:Column:${p.col}\nrelationship paths deeper than one level are not served by the emulator: ${p.v}`));
      const rel = store.schema.relationship(object, parts[0]!);
      if (!rel) throw new Refusal(sfErrors.invalidField(p.v, object));
      const f = store.schema.field(rel.target, parts[1]!);
      if (!f) throw new Refusal(sfErrors.invalidField(p.v, object));
      return { field: f, via: { rel: rel.field, target: rel.target } };
    });

    const where: Cond[] = [];
    if (kw(peek(), 'WHERE')) {
      i++;
      for (;;) {
        const ft = peek();
        if (ft?.t !== 'word') unexpected();
        i++;
        const field = fieldOf(ft!.v);
        if (field.type === 'textarea' && (field.length ?? 0) > 255) {
          return sfError(400, 'INVALID_FIELD', `field '${field.name}' can not be filtered in a query call`);
        }
        if (kw(peek(), 'IN')) {
          i++;
          if (peek()?.v !== '(') unexpected();
          i++;
          const values: Literal[] = [];
          for (;;) {
            values.push(literal(field));
            if (peek()?.v === ',') {
              i++;
              continue;
            }
            if (peek()?.v === ')') {
              i++;
              break;
            }
            unexpected();
          }
          where.push({ field, op: 'IN', values });
        } else {
          const opTok = peek();
          if (opTok?.t !== 'punct' || ['(', ')', ','].includes(opTok.v)) unexpected();
          i++;
          where.push({ field, op: opTok!.v as Op, values: [literal(field)] });
        }
        if (kw(peek(), 'AND')) {
          i++;
          continue;
        }
        break;
      }
    }

    const orderBy: SoqlQuery['orderBy'] = [];
    if (kw(peek(), 'ORDER')) {
      i++;
      expectKw('BY');
      for (;;) {
        const ft = peek();
        if (ft?.t !== 'word') unexpected();
        i++;
        const field = fieldOf(ft!.v);
        let desc = false;
        if (kw(peek(), 'ASC')) i++;
        else if (kw(peek(), 'DESC')) {
          desc = true;
          i++;
        }
        orderBy.push({ field, desc });
        if (peek()?.v === ',') {
          i++;
          continue;
        }
        break;
      }
    }
    let limit: number | null = null;
    if (kw(peek(), 'LIMIT')) {
      i++;
      const n = peek();
      if (n?.t !== 'literal' || !/^\d+$/.test(n.v)) unexpected();
      limit = Number(n!.v);
      i++;
    }
    if (i < tokens.length) unexpected();
    return { object, select, where, orderBy, limit };
  } catch (e) {
    if (e instanceof Refusal) return e.reply;
    throw e;
  }

  function literal(field: FieldDef): Literal {
    const t = peek();
    if (!t) return unexpected();
    i++;
    if (t.t === 'string') {
      if (field.type === 'datetime' || field.type === 'date') {
        throw new Refusal(sfError(400, 'INVALID_FIELD', `value of filter criterion for field '${field.name}' must be of type ${field.type === 'date' ? 'date' : 'dateTime'} and should not be enclosed in quotes`));
      }
      return { kind: 'string', value: t.v };
    }
    if (t.t === 'word') {
      const w = t.v.toLowerCase();
      if (w === 'true' || w === 'false') return { kind: 'boolean', value: w === 'true' };
      if (w === 'null') return { kind: 'null' };
      i--;
      return unexpected();
    }
    if (t.t === 'literal') {
      if (/^-?\d+$/.test(t.v)) return { kind: 'number', value: Number(t.v) };
      if (/^\d{4}-\d{2}-\d{2}$/.test(t.v)) return { kind: 'date', value: t.v };
      const m = datetimeRe.exec(t.v);
      if (m) {
        const ms = Date.parse(t.v);
        if (!Number.isNaN(ms)) return { kind: 'datetime', value: ms, text: t.v };
      }
    }
    i--;
    return unexpected();
  }
}

function sobjectCase(name: string): SObjectName | undefined {
  const n = name.toLowerCase();
  const hit = ['User', 'Account', 'Contact', 'Lead', 'Task', 'Opportunity', 'OpportunityContactRole'].find((o) => o.toLowerCase() === n);
  return hit && isSObjectName(hit) ? hit : undefined;
}

/** How long a deleted record stays in the Recycle Bin, where queryAll still finds it (documented: 15 days). */
export const recycleBinMs = 15 * 24 * 3_600_000;

/**
 * Runs a parsed query: the matching records, in order, each shaped as the REST API answers them.
 * `allRows` (the queryAll resource) includes deleted records still in the Recycle Bin.
 */
export function runSoql(store: SalesforceStore, q: SoqlQuery, apiBase: string, allRows: { now: number } | null = null): Array<Record<string, unknown>> {
  const visible = (r: SRecord) => r.IsDeleted !== true || (allRows !== null && parseSfDateTime(r.SystemModstamp) > allRows.now - recycleBinMs);
  let rows = store.all(q.object).filter((r) => visible(r) && q.where.every((c) => matches(r, c)));
  if (q.orderBy.length) {
    rows = [...rows].sort((a, b) => {
      for (const o of q.orderBy) {
        const d = compare(a[o.field.name], b[o.field.name], o.field);
        if (d !== 0) return o.desc ? -d : d;
      }
      return 0;
    });
  }
  if (q.limit !== null) rows = rows.slice(0, q.limit);
  return rows.map((r) => shape(store, q, r, apiBase));
}

function shape(store: SalesforceStore, q: SoqlQuery, r: SRecord, apiBase: string): Record<string, unknown> {
  const out: Record<string, unknown> = { attributes: { type: q.object, url: `${apiBase}/sobjects/${q.object}/${r.Id}` } };
  for (const s of q.select) {
    if (!s.via) {
      out[s.field.name] = r[s.field.name] ?? null;
      continue;
    }
    const relName = s.via.rel.relationshipName!;
    const targetId = r[s.via.rel.name];
    const target = typeof targetId === 'string' ? store.get(s.via.target, targetId) : undefined;
    if (!target) {
      out[relName] = null;
      continue;
    }
    const nested = (out[relName] as Record<string, unknown> | undefined) ?? { attributes: { type: s.via.target, url: `${apiBase}/sobjects/${s.via.target}/${target.Id}` } };
    nested[s.field.name] = target[s.field.name] ?? null;
    out[relName] = nested;
  }
  return out;
}

function matches(r: SRecord, c: Cond): boolean {
  const v = r[c.field.name];
  if (c.op === 'IN') return c.values.some((l) => compareLiteral(v, l, c.field) === 0);
  const l = c.values[0]!;
  if (l.kind === 'null') return c.op === '=' ? v === null || v === undefined : c.op === '!=' ? v !== null && v !== undefined : false;
  if (v === null || v === undefined) return c.op === '!=';
  const d = compareLiteral(v, l, c.field);
  switch (c.op) {
    case '=':
      return d === 0;
    case '!=':
      return d !== 0;
    case '<':
      return d < 0;
    case '<=':
      return d <= 0;
    case '>':
      return d > 0;
    case '>=':
      return d >= 0;
  }
}

function compareLiteral(v: unknown, l: Literal, f: FieldDef): number {
  if (l.kind === 'null') return v === null || v === undefined ? 0 : 1;
  if (l.kind === 'datetime') return Math.sign(parseSfDateTime(v) - l.value);
  if (l.kind === 'date' || l.kind === 'string') return compare(v, l.value, f);
  if (l.kind === 'number') return Math.sign(Number(v) - l.value);
  return v === l.value ? 0 : 1;
}

function compare(a: unknown, b: unknown, f: FieldDef): number {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : -1;
  if (b === null || b === undefined) return 1;
  if (f.type === 'datetime') return Math.sign(parseSfDateTime(a) - parseSfDateTime(b));
  if (f.type === 'int' || f.type === 'boolean') return Math.sign(Number(a) - Number(b));
  const [x, y] = f.type === 'id' || f.type === 'reference' ? [String(a).slice(0, 15), String(b).slice(0, 15)] : [String(a).toLowerCase(), String(b).toLowerCase()];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `2026-01-05T09:30:00.000+0000` (what the store keeps) or an ISO instant. */
export function parseSfDateTime(v: unknown): number {
  return Date.parse(String(v).replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
}
