/**
 * Which mail provider a warmup member is (pure): the label the day planner mixes providers by
 * ("at most a third of a sender's warmup mail to its own provider", plan/planner.ts). Providers
 * judge a sender by what their own users do with its mail, so reputation is built with each
 * provider separately, and two SMTP/IMAP mailboxes at Zoho and at Fastmail are as different as
 * Google and Microsoft.
 *
 * The clues, strongest first:
 * 1. the connector kind: the Gmail API is Google, Microsoft Graph is Microsoft;
 * 2. the SMTP host (the server that hands the mail on is what receivers see), then the IMAP host:
 *    a known family's host name (smtp.zoho.eu, imap.mail.me.com, smtp.gmail.com: a Google
 *    Workspace or Microsoft 365 domain reached over SMTP/IMAP is Google or Microsoft);
 * 3. the domain's MX (from its last domain-health check, sending/dns): a known family's exchange;
 * 4. Proton Mail Bridge: it serves IMAP and SMTP on loopback (ports 1143 and 1025 by default);
 * 5. otherwise the domain's own server when a host or the MX is under the mailbox's own domain
 *    (or is an IP address): `self:<domain>`, a provider of its own; a host elsewhere (a hosting
 *    company's shared server) is that host's domain, `host:<domain>`; nothing known: `other`.
 */

export interface ProviderClues {
  /** The connector kind (mailbox.provider): 'gmail', 'graph' or 'smtp_imap'. */
  kind: string;
  /** The domain of the mailbox's address. */
  domain: string;
  smtp?: { host?: string | null; port?: number | null } | null;
  imap?: { host?: string | null; port?: number | null } | null;
  /** The domain's MX exchanges, best first (empty or absent when not checked yet). */
  mx?: readonly string[] | null;
}

export interface ProviderVerdict {
  /** 'google', 'microsoft', a family ('zoho', 'yahoo', ...), 'self:<domain>', 'host:<domain>' or 'other'. */
  label: string;
  /** What decided it, for a person reading the plan. */
  reason: string;
}

/**
 * Known families by the domains their mail hosts live under (a host matches when it is one of
 * them or ends with '.' + one). Yahoo and AOL share one platform (yahoodns.net MX for both); GMX,
 * Web.de and mail.com are one operator's (United Internet's 1&1 Mail & Media) platform; IONOS
 * (formerly 1&1, kundenserver.de, perfora.net) hosts domains on another.
 */
const FAMILIES: ReadonlyArray<readonly [label: string, suffixes: readonly string[]]> = [
  ['google', ['gmail.com', 'googlemail.com', 'google.com']],
  ['microsoft', ['outlook.com', 'office365.com', 'hotmail.com', 'live.com', 'microsoft.com', 'outlook.de']],
  ['zoho', ['zoho.com', 'zoho.eu', 'zoho.in', 'zoho.com.au', 'zoho.jp', 'zoho.com.cn', 'zoho.sa', 'zohocloud.ca', 'zohomail.com']],
  ['yahoo', ['yahoo.com', 'yahoodns.net', 'aol.com', 'yahoo.net']],
  ['fastmail', ['fastmail.com', 'fastmail.fm', 'messagingengine.com']],
  ['icloud', ['icloud.com', 'me.com', 'mac.com']],
  ['gmx', ['gmx.net', 'gmx.com', 'gmx.de', 'web.de', 'mail.com']],
  ['ovh', ['ovh.net', 'ovh.com', 'ovh.ca', 'ovh.de', 'ovh.co.uk']],
  ['ionos', ['ionos.com', 'ionos.de', 'ionos.co.uk', 'ionos.fr', 'ionos.es', 'ionos.it', 'ionos.ca', 'ionos.mx', '1and1.com', '1and1.co.uk', 'kundenserver.de', 'perfora.net', 'oneandone.net']],
  ['proton', ['protonmail.ch', 'protonmail.com', 'proton.me', 'proton.ch']],
  ['yandex', ['yandex.ru', 'yandex.net', 'yandex.com', 'ya.ru']],
  ['mailru', ['mail.ru']],
];

/** Proton Mail Bridge's default local ports (IMAP, SMTP). */
const BRIDGE_PORTS = { imap: 1143, smtp: 1025 };

const bare = (h: string | null | undefined) => (h ?? '').trim().toLowerCase().replace(/\.$/, '');
const under = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);
const isIpLiteral = (h: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(h) || h.includes(':') || (h.startsWith('[') && h.endsWith(']'));
const isLoopback = (h: string) => h === 'localhost' || h.startsWith('127.') || h === '::1' || h === '[::1]';

/** The family a host belongs to, or null. */
export function familyOf(host: string): string | null {
  const h = bare(host);
  if (!h) return null;
  for (const [label, suffixes] of FAMILIES) if (suffixes.some((s) => under(h, s))) return label;
  return null;
}

/**
 * A host's registrable domain, near enough without the public suffix list: its last two labels,
 * or three where the second-last is a generic second level under a country code (mail.example.co.uk
 * is example.co.uk).
 */
export function baseDomain(host: string): string {
  const labels = bare(host).split('.').filter((l) => l !== '');
  const n = labels.length;
  if (n <= 2) return labels.join('.');
  const second = labels[n - 2]!;
  const cc = labels[n - 1]!.length === 2;
  const take = cc && ['co', 'com', 'net', 'org', 'ac', 'gov', 'edu', 'or', 'ne', 'gv'].includes(second) ? 3 : 2;
  return labels.slice(n - take).join('.');
}

export function warmupProvider(c: ProviderClues): ProviderVerdict {
  if (c.kind === 'gmail') return { label: 'google', reason: 'connected through the Gmail API' };
  if (c.kind === 'graph') return { label: 'microsoft', reason: 'connected through Microsoft Graph' };
  const domain = bare(c.domain);
  const smtp = bare(c.smtp?.host);
  const imap = bare(c.imap?.host);
  const mx = (c.mx ?? []).map(bare).filter((h) => h !== '' && h !== '.');
  for (const [what, host] of [['SMTP host', smtp], ['IMAP host', imap]] as const) {
    const f = host ? familyOf(host) : null;
    if (f) return { label: f, reason: `${what} ${host}` };
  }
  for (const host of mx) {
    const f = familyOf(host);
    if (f) return { label: f, reason: `MX ${host}` };
  }
  if ((imap && isLoopback(imap) && c.imap?.port === BRIDGE_PORTS.imap) || (smtp && isLoopback(smtp) && c.smtp?.port === BRIDGE_PORTS.smtp)) {
    return { label: 'proton', reason: 'Proton Mail Bridge on this machine (its default ports)' };
  }
  const hosts = [smtp, imap].filter((h) => h !== '');
  const own = [...hosts, ...mx].find((h) => domain !== '' && under(h, baseDomain(domain)));
  if (own) return { label: `self:${domain}`, reason: `its own server (${own})` };
  const named = hosts.find((h) => !isIpLiteral(h) && !isLoopback(h) && h.includes('.'));
  if (named) return { label: `host:${baseDomain(named)}`, reason: `hosted at ${named}` };
  if (hosts.length > 0 && domain !== '') return { label: `self:${domain}`, reason: `its own server (${hosts[0]})` };
  if (mx.length > 0) return { label: `host:${baseDomain(mx[0]!)}`, reason: `MX ${mx[0]}` };
  return { label: 'other', reason: 'no host names or MX known' };
}
