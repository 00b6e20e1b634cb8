import { decodeEntities, escapeHtml } from './html.ts';

/**
 * The one allow-list HTML sanitizer: the markup is rebuilt, never passed through. The inbox shows
 * replies through it (inbox/reply-html.ts) and the email editor's HTML is stored and sent through
 * it (common/email-html.ts).
 *
 * The output holds only the tags and attributes below, each attribute value re-escaped, and all
 * text re-escaped: whatever the input (unclosed tags, `<scr<script>ipt>`, entities in a
 * `javascript:` link, `<svg><script>`), nothing else can come out. Scripts, event handlers, forms,
 * frames, objects, `<base>`, `<meta>` and `<link>` are dropped, with the content of those that hold
 * code; links keep only http(s) and mailto addresses, images only http(s) and inline raster data.
 *
 * Linear: one pass over the input; tags are examined one at a time, bounded in length.
 */

export interface SanitizePolicy {
  /** Keep remote (http/https) image addresses; false: take them out and count them. */
  remoteImages: boolean;
  /** Links open a new window (target=_blank, rel=noopener noreferrer): for the inbox's frame. */
  newWindow: boolean;
}

export interface SanitizeCounter {
  /** Remote images whose address was taken out. */
  blocked: number;
}

/** Kept with their content; attributes from ATTRIBUTES only. */
const TAGS = new Set([
  'a', 'abbr', 'address', 'b', 'bdi', 'bdo', 'big', 'blockquote', 'br', 'caption', 'center', 'cite', 'code', 'col', 'colgroup', 'dd', 'del', 'dfn', 'div', 'dl', 'dt',
  'em', 'font', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'ins', 'kbd', 'li', 'mark', 'ol', 'p', 'pre', 'q', 's', 'samp', 'small', 'span', 'strike',
  'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'tt', 'u', 'ul', 'var', 'wbr',
]);
const VOID = new Set(['br', 'col', 'hr', 'img', 'wbr']);
/** Dropped with everything inside them (their content is code, or a document of its own). */
// (Void ones such as <embed>, <meta> or <base> are simply not in TAGS; <head> is not here: a
// missing </head> would take the whole mail with it, and its children are dropped one by one.)
const DROP_WITH_CONTENT = new Set(['script', 'style', 'iframe', 'frameset', 'object', 'applet', 'noscript', 'noembed', 'noframes', 'template', 'svg', 'math', 'title', 'textarea', 'select', 'xmp', 'plaintext']);
/** Their content is raw text up to the closing tag (the HTML parser's rule); the rest of DROP_WITH_CONTENT nests tags. */
const RAW_TEXT = new Set(['script', 'style', 'iframe', 'noscript', 'noembed', 'noframes', 'title', 'textarea', 'xmp', 'plaintext']);

const ATTRIBUTES = new Set(['align', 'valign', 'width', 'height', 'bgcolor', 'color', 'border', 'cellpadding', 'cellspacing', 'colspan', 'rowspan', 'dir', 'lang', 'title', 'alt', 'face', 'size', 'start', 'type', 'style', 'href', 'src']);

