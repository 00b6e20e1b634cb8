/**
 * The OData query options the Graph emulator serves on message lists: $filter with comparison
 * clauses joined by `and` (string literals with '' for a quote, true/false; `eq`, and `ge`/`gt`/
 * `le`/`lt` against a DateTimeOffset literal such as 2026-12-01T19:00:00Z), a property or a path
 * into a complex one (`from/emailAddress/address`, compared case-insensitively as addresses are),
 * $select, $top, $skip.
 * Anything else is refused with a 400 naming it, so that a connector using more than the emulator
 * knows fails loudly in tests.
 */
export type Filter = (json: Record<string, unknown>) => boolean;

export function parseFilter(src: string, known: ReadonlySet<string>): { ok: true; filter: Filter } | { ok: false; message: string } {
  const clauses: Array<{ path: string[]; op: Op; value: string | boolean | Date }> = [];
  let i = 0;
  const s = src.trim();
  const ws = () => {
    while (s[i] === ' ') i++;
  };
  for (;;) {
    ws();
    const prop = /^[A-Za-z][A-Za-z0-9]*(?:\/[A-Za-z][A-Za-z0-9]*)*/.exec(s.slice(i))?.[0];
    if (!prop) return { ok: false, message: `Invalid filter clause: ${src}` };
    i += prop.length;
    ws();
    const op = /^(eq|ge|gt|le|lt) /.exec(s.slice(i))?.[1] as Op | undefined;
    if (!op) return { ok: false, message: `Invalid filter clause (the emulator serves eq, ge, gt, le, lt): ${src}` };
    i += op.length + 1;
    ws();
    let value: string | boolean | Date;
    const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/.exec(s.slice(i))?.[0];
    if (instant) {
      value = new Date(instant);
      i += instant.length;
    } else if (s[i] === "'") {
      let out = '';
      i++;
      for (;;) {
        if (i >= s.length) return { ok: false, message: `Unterminated string literal in filter: ${src}` };
        if (s[i] === "'") {
          if (s[i + 1] === "'") {
            out += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        out += s[i++];
      }
      value = out;
    } else if (s.startsWith('true', i) || s.startsWith('false', i)) {
      value = s.startsWith('true', i);
      i += value ? 4 : 5;
    } else {
      return { ok: false, message: `Invalid filter literal: ${src}` };
    }
    const head = prop.split('/')[0]!;
    if (!known.has(head)) return { ok: false, message: `Could not find a property named '${head}' on type 'microsoft.graph.message'.` };
    if (op !== 'eq' && !(value instanceof Date)) return { ok: false, message: `Invalid filter clause (the emulator compares with ${op} only against a DateTimeOffset): ${src}` };
    clauses.push({ path: prop.split('/'), op, value });
    ws();
    if (i >= s.length) break;
    if (!s.startsWith('and ', i)) return { ok: false, message: `Invalid filter clause (the emulator serves 'and' only): ${src}` };
    i += 4;
  }
  return { ok: true, filter: (json) => clauses.every((c) => holds(at(json, c.path), c)) };
}

type Op = 'eq' | 'ge' | 'gt' | 'le' | 'lt';

function at(json: Record<string, unknown>, path: string[]): unknown {
  let v: unknown = json;
  for (const p of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

function holds(v: unknown, c: { path: string[]; op: Op; value: string | boolean | Date }): boolean {
  if (c.value instanceof Date) {
    const t = typeof v === 'string' ? Date.parse(v) : NaN;
    if (Number.isNaN(t)) return false;
    const want = c.value.getTime();
    return c.op === 'eq' ? t === want : c.op === 'ge' ? t >= want : c.op === 'gt' ? t > want : c.op === 'le' ? t <= want : t < want;
  }
  if (typeof c.value === 'string' && c.path[c.path.length - 1] === 'address') return typeof v === 'string' && v.toLowerCase() === c.value.toLowerCase();
  return v === c.value;
}

export function parseSelect(src: string | undefined, known: ReadonlySet<string>): { ok: true; props: string[] | null } | { ok: false; message: string } {
  if (src === undefined || src.trim() === '') return { ok: true, props: null };
  const props = src.split(',').map((p) => p.trim());
  for (const p of props) if (!known.has(p)) return { ok: false, message: `Could not find a property named '${p}' on type 'microsoft.graph.message'.` };
  return { ok: true, props };
}
