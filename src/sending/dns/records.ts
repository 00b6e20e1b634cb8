import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { cadenzaError } from '../../common/errors.ts';
import { dkimRecordName, dkimTxtValue, isHostname } from '../compose/dkim.ts';

/**
 * The DNS records a custom sending domain publishes so that mail from Cadenza's own relay is
 * authenticated: SPF (RFC 7208) naming the relay, DKIM (RFC 6376) with the public key, and DMARC
 * (RFC 7489) starting in monitoring mode (p=none) with aggregate reports, to be tightened once the
 * reports show every source passing.
 */

export type RecordKind = 'spf' | 'dkim' | 'dmarc';

export interface RecordSpec {
  kind: RecordKind;
  name: string;
  type: 'TXT';
  value: string;
  /** The value cut into character-strings of at most 255 octets (RFC 1035 §3.3), as a zone file needs them. */
  strings: string[];
}

export interface SendingDomainOptions {
  domain: string;
  /** DKIM selector (default 'cadenza'). */
  selector?: string;
  /** The relay's SPF host, published as include:<host>. */
  relayHost?: string | null;
  /** The relay's addresses, published as ip4:/ip6:. */
  relayIps?: readonly string[];
  /** PEM, private or public; without it there is no DKIM record to print. */
  dkimKey?: string | null;
  /** Where DMARC aggregate reports go (default dmarc@<domain>). */
  rua?: string | null;
}

export interface SendingDomainPlan {
  domain: string;
  selector: string;
  records: RecordSpec[];
  /** What could not be computed and why (e.g. no relay given: no SPF record). */
  notes: string[];
  /** The SPF mechanisms the relay needs, for checking a record that also names other senders. */
  spfMechanisms: string[];
  rua: string;
}

export const DEFAULT_SELECTOR = 'cadenza';

/** Lower-case ASCII (punycode) form without a trailing dot; throws INVALID_INPUT for a non-domain. */
export function normaliseDomain(input: string, what = 'domain'): string {
  const d = domainToASCII(input.trim().replace(/\.$/, '')).toLowerCase();
  if (!d || !isHostname(d)) throw cadenzaError('INVALID_INPUT', `${what} '${input}' is not a domain name`, { [what]: input });
  return d;
}

/** Splits a TXT value into character-strings of at most 255 octets (ASCII values here). */
export function splitTxt(value: string, size = 255): string[] {
  const out: string[] = [];
  for (let i = 0; i < value.length; i += size) out.push(value.slice(i, i + size));
  return out.length ? out : [''];
}

function spfMechanism(ip: string): string {
  const [addr, prefix, ...rest] = ip.trim().split('/');
  const v = isIP(addr ?? '');
  const max = v === 4 ? 32 : 128;
  if (v === 0 || rest.length || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= max))) {
    throw cadenzaError('INVALID_INPUT', `relay address '${ip}' is not an IPv4 or IPv6 address (optionally with /prefix)`, { ip });
  }
  return `${v === 4 ? 'ip4' : 'ip6'}:${addr}${prefix !== undefined && Number(prefix) !== max ? `/${prefix}` : ''}`;
}

function normaliseRua(rua: string | null | undefined, domain: string): string {
  const addr = (rua ?? `dmarc@${domain}`).trim().replace(/^mailto:/i, '');
  if (!/^[^\s@<>,;!]+@[^\s@<>,;!]+\.[^\s@<>,;!]+$/.test(addr)) throw cadenzaError('INVALID_INPUT', `DMARC report address '${rua}' is not an e-mail address`, { rua });
  return addr;
}

export function sendingRecords(o: SendingDomainOptions): SendingDomainPlan {
  const domain = normaliseDomain(o.domain);
  const selector = (o.selector ?? DEFAULT_SELECTOR).trim().toLowerCase();
  if (!/^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/.test(selector)) {
    throw cadenzaError('INVALID_INPUT', `DKIM selector '${o.selector}' is not valid (letters, digits and hyphens)`, { selector: o.selector });
  }
  const records: RecordSpec[] = [];
  const notes: string[] = [];
  const add = (kind: RecordKind, name: string, value: string) => records.push({ kind, name, type: 'TXT', value, strings: splitTxt(value) });

  const spfMechanisms = [
    ...(o.relayHost ? [`include:${normaliseDomain(o.relayHost, 'relay host')}`] : []),
    ...(o.relayIps ?? []).map(spfMechanism),
  ];
  // ~all (softfail), not -all: while DMARC is at p=none, a forgotten sender should be reported, not bounced.
  if (spfMechanisms.length) add('spf', domain, `v=spf1 ${spfMechanisms.join(' ')} ~all`);
  else notes.push('SPF: give the relay (--relay-host HOST or --relay-ip IP) to get the SPF record');

  if (o.dkimKey) add('dkim', dkimRecordName(selector, domain), dkimTxtValue(o.dkimKey));
  else notes.push('DKIM: give the key (--dkim-key FILE, or --generate-key FILE for a new one) to get the DKIM record');

  const rua = normaliseRua(o.rua, domain);
  add('dmarc', `_dmarc.${domain}`, `v=DMARC1; p=none; rua=mailto:${rua}`);
  return { domain, selector, records, notes, spfMechanisms, rua };
}

/** Tag=value pairs of a DKIM or DMARC record (RFC 6376 §3.2); names lower-cased, values trimmed. */
export function parseTags(value: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim().toLowerCase();
    if (k && !tags.has(k)) tags.set(k, part.slice(eq + 1).trim());
  }
  return tags;
}
