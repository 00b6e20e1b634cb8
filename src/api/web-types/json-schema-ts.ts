/**
 * TypeScript type text from the JSON Schema (draft 2020-12) that zod 4's `z.toJSONSchema` writes for
 * the API's route schemas: objects, records, arrays, tuples, unions, literals, nullables and `$ref`s
 * to named schemas. Pure. A keyword that would change the type and is not handled here (`if`,
 * `patternProperties`, …) throws: a generated type is exact or the generation fails, never a silent
 * `unknown`. Validation-only keywords (lengths, bounds, patterns, formats) do not change the type.
 */

export type JsonSchema = boolean | { [keyword: string]: unknown };

/** Keywords that only validate, annotate or document: they leave the TypeScript type as it is. */
const NO_TYPE_EFFECT = new Set([
  '$schema', '$defs', 'title', 'description', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly', 'id', '$id', '$comment',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'pattern', 'format', 'contentEncoding', 'contentMediaType',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties',
]);
const HANDLED = new Set(['type', 'properties', 'required', 'additionalProperties', 'propertyNames', 'items', 'prefixItems', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', '$ref', 'not']);

export interface EmitContext {
  /** The type name of a `$ref` (e.g. `#/$defs/Lead` → `Lead`). */
  ref(pointer: string): string;
}

/** The type of `schema`, its nested lines indented from `indent`. */
export function tsType(schema: JsonSchema, ctx: EmitContext, indent = ''): string {
  if (schema === true) return 'unknown';
  if (schema === false) return 'never';
  for (const k of Object.keys(schema)) {
    if (!HANDLED.has(k) && !NO_TYPE_EFFECT.has(k)) throw new Error(`JSON Schema keyword '${k}' is not supported by the type generator (src/api/web-types/json-schema-ts.ts)`);
  }
  const s = schema;
  if (typeof s.$ref === 'string') return ctx.ref(s.$ref);
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) return union(s.enum.map(literal));
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) return union(((s.anyOf ?? s.oneOf) as JsonSchema[]).map((x) => tsType(x, ctx, indent)));
  if (Array.isArray(s.allOf)) return (s.allOf as JsonSchema[]).map((x) => tsType(x, ctx, indent)).map((t) => (topLevel(t).union ? `(${t})` : t)).join(' & ');
  if (s.not !== undefined) {
    if (isEmptySchema(s.not)) return 'never';
    throw new Error(`JSON Schema 'not' other than {} is not supported by the type generator`);
  }
  if (Array.isArray(s.type)) return union((s.type as string[]).map((t) => ofType(t, s, ctx, indent)));
  if (typeof s.type === 'string') return ofType(s.type, s, ctx, indent);
  return 'unknown';
}

function ofType(type: string, s: { [keyword: string]: unknown }, ctx: EmitContext, indent: string): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return arrayType(s, ctx, indent);
    case 'object':
      return objectType(s, ctx, indent);
    default:
      throw new Error(`JSON Schema type '${type}' is not supported by the type generator`);
  }
}

function arrayType(s: { [keyword: string]: unknown }, ctx: EmitContext, indent: string): string {
  if (Array.isArray(s.prefixItems)) {
    const head = (s.prefixItems as JsonSchema[]).map((x) => tsType(x, ctx, indent));
    const rest = s.items === undefined || s.items === false ? [] : [`...${element(tsType(s.items as JsonSchema, ctx, indent))}[]`];
    return `[${[...head, ...rest].join(', ')}]`;
  }
  return `${element(tsType((s.items as JsonSchema | undefined) ?? true, ctx, indent))}[]`;
}

function objectType(s: { [keyword: string]: unknown }, ctx: EmitContext, indent: string): string {
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required ?? []) as string[]);
  const inner = `${indent}  `;
  const lines: string[] = [];
  for (const [name, p] of Object.entries(props)) {
    const doc = typeof p === 'object' && typeof p.description === 'string' ? p.description : null;
    if (doc) lines.push(`${inner}${docComment(doc, inner)}`);
    lines.push(`${inner}${propertyName(name)}${required.has(name) ? '' : '?'}: ${tsType(p, ctx, inner)};`);
  }
  const extra = s.additionalProperties;
  const open = extra !== undefined && extra !== false;
  if (open) {
    const keys = s.propertyNames === undefined ? 'string' : tsType(s.propertyNames as JsonSchema, ctx, indent);
    if (keys !== 'string') throw new Error(`records keyed by ${keys} are not supported by the type generator`);
    const values = tsType(extra as JsonSchema, ctx, inner);
    // A record with named properties too: every named one must fit the record's value type.
    if (lines.length === 0) return `Record<string, ${values}>`;
    lines.push(`${inner}[key: string]: ${values};`);
  }
  if (lines.length === 0) return 'Record<string, never>';
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function isEmptySchema(x: unknown): boolean {
  return x === true || (typeof x === 'object' && x !== null && Object.keys(x).length === 0);
}

function literal(v: unknown): string {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  throw new Error(`a literal ${JSON.stringify(v)} is not supported by the type generator`);
}

/** Members of a union need no parentheses: nothing generated binds looser than `|`. */
function union(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length === 0 ? 'never' : unique.join(' | ');
}

/** An array's element type, in parentheses when it is a union or an intersection (`(A | B)[]`). */
function element(t: string): string {
  const top = topLevel(t);
  return top.union || top.intersection ? `(${t})` : t;
}

/** Whether `|` or `&` occur in `t` outside brackets and string literals. */
function topLevel(t: string): { union: boolean; intersection: boolean } {
  let depth = 0;
  const found = { union: false, intersection: false };
  for (let i = 0; i < t.length; i++) {
    const c = t[i]!;
    if (c === '"') {
      // A JSON string literal: skip to its closing quote, past escaped ones.
      for (i++; i < t.length && t[i] !== '"'; i++) if (t[i] === '\\') i++;
    } else if ('{[(<'.includes(c)) depth++;
    else if ('}])>'.includes(c)) depth--;
    else if (depth === 0 && c === '|') found.union = true;
    else if (depth === 0 && c === '&') found.intersection = true;
  }
  return found;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function propertyName(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** A JSDoc comment for `text`, continued lines aligned at `indent`. */
export function docComment(text: string, indent: string): string {
  const lines = text.replace(/\*\//g, '*\\/').split(/\r?\n/);
  return lines.length === 1 ? `/** ${lines[0]} */` : `/**\n${lines.map((l) => `${indent} * ${l}`.trimEnd()).join('\n')}\n${indent} */`;
}
