/**
 * What the email editor's link dialog accepts as a link's address, said in plain words when it
 * refuses one. The same schemes the server's sanitiser keeps (common/html-sanitize.ts: http(s) and
 * mailto): a link it would strip is refused here, while the rep can still fix it, rather than
 * silently lost on save. A bare "acme.com/pricing" is read as https, a bare "pat@acme.com" as
 * mailto, as a mail client does.
 */

export type LinkAddress = { ok: true; href: string } | { ok: false; problem: string };

const SCHEMES = new Set(['https:', 'http:', 'mailto:']);
// A scheme the rep typed ("javascript:", "ftp:", "tel:"): letters, then a colon, not a host:port.
const SCHEME = /^([a-z][a-z0-9+.-]*):(?!\d+(?:[/?#]|$))/i;
const EMAIL = /^[^\s@/:]+@[^\s@/:]+\.[^\s@/:]+$/;

export function linkAddress(input: string): LinkAddress {
  const raw = input.trim();
  if (raw === '') return { ok: false, problem: 'Type the address the link goes to, e.g. https://example.com.' };
  if (/\s/.test(raw)) return { ok: false, problem: 'A link address has no spaces.' };
  const scheme = SCHEME.exec(raw)?.[1]?.toLowerCase();
  if (scheme !== undefined && !SCHEMES.has(`${scheme}:`)) {
    return { ok: false, problem: `"${scheme}:" links are not allowed in an email: use a web address (https:// or http://) or an email address (mailto:).` };
  }
  const href = scheme !== undefined ? raw : EMAIL.test(raw) ? `mailto:${raw}` : `https://${raw.replace(/^\/\//, '')}`;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return { ok: false, problem: `"${raw}" is not a web or email address.` };
  }
  if (url.protocol === 'mailto:') {
    return EMAIL.test(decodeURIComponent(url.pathname)) ? { ok: true, href } : { ok: false, problem: `"${raw}" has no email address after mailto: (e.g. mailto:pat@example.com).` };
  }
  // A host without a dot ("https://pricing") is a typo in a mail that leaves the company network.
  if (!url.hostname.includes('.')) return { ok: false, problem: `"${url.hostname || raw}" is not a full web address: it needs a domain, e.g. example.com.` };
  return { ok: true, href };
}