/** CSS that can fetch (url(), @import), run (old IE expression(), bindings) or hide either (escapes): the whole declaration list goes. */
const UNSAFE_CSS = /url\s*\(|@import|expression\s*\(|javascript:|behaviou?r\s*:|-moz-binding|\\|image-set\s*\(|<|>/i;

const MAX_TAG_CHARS = 4000;
/** The input rebuilt from the allow-list. */
export function sanitizeHtml(input: string, opts: SanitizePolicy, counter: SanitizeCounter = { blocked: 0 }): string {
  const out: string[] = [];
  const open: string[] = [];
  // How many of each name are open: a closing tag for a name not open is dropped without
  // searching the stack (thousands of stray "</i>" under thousands of "<b>" would be quadratic).
  const openCount = new Map<string, number>();
  let i = 0;
  while (i < input.length) {
    const lt = input.indexOf('<', i);
    if (lt < 0) {
      out.push(text(input.slice(i)));
      break;
    }
    if (lt > i) out.push(text(input.slice(i, lt)));
    // A comment, doctype, CDATA or processing instruction: skipped whole.
    if (input.startsWith('<!--', lt)) {
      const end = input.indexOf('-->', lt + 4);
      i = end < 0 ? input.length : end + 3;
      continue;
    }
    if (input[lt + 1] === '!' || input[lt + 1] === '?') {
      const end = input.indexOf('>', lt);
      i = end < 0 ? input.length : end + 1;
      continue;
    }
    const closing = input[lt + 1] === '/';
    const nameMatch = /^[a-zA-Z][a-zA-Z0-9-]*/.exec(input.slice(lt + (closing ? 2 : 1), lt + (closing ? 2 : 1) + 32));
    if (!nameMatch) {
      // Not a tag ("a < b"): the "<" is text.
      out.push('&lt;');
      i = lt + 1;
      continue;
    }
    const gt = tagEnd(input, lt);
    if (gt < 0) break; // an unterminated tag at the end: dropped
    const name = nameMatch[0].toLowerCase();
    i = gt + 1;
    if (closing) {
      if (!openCount.get(name)) continue;
      const at = open.lastIndexOf(name);
      while (open.length > at) {
        const popped = open.pop()!;
        openCount.set(popped, openCount.get(popped)! - 1);
        out.push(`</${popped}>`);
      }
      continue;
    }
    if (DROP_WITH_CONTENT.has(name)) {
      i = skipElement(input, i, name);
      continue;
    }
    if (!TAGS.has(name)) continue; // unknown or forbidden tag: dropped, its text kept
    const attrs = attributes(input.slice(lt + 1 + name.length, gt), name, opts, counter);
    out.push(`<${name}${attrs}>`);
    if (!VOID.has(name)) {
      open.push(name);
      openCount.set(name, (openCount.get(name) ?? 0) + 1);
    }
  }
  while (open.length) out.push(`</${open.pop()!}>`);
  return out.join('');
}

/** Text re-escaped: references decoded once, then every special character escaped. */
// Quotes need no escape outside attributes, and a template's `default: "there"` must stay readable to the renderer.
const text = (s: string) => decodeEntities(s).replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));

/** The ">" that ends the tag at `lt`, honouring quoted attribute values; -1 if none within bounds. */
function tagEnd(s: string, lt: number): number {
  let quote: string | null = null;
  const limit = Math.min(s.length, lt + MAX_TAG_CHARS);
  for (let p = lt + 1; p < limit; p++) {
    const c = s[p]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return p;
  }
  // An over-long or unterminated tag: its end is the next ">" anywhere (what a browser would do without quotes).
  return s.indexOf('>', limit);
}

/** Past the element's content and its closing tag (raw-text elements end at the first closing tag; others count nesting). */
// Searched case-insensitively from `from` (never by lower-casing the whole input per element, which
// made many small <script></script> pairs quadratic); one compiled pattern per name.
const SKIP_PATTERNS = new Map<string, RegExp>();
function skipPattern(name: string): RegExp {
  let re = SKIP_PATTERNS.get(name);
  if (!re) {
    re = RAW_TEXT.has(name) ? new RegExp(`</${name}`, 'gi') : new RegExp(`<(/?)${name}(?![a-z0-9-])`, 'gi');
    SKIP_PATTERNS.set(name, re);
  }
  return re;
}

function skipElement(s: string, from: number, name: string): number {
  const re = skipPattern(name);
  re.lastIndex = from;
  if (RAW_TEXT.has(name)) {
    const m = re.exec(s);
    if (!m) return s.length;
    const gt = s.indexOf('>', m.index);
    return gt < 0 ? s.length : gt + 1;
  }
  let depth = 1;
  let p = from;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    depth += m[1] ? -1 : 1;
    p = m.index;
    if (depth === 0) {
      const gt = s.indexOf('>', p);
      return gt < 0 ? s.length : gt + 1;
    }
  }
  return s.length;
}

const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;

function attributes(source: string, tag: string, opts: SanitizePolicy, counter: SanitizeCounter): string {
  const kept: string[] = [];
  const seen = new Set<string>();
  for (const m of source.matchAll(ATTRIBUTE)) {
    const name = m[1]!.toLowerCase();
    if (!ATTRIBUTES.has(name) || seen.has(name)) continue;
    seen.add(name);
    const value = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
    if (name === 'href') {
      if (tag !== 'a') continue;
      const url = value.replace(/[\u0000-\u0020\u007f]/g, '');
      if (!/^(?:https?:|mailto:)/i.test(url)) continue;
      kept.push(` href="${escapeHtml(url)}"`);
      continue;
    }
    if (name === 'src') {
      if (tag !== 'img') continue;
      const url = value.replace(/[\u0000-\u0020\u007f]/g, '');
      if (/^data:image\/(?:png|gif|jpeg|webp);/i.test(url)) kept.push(` src="${escapeHtml(url)}"`);
      else if (/^https?:/i.test(url)) {
        if (opts.remoteImages) kept.push(` src="${escapeHtml(url)}"`);
        else {
          counter.blocked++;
          kept.push(' data-blocked=""');
        }
      }
      continue;
    }
    if (name === 'style' && UNSAFE_CSS.test(value)) continue;
    kept.push(` ${name}="${escapeHtml(value)}"`);
  }
  if (opts.newWindow && tag === 'a' && seen.has('href')) kept.push(' target="_blank" rel="noopener noreferrer"');
  return kept.join('');
}
