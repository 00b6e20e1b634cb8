import { escapeHtml } from '../common/html.ts';
import { sanitizeHtml } from '../common/html-sanitize.ts';
import { htmlQuoteStart } from '../ingest/reply-text/html-quotes.ts';

/**
 * A reply's HTML as the inbox shows it: rebuilt from an allowlist, never passed through.
 *
 * The allow-list is common/html-sanitize.ts (shared with the email editor): whatever the input,
 * only its tags and attributes come out, re-escaped; here links open a new window and remote
 * images lose their address unless the reader asked for this message's images. It is the first of
 * three walls: the document is then served with a CSP that forbids scripts (frameCsp) and shown in
 * a frame sandboxed without allow-scripts (web/src/screens/InboxFrame.tsx).
 *
 * The quoted history (found by ingest's own rule, reply-text/html-quotes.ts) is folded under a
 * <details>, which opens without script.
 */

export interface SafeReplyHtml {
  /** The body's markup: new part, then the quoted history folded. */
  html: string;
  /** Remote images whose address was taken out (the reader may load them for this message). */
  blockedImages: number;
}

export interface ReplyHtmlOptions {
  /** Load this message's remote images (http/https). */
  images: boolean;
}

/** The reply's HTML, sanitized, with the quoted history folded. */
export function safeReplyHtml(raw: string, opts: ReplyHtmlOptions): SafeReplyHtml {
  const cut = htmlQuoteStart(raw);
  const counter = { blocked: 0 };
  const policy = { remoteImages: opts.images, newWindow: true };
  const fresh = sanitizeHtml(cut >= 0 ? raw.slice(0, cut) : raw, policy, counter);
  if (cut < 0) return { html: fresh, blockedImages: counter.blocked };
  const quoted = sanitizeHtml(raw.slice(cut), policy, counter);
  return { html: `${fresh}<details class="cadenza-quoted"><summary>Show quoted history</summary>${quoted}</details>`, blockedImages: counter.blocked };
}

/**
 * The frame's policy, sent as a header and repeated in the document: nothing runs (no script
 * source at all, `sandbox` without allow-scripts), nothing is fetched but inline styles and, when
 * asked, this message's images; only the inbox may frame it; links open outside the sandbox.
 */
export function frameCsp(opts: ReplyHtmlOptions): string {
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `img-src data:${opts.images ? ' https: http:' : ''}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
    'sandbox allow-popups allow-popups-to-escape-sandbox',
  ].join('; ');
}

/** The frame's whole document. */
export function replyFrameDocument(raw: string, opts: ReplyHtmlOptions): string {
  const { html } = safeReplyHtml(raw, opts);
  // The <meta> policy may not carry sandbox or frame-ancestors (browsers ignore them there): the header does.
  const metaCsp = frameCsp(opts).split('; ').filter((d) => !d.startsWith('sandbox') && !d.startsWith('frame-ancestors')).join('; ');
  return (
    '<!doctype html><html><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(metaCsp)}">` +
    '<style>body{font:14px/1.5 system-ui,sans-serif;margin:8px;color:#1d2433;background:#fff;overflow-wrap:anywhere}img{max-width:100%;height:auto}' +
    'img[data-blocked]{display:inline-block;min-width:16px;min-height:16px;outline:1px dashed #8a94a6}details.cadenza-quoted{margin-top:12px;color:#4a5568}' +
    'details.cadenza-quoted>summary{cursor:pointer;color:#3056d3}blockquote{margin:0 0 0 8px;padding-left:8px;border-left:2px solid #c5cbd6}</style>' +
    `</head><body>${html}</body></html>`
  );
}

