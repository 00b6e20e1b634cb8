import { cadenzaError } from '../common/errors.ts';

/**
 * Where a message's tracking links point (the composer, src/sending/compose/tracking.ts, builds the
 * links themselves under this base). A workspace may set a custom tracking domain
 * (`settings.trackingDomain`, e.g. `links.acme.com`, a CNAME to this server) so that links carry
 * its own name instead of Cadenza's: better for deliverability and trust. The server answers the
 * tracking routes for any Host, so nothing else is needed on our side once the CNAME (and a TLS
 * certificate for it, at the reverse proxy) exists. A custom tracking host set through the
 * tracking-domain API (domains/) gets its certificate from Cadenza itself, and, once active, is
 * what the sender uses (sending/send-context.ts) before this setting.
 */

// A DNS host name of at least two labels (RFC 1123), lowercase ASCII (an IDN in its A-label form).
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The domain in normal form, or an error saying what is wrong with it. Never throws. */
export function checkTrackingDomain(raw: string): { ok: true; domain: string } | { ok: false; message: string } {
  const d = raw.trim().toLowerCase().replace(/\.$/, '');
  if (d === '') return { ok: false, message: 'the tracking domain is empty' };
  if (d.length > 253) return { ok: false, message: 'the tracking domain is longer than 253 characters' };
  if (/[/:@?#\s]/.test(d)) return { ok: false, message: 'give the bare host name (links.example.com), without scheme, port or path' };
  const labels = d.split('.');
  if (labels.length < 2) return { ok: false, message: 'the tracking domain needs at least two labels (links.example.com)' };
  if (!labels.every((l) => LABEL.test(l))) return { ok: false, message: 'the tracking domain has a label that is not a valid host name label' };
  if (/^\d+$/.test(labels[labels.length - 1]!)) return { ok: false, message: 'the tracking domain must be a name, not an IP address' };
  return { ok: true, domain: d };
}

/**
 * Where a workspace's tracking links point: `https://<trackingDomain>` when it has one, else the
 * server's configured public URL. A malformed domain is an error rather than a silent fallback: the
 * settings API validates it with checkTrackingDomain, so one here means the stored settings are
 * broken, and links to the wrong host would be worse than a send that waits for a fix.
 */
export function trackingBaseUrl(workspace: { settings?: unknown }, publicUrl: string): string {
  const settings = workspace.settings && typeof workspace.settings === 'object' ? (workspace.settings as Record<string, unknown>) : {};
  const custom = settings.trackingDomain;
  if (custom !== undefined && custom !== null && custom !== '') {
    if (typeof custom !== 'string') throw cadenzaError('CONFIG_INVALID', 'workspace settings.trackingDomain must be a string');
    const c = checkTrackingDomain(custom);
    if (!c.ok) throw cadenzaError('CONFIG_INVALID', `workspace settings.trackingDomain: ${c.message}`, { trackingDomain: custom });
    return `https://${c.domain}`;
  }
  if (!URL.canParse(publicUrl)) throw cadenzaError('CONFIG_INVALID', `the public URL ${JSON.stringify(publicUrl)} is not a URL`);
  const u = new URL(publicUrl);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw cadenzaError('CONFIG_INVALID', 'the public URL must be http or https');
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}
