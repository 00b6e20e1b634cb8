import { filterSpecs } from './filters.ts';

/**
 * The template language of email steps, parsed once into a small tree:
 *
 *   {{first_name}}                         a variable (names: variables.ts)
 *   {{first_name | default: "there"}}      filters, applied left to right (filters.ts)
 *   {Hi|Hello|Hey {{first_name}}}          spintax: one option is chosen per enrollment and step;
 *                                          options may hold variables and nested groups
 *   \{  \}  \|  \\                         a literal brace, bar or backslash
 *
 * Rules chosen so that a typo can never reach a prospect as literal template text:
 * - `{{` always opens a variable. An option that starts with a nested group needs a character
 *   before it (`{ {a|b}|c}`), because `{{a|b}|c}` cannot be told apart from a variable.
 * - A group needs at least two options. `{first_name}` is an error (it is almost always a
 *   variable with one brace missing), and so is any lone `{` or `}`: literal braces are escaped.
 * - A `|` outside a group is plain text ("Acme | Sales"); inside one it separates options.
 * - A filter argument is a quoted string ("..." or '...') and may not contain braces, so a
 *   default can never put `{{` into the output.
 *
 * Parsing never throws: any input gives a tree or one syntax error with its line and column.
 */

export interface Pos {
  offset: number;
  line: number;
  column: number;
}

/** Nodes keep their offset only; line and column are computed when a problem is reported. */
export interface FilterCall {
  name: string;
  args: string[];
  at: number;
}

export type TemplateNode =
  | { kind: 'text'; value: string }
  | { kind: 'var'; path: string[]; source: string; filters: FilterCall[]; at: number }
  | { kind: 'spin'; options: TemplateNode[][]; at: number };

export type ParseResult = { ok: true; nodes: TemplateNode[] } | { ok: false; reason: string; at: Pos };

/** Deeper nesting than this is refused: no real template needs it, and it bounds the recursion. */
export const MAX_GROUP_DEPTH = 16;
/** Filters after one variable; a longer chain is a mistake, and the bound keeps rendering cheap. */
const MAX_FILTERS = 8;

class SyntaxProblem {
  constructor(
    readonly reason: string,
    readonly offset: number,
  ) {}
}

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;

export function parseTemplate(text: string): ParseResult {
  if (typeof text !== 'string') return { ok: false, reason: 'the template is not text', at: { offset: 0, line: 1, column: 1 } };
  const p = new Parser(text);
  try {
    const nodes = p.sequence(0, null);
    return { ok: true, nodes };
  } catch (e) {
    if (e instanceof SyntaxProblem) return { ok: false, reason: e.reason, at: positionOf(text, e.offset) };
    throw e;
  }
}

