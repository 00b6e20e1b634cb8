import { createHash } from 'node:crypto';

/**
 * The few HTML pages a recipient may see: the unsubscribe confirmation (one button), its result,
 * and the answers to a broken link. Small, self-contained (no script, no external resource, one
 * inline style allowed by its hash), readable without CSS, and accessible: a language, a heading,
 * a real <button> in a <form>, visible focus, contrast above WCAG AA.
 */

const STYLE = `
:root { color-scheme: light dark; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f6f7f9; color: #1c1e21; }
main { max-width: 32rem; margin: 12vh auto; padding: 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
button { font: inherit; font-weight: 600; padding: .75rem 1.5rem; border: 0; border-radius: 8px; background: #1d4ed8; color: #fff; cursor: pointer; }
button:hover { background: #1e40af; }
button:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.note { color: #4b5563; font-size: .9rem; margin-top: 1.5rem; }
@media (prefers-color-scheme: dark) {
  body { background: #111827; color: #f3f4f6; }
  main { background: #1f2937; box-shadow: none; }
  .note { color: #d1d5db; }
}
`;

const styleHash = createHash('sha256').update(STYLE).digest('base64');

/** Headers for every page: nothing loads but the inline style, the form posts only to us, no framing, no referrer. */
export const pageHeaders: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${styleHash}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  // The token in the URL is the recipient's; search engines must not keep it.
  'x-robots-tag': 'noindex, nofollow',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/**
 * The page behind the unsubscribe link. It changes nothing by itself: mail security scanners fetch
 * every link of every message, so only the button's POST unsubscribes. The form carries the RFC
 * 8058 key, so the POST handler treats both ways alike; `via` only tells them apart in the journal.
 */
export function confirmPage(opts: { action: string; sender: string | null }): string {
  const from = opts.sender ? ` from <strong>${escapeHtml(opts.sender)}</strong>` : '';
  return page(
    'Unsubscribe',
    `<h1>Unsubscribe</h1>
<p>Do you want to stop receiving these emails${from}?</p>
<form method="post" action="${escapeHtml(opts.action)}">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<input type="hidden" name="via" value="page">
<button type="submit">Unsubscribe</button>
</form>
<p class="note">Nothing changes until you press the button.</p>`,
  );
}

export function donePage(already: boolean): string {
  return page(
    'Unsubscribed',
    `<h1>You are unsubscribed</h1>
<p>${already ? 'This address was already unsubscribed.' : 'You will not receive any more of these emails.'}</p>
<p class="note">You can close this page.</p>`,
  );
}

export function notFoundPage(): string {
  return page(
    'Link not valid',
    `<h1>This link is not valid</h1>
<p>It may have been copied incompletely, or it is no longer in use.</p>
<p class="note">To stop receiving emails, reply to the message and ask to be removed.</p>`,
  );
}

export function errorPage(): string {
  return page(
    'Something went wrong',
    `<h1>Something went wrong</h1>
<p>We could not complete your request. Please try again in a minute.</p>
<p class="note">To stop receiving emails, you can also reply to the message and ask to be removed.</p>`,
  );
}
