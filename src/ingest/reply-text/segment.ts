import { boundaryAt } from './quote-headers.ts';
import { closingSignature, delimiterSignature, isMobileSignature, mobileSignature, senderSignature } from './signature.ts';

/**
 * Classifies each line of a plain-text reply as new text, quoted history or signature.
 *
 * Rules, in order:
 *  1. The first quote boundary outside `>` lines: an attribution ("On … wrote:", wrapped over up
 *     to 3 lines, many languages) or an Outlook/forward block. After a block, everything is history.
 *  2. Lines starting with `>` are history wherever they are.
 *  3. After an attribution followed by `>` lines, unquoted paragraphs are inline answers and stay
 *     new text, except a line wedged between two `>` lines with no blank line (a quoted line that
 *     the client re-wrapped), and except what follows a further boundary.
 *  4. In the new text before the boundary, the earliest signature start (delimiter, mobile line,
 *     closing phrase, sender's name) begins the signature; after a mobile line the next
 *     paragraphs are headerless history (Android and iOS clients quote without a header).
 *  5. After the boundary, a delimiter or mobile line in the answers begins a trailing signature.
 */

export type LineKind = 'text' | 'quoted' | 'signature';

export interface Segmented {
  lines: string[];
  kinds: LineKind[];
}

const QUOTED = /^\s*>/;
const MAX_LINES = 20_000;

function isBlank(l: string | undefined): boolean {
  return l === undefined || l.trim() === '';
}

export function segmentPlain(body: string, from?: string | null): Segmented {
  let lines = body.replace(/\r\n?/g, '\n').split('\n');
  // Beyond this many lines the rest can only be history or attachments pasted inline; the cap
  // keeps the per-line scans bounded on hostile input.
  if (lines.length > MAX_LINES) lines = lines.slice(0, MAX_LINES);
  const n = lines.length;
  const kinds: LineKind[] = new Array<LineKind>(n).fill('text');
  for (let i = 0; i < n; i++) if (QUOTED.test(lines[i]!)) kinds[i] = 'quoted';

  let boundary = -1;
  let span = 0;
  let blockKind: 'attribution' | 'block' = 'block';
  for (let i = 0; i < n; i++) {
    if (kinds[i] === 'quoted') continue;
    const b = boundaryAt(lines, i);
    if (b) {
      boundary = i;
      span = b.span;
      blockKind = b.kind;
      break;
    }
  }

  if (boundary >= 0) {
    for (let i = boundary; i < boundary + span; i++) kinds[i] = 'quoted';
    // The rule a client draws above the history ("-----", "_____", an HTML <hr>) belongs to it.
    for (let i = boundary - 1; i >= 0 && (isBlank(lines[i]) || /^\s*[-_=*]{3,}\s*$/.test(lines[i]!)); i--) {
      if (!isBlank(lines[i])) kinds[i] = 'quoted';
    }
    let next = boundary + span;
    while (next < n && isBlank(lines[next])) next++;
    const inlineAnswers = blockKind === 'attribution' && next < n && QUOTED.test(lines[next]!);
    if (!inlineAnswers) {
      for (let i = boundary + span; i < n; i++) kinds[i] = 'quoted';
    } else {
      markAnswers(lines, kinds, boundary + span);
    }
  }

  const end = boundary >= 0 ? boundary : n;
  markSignature(lines, kinds, 0, end, from);
  return { lines, kinds };
}

/** Rule 3 and 5: after an attribution with `>` history, which unquoted lines are answers. */
function markAnswers(lines: string[], kinds: LineKind[], from: number): void {
  const n = lines.length;
  let i = from;
  while (i < n) {
    if (kinds[i] === 'quoted' || isBlank(lines[i])) {
      i++;
      continue;
    }
    let e = i;
    while (e + 1 < n && kinds[e + 1] !== 'quoted' && !isBlank(lines[e + 1])) e++;
    const wedged = i > 0 && QUOTED.test(lines[i - 1]!) && e + 1 < n && QUOTED.test(lines[e + 1]!);
    if (wedged) {
      for (let k = i; k <= e; k++) kinds[k] = 'quoted';
      i = e + 1;
      continue;
    }
    for (let k = i; k <= e; k++) {
      if (boundaryAt(lines, k)) {
        for (let r = k; r < n; r++) kinds[r] = 'quoted';
        return;
      }
      if (lines[k]!.length > 200) continue;
      if (/^\s*(?:--|__)\s*$/.test(lines[k]!) || /^\s*_{10,}\s*$/.test(lines[k]!) || isMobileSignature(lines[k]!)) {
        for (let r = k; r < n; r++) if (kinds[r] === 'text') kinds[r] = 'signature';
        return;
      }
    }
    i = e + 1;
  }
}

