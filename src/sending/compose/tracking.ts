import { cadenzaError } from '../../common/errors.ts';
import { MAX_TOKEN_LENGTH, seal, sealedLength, unseal } from '../../common/sealed-token.ts';
import { deriveKey } from '../../common/secrets.ts';
import { decodeEntities, escapeHtml } from '../../common/html.ts';

/**
 * The links an email carries back to Cadenza: unsubscribe (every sequence email), and, when the
 * sequence turns them on, the open pixel and click redirects. Each carries a sealed token
 * (common/sealed-token.ts: AES-256-GCM, unguessable and tamper-evident) whose payload is the shape
 * agreed with the tracking endpoints (src/tracking/):
 *
 *   { k: 'u', ws, sr }         unsubscribe   ${base}/t/u/${token}      GET page, POST one-click (RFC 8058)
 *   { k: 'o', ws, sr }         open pixel    ${base}/t/o/${token}.gif
 *   { k: 'c', ws, sr, u, i }   click         ${base}/t/c/${token}      u: destination, i: link index
 *
 * ws is the workspace id, sr the send request id. The destination of a click is inside the token,
 * never in clear, so the redirect cannot be used as an open redirect.
 *
 * The base is the workspace's custom tracking domain when one is set, else Cadenza's public URL.
 */

/** The purpose the tracking key is derived for: one key for sealing here and unsealing in tracking/. */
export const TRACKING_KEY_PURPOSE = 'tracking';

export function trackingKey(master: Buffer): Buffer {
  return deriveKey(master, TRACKING_KEY_PURPOSE);
}

export type TrackingPayload =
  | { k: 'u'; ws: string; sr: string }
  | { k: 'o'; ws: string; sr: string }
  | { k: 'c'; ws: string; sr: string; u: string; i: number };

/** A token's payload if this key sealed it and it has one of the agreed shapes; null otherwise. */
export function openTrackingToken(key: Buffer, token: string): TrackingPayload | null {
  const p = unseal<Record<string, unknown>>(key, token);
  if (!p || typeof p !== 'object' || typeof p.ws !== 'string' || typeof p.sr !== 'string') return null;
  if (p.k === 'u' || p.k === 'o') return { k: p.k, ws: p.ws, sr: p.sr };
  if (p.k === 'c' && typeof p.u === 'string' && Number.isInteger(p.i)) return { k: 'c', ws: p.ws, sr: p.sr, u: p.u, i: p.i as number };
  return null;
}

export interface TrackingLinks {
  /** The base URL, without a trailing slash. */
  base: string;
  unsubscribeToken: string;
  unsubscribeUrl: string;
  pixelUrl(): string;
  /** null when the URL is too long to fit in a token (MAX_TOKEN_LENGTH): the link is then left as written. */
  clickUrl(url: string, index: number): string | null;
  /** True for a URL that points at this base's tracking endpoints (never tracked twice). */
  isTrackingUrl(url: string): boolean;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Checks and normalises a tracking base URL. https only (RFC 8058 §3.1 requires an HTTPS
 * List-Unsubscribe URI), except on loopback for development.
 */
export function normaliseBaseUrl(baseUrl: string): string {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw cadenzaError('INVALID_INPUT', `tracking base URL '${baseUrl}' is not a URL`, { baseUrl });
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.has(u.hostname))) {
    throw cadenzaError('INVALID_INPUT', `tracking base URL '${baseUrl}' must be https (RFC 8058 one-click unsubscribe needs an HTTPS link)`, { baseUrl });
  }
  if (u.search || u.hash || u.username || u.password) {
    throw cadenzaError('INVALID_INPUT', `tracking base URL '${baseUrl}' must be a plain origin and path, without query, fragment or credentials`, { baseUrl });
  }
  return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
}

export function trackingLinks(o: { key: Buffer; baseUrl: string; workspaceId: string; sendRequestId: string }): TrackingLinks {
  const base = normaliseBaseUrl(o.baseUrl);
  const ws = o.workspaceId;
  const sr = o.sendRequestId;
  const unsubscribeToken = seal(o.key, { k: 'u', ws, sr } satisfies TrackingPayload);
  return {
    base,
    unsubscribeToken,
    unsubscribeUrl: `${base}/t/u/${unsubscribeToken}`,
    pixelUrl: () => `${base}/t/o/${seal(o.key, { k: 'o', ws, sr } satisfies TrackingPayload)}.gif`,
    clickUrl: (url, i) => {
      const payload = { k: 'c', ws, sr, u: url, i } satisfies TrackingPayload;
      return sealedLength(payload) > MAX_TOKEN_LENGTH ? null : `${base}/t/c/${seal(o.key, payload)}`;
    },
    isTrackingUrl: (url) => url.startsWith(`${base}/t/`),
  };
}

export interface TrackedLink {
  /** The link's index in the token (0-based, in document order among tracked links). */
  index: number;
  url: string;
}

