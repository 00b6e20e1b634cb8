/** The little HTML handling templates and composing need: escaping values, reading and writing href attributes. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/**
 * Decodes the character references an attribute value may hold ("?a=1&amp;b=2" is "?a=1&b=2"), so
 * a link is tracked and redirected to the URL the browser would have opened. Unknown named
 * references are left as they are, as browsers do.
 */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z][a-z0-9]{1,31});?/gi, (m, ref: string) => {
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : '\ufffd';
    }
    const name = ref.toLowerCase();
    const v = NAMED[name];
    // Without its ';' only '&amp' is decoded (legacy HTML); "&copy=1" in a query stays as written.
    if (v === undefined || !(m.endsWith(';') || name === 'amp')) return m;
    return v;
  });
}

// A bare http(s) URL in running text; trailing punctuation belongs to the sentence, not the link.
const BARE_URL = /\bhttps?:\/\/[^\s<>"']+/gi;
const TRAILING = /[.,;:!?)\]}'"]+$/;

/**
 * The HTML alternative of a plain-text body: escaped, paragraphs on blank lines, line breaks kept,
 * bare http(s) URLs made links. Used when a sequence tracks opens or clicks on a text-only step:
 * a pixel and a redirect need an HTML part, and the text part stays exactly as written.
 */
export function textToHtml(text: string): string {
  const linkify = (line: string): string => {
    let out = '';
    let pos = 0;
    for (const m of line.matchAll(BARE_URL)) {
      const url = m[0].replace(TRAILING, '');
      out += escapeHtml(line.slice(pos, m.index)) + `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
      pos = m.index + url.length;
    }
    return out + escapeHtml(line.slice(pos));
  };
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n+/)
    .map((p) => p.replace(/^\n+|\n+$/g, ''))
    .filter((p) => p.trim() !== '');
  const body = paragraphs.map((p) => `<p>${p.split('\n').map(linkify).join('<br>\n')}</p>`).join('\n');
  return `<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head><body>\n${body}\n</body></html>\n`;
}