/** Rule 4, on lines [start, end). */
function markSignature(lines: string[], kinds: LineKind[], start: number, end: number, from?: string | null): void {
  const region = lines.slice(start, end);
  const candidates = [delimiterSignature(region), closingSignature(region), senderSignature(region, from)].filter((x) => x >= 0);
  const mobile = mobileSignature(region);
  const sig = candidates.length ? Math.min(...candidates) : -1;
  if (mobile >= 0 && (sig < 0 || mobile < sig)) {
    // The mobile line's paragraph is the signature; what follows it is history quoted without a header.
    let p = mobile;
    while (p + 1 < region.length && !isBlank(region[p + 1])) p++;
    for (let k = mobile; k <= p; k++) if (kinds[start + k] === 'text') kinds[start + k] = 'signature';
    if (region.slice(p + 1).some((l) => !isBlank(l))) for (let k = p + 1; k < region.length; k++) kinds[start + k] = 'quoted';
    return;
  }
  if (sig < 0) return;
  for (let k = sig; k < region.length; k++) if (kinds[start + k] === 'text') kinds[start + k] = 'signature';
}

function runs(seg: Segmented, keep: (k: LineKind) => boolean): string[][] {
  const out: string[][] = [];
  let cur: string[] | null = null;
  for (let i = 0; i < seg.lines.length; i++) {
    const l = seg.lines[i]!;
    // Blank lines belong to whatever run they sit in; they neither open nor close one.
    if (isBlank(l) && cur) {
      cur.push(l);
      continue;
    }
    if (keep(seg.kinds[i]!) && !isBlank(l)) {
      if (!cur) {
        cur = [];
        out.push(cur);
      }
      cur.push(l);
    } else if (!isBlank(l)) cur = null;
  }
  return out.map((r) => {
    while (r.length && isBlank(r[r.length - 1])) r.pop();
    return r;
  });
}

/** The new text: answer paragraphs joined by a blank line, trailing spaces dropped. */
export function newText(seg: Segmented): string {
  return runs(seg, (k) => k === 'text')
    .map((r) => r.map((l) => l.trimEnd()).join('\n'))
    .join('\n\n')
    .trimEnd();
}

/** New text with its signature, lines untouched: what a quotation-only extractor (talon) returns. */
export function replyWithSignature(seg: Segmented): string {
  return runs(seg, (k) => k !== 'quoted').map((r) => r.join('\n')).join('\n\n').trim();
}

export function linesOf(seg: Segmented, kind: LineKind): string {
  return seg.lines.filter((_, i) => seg.kinds[i] === kind).join('\n');
}

export interface Fragment {
  content: string;
  quoted: boolean;
  signature: boolean;
  hidden: boolean;
}

/**
 * The body as fragments in the shape of github's and crisp's parsers (consecutive lines of one
 * kind, blank lines kept with the fragment above), for the informational corpus assertions.
 */
export function fragments(seg: Segmented): Fragment[] {
  const out: Fragment[] = [];
  let seenText = false;
  for (let i = 0; i < seg.lines.length; i++) {
    const l = seg.lines[i]!;
    const k = seg.kinds[i]!;
    const last = out[out.length - 1];
    if (isBlank(l) && last) {
      last.content += `\n${l}`;
      continue;
    }
    const quoted = k === 'quoted';
    const signature = k === 'signature';
    if (last && last.quoted === quoted && last.signature === signature) last.content += `\n${l}`;
    else out.push({ content: l, quoted, signature, hidden: false });
    if (k === 'text') seenText = true;
  }
  // As upstream: once the new text is over, what is not new text is hidden.
  for (const f of out) f.hidden = (f.quoted || f.signature) && seenText;
  // One final newline; not /\n*$/, which is quadratic on many newlines followed by text.
  for (const f of out) f.content = `${trimTrailingNewlines(f.content)}\n`;
  return out;
}

/** `s` without the newlines at its end, in one pass from the end. */
export function trimTrailingNewlines(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 10) end--;
  return end === s.length ? s : s.slice(0, end);
}