/** A link click tracking left as written, and why (the sender logs it). */
export interface UntrackedLink {
  url: string;
  reason: string;
}

interface HrefAttr {
  /** Where the value starts and ends in the html (quotes excluded), and its raw text. */
  start: number;
  end: number;
  quoted: boolean;
  raw: string;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';

/**
 * Reads the attributes of a start tag whose name ends at `i`, the way an HTML tokenizer does
 * (names, '=', quoted or unquoted values), in one pass. Returns the position of the closing '>'
 * (-1 when the tag never closes) and the first href attribute.
 */
function readStartTag(html: string, i: number): { close: number; href: HrefAttr | null } {
  let href: HrefAttr | null = null;
  const n = html.length;
  while (i < n) {
    while (i < n && (isSpace(html[i]) || html[i] === '/')) i++;
    if (i >= n) break;
    if (html[i] === '>') return { close: i, href };
    const nameStart = i;
    while (i < n && !isSpace(html[i]) && html[i] !== '/' && html[i] !== '>' && (html[i] !== '=' || i === nameStart)) i++;
    const name = html.slice(nameStart, i).toLowerCase();
    while (i < n && isSpace(html[i])) i++;
    if (html[i] !== '=') continue;
    i++;
    while (i < n && isSpace(html[i])) i++;
    let attr: HrefAttr;
    const q = html[i];
    if (q === '"' || q === "'") {
      const closeQuote = html.indexOf(q, i + 1);
      if (closeQuote < 0) return { close: -1, href };
      attr = { start: i + 1, end: closeQuote, quoted: true, raw: html.slice(i + 1, closeQuote) };
      i = closeQuote + 1;
    } else {
      const vStart = i;
      while (i < n && !isSpace(html[i]) && html[i] !== '>') i++;
      attr = { start: vStart, end: i, quoted: false, raw: html.slice(vStart, i) };
    }
    if (name === 'href' && href === null) href = attr;
  }
  return { close: -1, href };
}

/**
 * Sends each http(s) link of an HTML body through the click redirect. Left alone: mailto:, tel:
 * and other schemes, in-page anchors, links already pointing at the tracking endpoints, and the
 * unsubscribe link (a redirect in front of it would make one-click unsubscribe depend on click
 * tracking, and mail filters distrust it), and a URL too long for a click token (reported in
 * `untracked`). Text bodies are never rewritten: long opaque redirect
 * URLs in plain text look like phishing to readers and filters alike.
 *
 * One linear pass over the HTML (a template is written by a workspace's users, but a quadratic
 * regex on a broken 100 KB body would still stall the sender). A start tag that never closes ends
 * the pass, as it swallows the rest of the document in a browser too.
 */
export function rewriteLinks(html: string, links: TrackingLinks, skip: ReadonlyArray<string> = []): { html: string; tracked: TrackedLink[]; untracked: UntrackedLink[] } {
  const tracked: TrackedLink[] = [];
  const untracked: UntrackedLink[] = [];
  let out = '';
  let pos = 0;
  let scan = 0;
  for (;;) {
    const lt = html.indexOf('<', scan);
    if (lt < 0) break;
    const after = html[lt + 2];
    if ((html[lt + 1] !== 'a' && html[lt + 1] !== 'A') || !(after === undefined || isSpace(after) || after === '>' || after === '/')) {
      scan = lt + 1;
      continue;
    }
    const tag = readStartTag(html, lt + 2);
    if (tag.close < 0) break;
    scan = tag.close + 1;
    const h = tag.href;
    if (!h) continue;
    const url = decodeEntities(h.raw.trim());
    if (!/^https?:\/\//i.test(url) || links.isTrackingUrl(url) || url === links.unsubscribeUrl || skip.includes(url)) continue;
    const index = tracked.length;
    const click = links.clickUrl(url, index);
    if (click === null) {
      // A working link untracked beats a tracked one the redirect could not open.
      untracked.push({ url, reason: `longer than a click token can carry (${url.length} characters)` });
      continue;
    }
    tracked.push({ index, url });
    const value = escapeHtml(click);
    out += h.quoted ? html.slice(pos, h.start) + value : `${html.slice(pos, h.start)}"${value}"`;
    pos = h.end;
  }
  return { html: out + html.slice(pos), tracked, untracked };
}

/**
 * Adds the 1x1 open pixel just before </body> (or at the end when there is no body tag). Only
 * HTML parts get one: a plain-text email has nowhere to load an image from.
 */
export function insertPixel(html: string, pixelUrl: string): string {
  const img = `<img src="${escapeHtml(pixelUrl)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
  let close = -1;
  for (const m of html.matchAll(/<\/body\s*>/gi)) close = m.index;
  return close >= 0 ? `${html.slice(0, close)}${img}${html.slice(close)}` : `${html}${img}`;
}