/** Line and column (1-based, counted in UTF-16 units like editors do) of an offset. */
export function positionOf(text: string, offset: number): Pos {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset, line, column: offset - lineStart + 1 };
}

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  /** Nodes up to the end, or (inside a group) up to the `|` or `}` that ends this option. */
  sequence(depth: number, groupStart: number | null): TemplateNode[] {
    const out: TemplateNode[] = [];
    let text = '';
    const flush = () => {
      if (text) out.push({ kind: 'text', value: text });
      text = '';
    };
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === '\\' && this.i + 1 < s.length && '{}|\\'.includes(s[this.i + 1]!)) {
        text += s[this.i + 1];
        this.i += 2;
      } else if (c === '{' && s[this.i + 1] === '{') {
        flush();
        out.push(this.variableExplained());
      } else if (c === '{') {
        flush();
        out.push(this.group(depth + 1));
      } else if (c === '}') {
        if (groupStart !== null) break;
        throw new SyntaxProblem(
          s[this.i + 1] === '}' ? "'}}' without a matching '{{'" : "'}' without a matching '{' (write \\} for a literal brace)",
          this.i,
        );
      } else if (c === '|' && groupStart !== null) {
        break;
      } else {
        text += c;
        this.i++;
      }
    }
    flush();
    return out;
  }

  private group(depth: number): TemplateNode {
    const start = this.i;
    if (depth > MAX_GROUP_DEPTH) throw new SyntaxProblem(`spintax nested more than ${MAX_GROUP_DEPTH} deep`, start);
    this.i++; // '{'
    const options: TemplateNode[][] = [this.sequence(depth, start)];
    while (this.s[this.i] === '|') {
      this.i++;
      options.push(this.sequence(depth, start));
    }
    if (this.s[this.i] !== '}') {
      throw new SyntaxProblem("spintax group '{' is never closed with '}' (write \\{ for a literal brace)", start);
    }
    this.i++;
    if (options.length < 2) {
      const inner = this.s.slice(start + 1, this.i - 1).trim();
      if (/^[A-Za-z_][A-Za-z0-9_.]*$/.test(inner)) {
        throw new SyntaxProblem(`'{${inner}}' has single braces: write {{${inner}}} for a variable`, start);
      }
      throw new SyntaxProblem("a spintax group needs at least two options separated by '|' (write \\{ and \\} for literal braces)", start);
    }
    return { kind: 'spin', options, at: start };
  }

  /**
   * A variable; when it does not parse, two common mistakes get their own message: a variable
   * closed with a single '}', and a spintax option that starts with a nested group ('{{a|b}|c}').
   */
  private variableExplained(): TemplateNode {
    const start = this.i;
    try {
      return this.variable();
    } catch (e) {
      if (!(e instanceof SyntaxProblem)) throw e;
      const close = this.s.indexOf('}', start + 2);
      if (close < 0 || this.s[close + 1] === '}' || this.s.slice(start + 2, close).includes('{')) throw e;
      if (this.s[close + 1] === '|') {
        throw new SyntaxProblem("'{{' opens a variable; to start a spintax option with a nested group, put a character between the braces ('{ {a|b}|c}')", start);
      }
      throw new SyntaxProblem(`'{{${this.s.slice(start + 2, close).trim()}}' is closed with a single '}': write '}}'`, start);
    }
  }

  private variable(): TemplateNode {
    const s = this.s;
    const start = this.i;
    this.i += 2;
    this.ws();
    const path: string[] = [];
    for (;;) {
      const id = this.ident();
      if (id === null) {
        if (this.i >= s.length) throw new SyntaxProblem("'{{' is never closed with '}}'", start);
        if (s.startsWith('}}', this.i) && path.length === 0) throw new SyntaxProblem("'{{}}' names no variable", start);
        if (s[this.i] === '{') throw new SyntaxProblem("'{{' opens a variable; to start a spintax option with a nested group, put a character between the braces ('{ {a|b}|c}')", start);
        throw new SyntaxProblem(`expected a variable name, found '${s[this.i]}'`, this.i);
      }
      path.push(id);
      if (s[this.i] !== '.') break;
      this.i++;
    }
    const source = path.join('.');
    const filters: FilterCall[] = [];
    this.ws();
    while (s[this.i] === '|') {
      this.i++;
      this.ws();
      const fstart = this.i;
      const name = this.ident();
      if (name === null) throw new SyntaxProblem(`expected a filter name after '|' in {{${source}}}`, this.i);
      const spec = filterSpecs[name.toLowerCase()];
      if (!spec) throw new SyntaxProblem(`unknown filter '${name}' (known: ${Object.keys(filterSpecs).join(', ')})`, fstart);
      this.ws();
      const args: string[] = [];
      if (s[this.i] === ':') {
        this.i++;
        this.ws();
        args.push(this.literal(name));
        this.ws();
        while (s[this.i] === ',') {
          this.i++;
          this.ws();
          args.push(this.literal(name));
          this.ws();
        }
      }
      if (args.length < spec.minArgs || args.length > spec.maxArgs) {
        const want = spec.minArgs === spec.maxArgs ? `${spec.minArgs}` : `${spec.minArgs}-${spec.maxArgs}`;
        const example = spec.maxArgs > 0 ? ` (e.g. ${spec.example})` : '';
        throw new SyntaxProblem(`filter '${name}' takes ${want} argument${spec.maxArgs === 1 ? '' : 's'}, got ${args.length}${example}`, fstart);
      }
      filters.push({ name: name.toLowerCase(), args, at: fstart });
      if (filters.length > MAX_FILTERS) throw new SyntaxProblem(`more than ${MAX_FILTERS} filters on one variable`, fstart);
    }
    if (!s.startsWith('}}', this.i)) {
      if (this.i >= s.length) throw new SyntaxProblem("'{{' is never closed with '}}'", start);
      throw new SyntaxProblem(`unexpected '${s[this.i]}' in {{${source}}} (expected '|' or '}}')`, this.i);
    }
    this.i += 2;
    return { kind: 'var', path, source, filters, at: start };
  }

  private literal(filter: string): string {
    const s = this.s;
    const q = s[this.i];
    if (q !== '"' && q !== "'") {
      throw new SyntaxProblem(`the argument of '${filter}' must be quoted, e.g. ${filterSpecs[filter.toLowerCase()]?.example ?? `${filter}: "text"`}`, this.i);
    }
    const start = this.i;
    this.i++;
    let v = '';
    while (this.i < s.length && s[this.i] !== q) {
      const c = s[this.i]!;
      const escaped = c === '\\' && this.i + 1 < s.length;
      const ch = escaped ? s[this.i + 1]! : c;
      if (ch === '\n' || ch === '\r') break;
      if (ch === '{' || ch === '}') throw new SyntaxProblem(`unterminated string in the '${filter}' filter (an argument may not contain braces)`, start);
      v += ch;
      this.i += escaped ? 2 : 1;
    }
    if (s[this.i] !== q) throw new SyntaxProblem(`unterminated string in the '${filter}' filter`, start);
    this.i++;
    return v;
  }

  private ident(): string | null {
    IDENT.lastIndex = this.i;
    const m = IDENT.exec(this.s);
    if (!m) return null;
    this.i += m[0].length;
    return m[0];
  }

  private ws(): void {
    while (this.i < this.s.length && (this.s[this.i] === ' ' || this.s[this.i] === '\t')) this.i++;
  }
}
