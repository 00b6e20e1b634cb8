/**
 * Message-ID lists from Message-ID, In-Reply-To and References (RFC 5322 §3.6.4), as found in
 * the wild: folded over lines, with comments, without angle brackets, or with garbage around
 * them. Ids are returned with angle brackets ('<left@right>'), never containing white space or
 * a bracket inside.
 */

const MAX_ID_CHARS = 998; // a header line's limit (RFC 5322 §2.1.1): no real id is longer
const MAX_IDS = 500;

/** Removes (comments), nested ones too, that are not inside <…>. Linear in the input. */
function stripComments(value: string): string {
  let out = '';
  let depth = 0;
  let inId = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && depth > 0) {
      i++;
      continue;
    }
    if (!inId && c === '(') {
      depth++;
      continue;
    }
    if (depth > 0) {
      if (c === ')') depth--;
      if (depth === 0) out += ' ';
      continue;
    }
    if (c === '<') inId = true;
    else if (c === '>') inId = false;
    out += c;
  }
  return out;
}

function usable(id: string): boolean {
  if (id.length === 0 || id.length > MAX_ID_CHARS || /[\s<>()\x00-\x1f\x7f]/.test(id)) return false;
  // "left@right" with both sides, or an id without "@" that is more than a stray character.
  return id.includes('@') ? !id.startsWith('@') && !id.endsWith('@') : id.length >= 3;
}

/** Every id in the value, in order, deduplicated, at most 500. */
export function parseMessageIds(value: string | null | undefined): string[] {
  if (!value) return [];
  const clean = stripComments(value.replace(/\r?\n[ \t]*/g, ' '));
  const found: string[] = [];
  const bracketed = [...clean.matchAll(/<([^<>]*)>/g)].map((m) => m[1]!.replace(/\s+/g, ''));
  if (bracketed.length > 0) found.push(...bracketed);
  else {
    // No brackets at all: the bare "left@right" tokens some clients write.
    for (const token of clean.split(/[\s,;]+/)) if (/^[^@\s]+@[^@\s]+$/.test(token)) found.push(token.replace(/^"(.*)"$/, '$1'));
  }
  const out: string[] = [];
  const seen = new Set<string>();
  for (const id of found) {
    if (!usable(id)) continue;
    const withBrackets = `<${id}>`;
    if (seen.has(withBrackets)) continue;
    seen.add(withBrackets);
    out.push(withBrackets);
    if (out.length >= MAX_IDS) break;
  }
  return out;
}

export function parseMessageId(value: string | null | undefined): string | null {
  return parseMessageIds(value)[0] ?? null;
}
