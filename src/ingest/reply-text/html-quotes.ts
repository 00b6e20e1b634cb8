/**
 * Where the quoted history of an HTML reply begins, from the markup that mail clients put
 * around it. Everything from the earliest marker on is history; the part before it is turned
 * into text and goes through the plain-text rules (which also drop the attribution line that
 * clients write just above the quote, and the signature).
 *
 * Tags are found with a linear scan and each tag is examined on its own: regexes run over the
 * whole document (`<div[^>]*class=…`) backtrack quadratically on hostile input such as a
 * megabyte of "<div class=" without a ">".
 */

const MAX_TAG_CHARS = 4000;

const ATTRIBUTE = /\b(class|id|type|style)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;

function isQuoteMarker(name: string, tag: string): boolean {
  // mail.ru, Yandex and many webmails quote with a bare <blockquote>; Apple Mail and Thunderbird
  // with type="cite"; Gmail with class="gmail_quote".
  if (name === 'blockquote') return true;
  for (const m of tag.matchAll(ATTRIBUTE)) {
    const attr = m[1]!.toLowerCase();
    const value = (m[2] ?? m[3] ?? m[4] ?? '').toLowerCase();
    if (attr === 'class' && /\b(?:gmail_quote|yahoo_quoted|moz-cite-prefix|outlookmessageheader)\b/.test(value)) return true;
    if (attr === 'id' && /^(?:x_)?(?:divrplyfwdmsg|outlookmessageheader)$/.test(value)) return true;
    if (attr === 'id' && name === 'hr' && /^(?:ecx)?stopspelling$/.test(value)) return true;
    // Outlook desktop draws the header block of the history under a thin top border.
    if (attr === 'style' && name === 'div' && /border-top:\s*solid\s+#(?:b5c4df|e1e1e1)/.test(value)) return true;
  }
  return false;
}

/** Offset of the first quote marker in the HTML, or -1. */
export function htmlQuoteStart(html: string): number {
  let gt = -1;
  for (let p = html.indexOf('<'); p >= 0; p = html.indexOf('<', p + 1)) {
    if (p > gt) {
      gt = html.indexOf('>', p);
      if (gt < 0) return -1;
    }
    const nextLt = html.indexOf('<', p + 1);
    // Only well-formed tags: no other "<" before the ">", bounded length. Each character then
    // belongs to at most one examined tag.
    if ((nextLt >= 0 && nextLt < gt) || gt - p > MAX_TAG_CHARS) continue;
    const tag = html.slice(p + 1, gt);
    const name = /^[a-zA-Z][a-zA-Z0-9]*/.exec(tag)?.[0].toLowerCase();
    if (name && isQuoteMarker(name, tag)) return p;
  }
  return -1;
}
