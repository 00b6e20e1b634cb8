/**
 * Filters: `{{ name | filter }}` or `{{ name | filter: "arg" }}`, applied left to right. A value is
 * a string or `undefined` (missing); every filter but `default` passes a missing value through, so
 * `{{first_name | capitalize | default: "there"}}` and `{{first_name | default: "there" | capitalize}}`
 * both work. A blank value, or one a filter leaves blank, counts as missing, so that a default
 * still applies and a blank never goes out silently; only an explicit `default: ""` may give an
 * empty result (the author asked for it).
 *
 * One registry: the parser checks names and argument counts against it (an unknown filter is a
 * syntax error at `sequence apply`), the renderer calls `apply`.
 */

export type FilterValue = string | undefined;

export interface FilterSpec {
  minArgs: number;
  maxArgs: number;
  /** Shown in error messages. */
  example: string;
  apply(value: FilterValue, args: readonly string[]): FilterValue;
}

const present = (v: FilterValue): v is string => v !== undefined && v.trim() !== '';
const map = (f: (v: string) => string) => (v: FilterValue) => {
  if (!present(v)) return undefined;
  const r = f(v);
  return present(r) ? r : undefined;
};

/** Upper-cases the first letter of each word, lower-cases the rest; a word starts after a space or a hyphen ("jean-luc" → "Jean-Luc"). */
function titlecase(v: string): string {
  let out = '';
  let start = true;
  for (const ch of v) {
    out += start ? ch.toUpperCase() : ch.toLowerCase();
    start = /[\s-]/u.test(ch);
  }
  return out;
}

/**
 * Upper-cases the first letter and leaves the rest alone. Unlike Liquid's capitalize, it does not
 * lower-case the rest: that would turn "McKinsey" into "Mckinsey" and "IBM" into "Ibm".
 */
function capitalize(v: string): string {
  const t = v.trimStart();
  const first = String.fromCodePoint(t.codePointAt(0)!);
  return first.toUpperCase() + t.slice(first.length);
}

/** The first word, without trailing punctuation: "Acme, Inc." → "Acme", "Jean Marc" → "Jean". */
function firstWord(v: string): string {
  const w = v.trim().split(/\s+/u)[0] ?? '';
  return w.replace(/[,;:.!?]+$/u, '');
}

export const filterSpecs: Readonly<Record<string, FilterSpec>> = {
  default: {
    minArgs: 1,
    maxArgs: 1,
    example: '{{first_name | default: "there"}}',
    apply: (v, args) => (present(v) ? v : args[0]),
  },
  capitalize: { minArgs: 0, maxArgs: 0, example: '{{first_name | capitalize}}', apply: map(capitalize) },
  titlecase: { minArgs: 0, maxArgs: 0, example: '{{company | titlecase}}', apply: map(titlecase) },
  lowercase: { minArgs: 0, maxArgs: 0, example: '{{company | lowercase}}', apply: map((v) => v.toLowerCase()) },
  uppercase: { minArgs: 0, maxArgs: 0, example: '{{country | uppercase}}', apply: map((v) => v.toUpperCase()) },
  first_word: { minArgs: 0, maxArgs: 0, example: '{{company | first_word}}', apply: map(firstWord) },
  trim: { minArgs: 0, maxArgs: 0, example: '{{title | trim}}', apply: map((v) => v.trim()) },
};

/** Runs a chain; the result is undefined when the value is missing at the end. */
export function applyFilters(value: FilterValue, filters: ReadonlyArray<{ name: string; args: readonly string[] }>): FilterValue {
  let v = present(value) ? value : undefined;
  for (const f of filters) v = filterSpecs[f.name]!.apply(v, f.args);
  return v;
}
