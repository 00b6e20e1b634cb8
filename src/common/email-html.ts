import { decodeEntities, escapeHtml } from './html.ts';
import { sanitizeHtml } from './html-sanitize.ts';

/**
 * The HTML of an email step or a signature, as the email editor writes it and Cadenza stores and
 * sends it, and the plain-text alternative made from it.
 *
 * - sanitizeEmailHtml: the allow-list (html-sanitize.ts) with remote images kept (the rep put them
 *   there) and links as written (no new-window attributes in a mail). Run by the server before the
 *   HTML is stored (sequence definitions, templates, signatures), whatever the client sent.
 * - htmlToText: the text/plain part of the multipart/alternative message: paragraphs on blank
 *   lines, list items as "- " or "1. ", a link as "text (url)", an image as its alt text. Pure and
 *   without the DOM, so the web editor shows the very text the server would store.
 *
 * Template syntax passes through both untouched ({{first_name | default: "there"}}, {Hi|Hello}):
 * the renderer runs on the stored HTML and text alike.
 */

export const MAX_EMAIL_HTML = 200_000;

export function sanitizeEmailHtml(html: string): string {
  return sanitizeHtml(html, { remoteImages: true, newWindow: false }).trim();
}

const PARAGRAPH = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'table', 'ul', 'ol', 'dl', 'address']);
const LINE = new Set(['div', 'li', 'tr', 'dd', 'dt', 'caption', 'center', 'hr']);
// Tags, comments and text of (sanitized, or any) HTML: a tag is read up to its ">" outside quotes.
const TOKEN = /<!--[\s\S]*?(?:-->|$)|<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>|([^<]+)|</g;
const HREF = /\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;
const ALT = /\salt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;

/** The plain-text alternative of an email's HTML. */
export function htmlToText(html: string): string {
  let out = '';
  let pre = 0;
  let items = 0;
  const lists: Array<{ ordered: boolean; n: number }> = [];
  const links: Array<{ href: string; start: number }> = [];
  const breakLines = (n: number) => {
    const trailing = /\n*$/.exec(out)![0].length;
    if (out.length === 0) return;
    out += '\n'.repeat(Math.max(0, n - trailing));
  };
  for (const m of html.matchAll(TOKEN)) {
    const [whole, closing, rawName, attrs, textRun] = m;
    if (textRun !== undefined || whole === '<') {
      const t = decodeEntities(textRun ?? '<');
      if (pre > 0) out += t;
      else {
        // A browser types a space at the end of a line as a no-break space (the editor keeps it):
        // in the text part it is an ordinary space.
        const words = t.replace(/[ \t\r\n\f]+/g, ' ').replace(/\u00a0/g, ' ');
        // A space at the start of a line is layout, not text.
        out += /(^|\n)$/.test(out) ? words.replace(/^ /, '') : words;
      }
      continue;
    }
    if (!rawName) continue; // a comment
    const name = rawName.toLowerCase();
    if (name === 'script' || name === 'style' || name === 'head' || name === 'title') continue;
    if (name === 'br') {
      out = out.replace(/ +$/, '') + '\n';
      continue;
    }
    if (name === 'pre') pre += closing ? -1 : 1;
    if (name === 'img' && !closing) {
      const alt = ALT.exec(attrs ?? '');
      const a = alt ? decodeEntities(alt[1] ?? alt[2] ?? alt[3] ?? '') : '';
      if (a) out += a;
      continue;
    }
    if (name === 'a') {
      if (!closing) {
        const h = HREF.exec(attrs ?? '');
        links.push({ href: h ? decodeEntities(h[1] ?? h[2] ?? h[3] ?? '') : '', start: out.length });
      } else {
        const link = links.pop();
        if (link?.href) {
          const shown = out.slice(link.start).trim();
          const bare = link.href.replace(/^mailto:/i, '');
          if (shown !== link.href && shown !== bare) out += shown ? ` (${link.href})` : link.href;
        }
      }
      continue;
    }
    if (name === 'ul' || name === 'ol') {
      if (closing) lists.pop();
      else lists.push({ ordered: name === 'ol', n: 0 });
    }
    if (name === 'td' || name === 'th') {
      if (closing) out += ' ';
      continue;
    }
    if (name === 'li') items += closing ? -1 : 1;
    // The editor wraps a list item's text in <p>: inside an item a paragraph is a line, never a blank line after the marker.
    if (name === 'p' && items > 0) {
      if (!closing && !/(- |\d+\. )$/.test(out)) breakLines(1);
      continue;
    }
    if (PARAGRAPH.has(name)) {
      // A list inside a list item is a line of its own, not a paragraph.
      breakLines((name === 'ul' || name === 'ol') && lists.length > (closing ? 0 : 1) ? 1 : 2);
      continue;
    }
    if (LINE.has(name)) {
      breakLines(1);
      if (name === 'hr' && !closing) out += '---\n';
      if (name === 'li' && !closing) {
        const list = lists[lists.length - 1];
        const depth = '  '.repeat(Math.max(0, lists.length - 1));
        out += list?.ordered ? `${depth}${++list.n}. ` : `${depth}- `;
      }
    }
  }
  return out
    .split('\n')
    .map((l) => l.replace(/[ \t]+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+|\n+$/g, '');
}

/** The email's parts with the mailbox's signature appended (compose time; see docs/web.md). */
export function withSignature<T extends { text: string; html?: string | null }>(content: T, signature: { html: string; text: string } | null | undefined): T {
  if (!signature || (signature.text.trim() === '' && signature.html.trim() === '')) return content;
  const text = `${content.text.replace(/\s+$/, '')}\n\n${signature.text}`;
  if (content.html === undefined || content.html === null || content.html.trim() === '') return { ...content, text };
  const block = `<div class="cadenza-signature">${signature.html.trim() || escapeHtml(signature.text).replace(/\n/g, '<br>')}</div>`;
  const at = content.html.search(/<\/body\s*>/i);
  const html = at >= 0 ? content.html.slice(0, at) + block + content.html.slice(at) : content.html + block;
  return { ...content, text, html };
}
