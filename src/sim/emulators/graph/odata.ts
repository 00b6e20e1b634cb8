/**
 * The OData query options the Graph emulator serves on message lists: $filter with `eq` clauses
 * joined by `and` (string literals with '' for a quote, true/false), $select, $top, $skip.
 * Anything else is refused with a 400 naming it, so that a connector using more than the emulator
 * knows fails loudly in tests.
 */
export type Filter = (json: Record<string, unknown>) => boolean;

export function parseFilter(src: string, known: ReadonlySet<string>): { ok: true; filter: Filter } | { ok: false; message: string } {
  const clauses: Array<{ prop: string; value: string | boolean }> = [];
  let i = 0;
  const s = src.trim();
  const ws = () => {
    while (s[i] === ' ') i++;
  };
  for (;;) {
    ws();
    const prop = /^[A-Za-z][A-Za-z0-9]*/.exec(s.slice(i))?.[0];
    if (!prop) return { ok: false, message: `Invalid filter clause: ${src}` };
    i += prop.length;
    ws();
    if (!s.startsWith('eq ', i)) return { ok: false, message: `Invalid filter clause (the emulator serves 'eq' only): ${src}` };
    i += 3;
    ws();
    let value: string | boolean;
    if (s[i] === "'") {
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
    if (!known.has(prop)) return { ok: false, message: `Could not find a property named '${prop}' on type 'microsoft.graph.message'.` };
    clauses.push({ prop, value });
    ws();
    if (i >= s.length) break;
    if (!s.startsWith('and ', i)) return { ok: false, message: `Invalid filter clause (the emulator serves 'and' only): ${src}` };
    i += 4;
  }
  return { ok: true, filter: (json) => clauses.every((c) => json[c.prop] === c.value) };
}

export function parseSelect(src: string | undefined, known: ReadonlySet<string>): { ok: true; props: string[] | null } | { ok: false; message: string } {
  if (src === undefined || src.trim() === '') return { ok: true, props: null };
  const props = src.split(',').map((p) => p.trim());
  for (const p of props) if (!known.has(p)) return { ok: false, message: `Could not find a property named '${p}' on type 'microsoft.graph.message'.` };
  return { ok: true, props };
}
