import { isIP } from 'node:net';
import { cadenzaError } from '../../common/errors.ts';
import { isHostname } from '../compose/dkim.ts';
import type { DomainResolver } from './check.ts';

/**
 * DNS blocklists (RFC 5782). A list is a DNS zone: to ask whether 192.0.2.10 is listed, look up
 * the A record of `10.2.0.192.<zone>` (IPv6: the 32 nibbles reversed, RFC 5782 §2.4); for a domain
 * list (Spamhaus DBL style), `<domain>.<zone>`. NXDOMAIN means not listed; an answer in 127.0.0.0/8
 * means listed, its last octets saying why (the zone's own table, below).
 *
 * Spamhaus answers 127.255.255.x when it REFUSES the query (252: a typing error in the zone name,
 * 254: asked through a public or open resolver, 255: too many queries). That is not a listing:
 * it is reported as `refused` with the reason, so nobody delists a domain that is not listed, nor
 * believes a clean result that was never given. Any other answer (an ISP resolver that answers
 * every NXDOMAIN with its own search page) is an error, never "listed".
 */

export interface BlocklistZones {
  /** Lists of IP addresses (reversed octets): Spamhaus ZEN, ... */
  ip: string[];
  /** Lists of domains (`<domain>.<zone>`): Spamhaus DBL, ... */
  domain: string[];
}

/**
 * The default lists: Spamhaus ZEN (SBL, CSS, XBL, PBL) and DBL. Spamhaus's public mirrors are free
 * only for low-volume, non-commercial use, and refuse queries that arrive through public resolvers
 * (8.8.8.8, 1.1.1.1): a commercial installation uses its Data Query Service zones
 * (`<key>.zen.dq.spamhaus.net`) or other lists (docs/deliverability.md, "Domain health").
 */
export const DEFAULT_BLOCKLISTS: BlocklistZones = { ip: ['zen.spamhaus.org'], domain: ['dbl.spamhaus.org'] };

export const NO_BLOCKLISTS: BlocklistZones = { ip: [], domain: [] };

/** Parses a comma-separated list of zones (CADENZA_DNSBL_IP_ZONES, --blocklist); empty means none. */
export function parseZones(value: string, what: string, code: 'CONFIG_INVALID' | 'INVALID_INPUT' = 'CONFIG_INVALID'): string[] {
  const zones = value.split(',').map((z) => z.trim().toLowerCase().replace(/\.$/, '')).filter(Boolean);
  for (const z of zones) if (!isHostname(z)) throw cadenzaError(code, `${what}: '${z}' is not a DNS zone name`, { zone: z });
  return zones;
}

/** The name to look up: reversed IPv4 octets, reversed IPv6 nibbles, or the domain itself. */
export function blocklistQueryName(target: string, zone: string): string {
  const v = isIP(target);
  if (v === 4) return `${target.split('.').reverse().join('.')}.${zone}`;
  if (v === 6) return `${expandIpv6(target).split('').reverse().join('.')}.${zone}`;
  return `${target}.${zone}`;
}

/** The 32 hex digits of an IPv6 address (`::` expanded, an embedded IPv4 tail converted). */
function expandIpv6(ip: string): string {
  let s = ip.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const o = v4[1]!.split('.').map(Number);
    s = s.slice(0, -v4[1]!.length) + `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => g.padStart(4, '0')).join('');
}

/** Spamhaus return codes (www.spamhaus.org/faqs/dnsbl-usage); other zones' codes are shown as they are. */
const SPAMHAUS: Record<string, string> = {
  '127.0.0.2': 'SBL: a known spam source or spam operation',
  '127.0.0.3': 'SBL CSS: a snowshoe spam source',
  '127.0.0.4': 'XBL: an infected or hijacked machine (exploits, botnets)',
  '127.0.0.5': 'XBL: an infected or hijacked machine',
  '127.0.0.6': 'XBL: an infected or hijacked machine',
  '127.0.0.7': 'XBL: an infected or hijacked machine',
  '127.0.0.9': 'SBL DROP: a hijacked or spammer-controlled network',
  '127.0.0.10': 'PBL: an end-user address range that should not send mail directly (ISP policy)',
  '127.0.0.11': 'PBL: an end-user address range that should not send mail directly (Spamhaus)',
  '127.0.1.2': 'DBL: a spam domain',
  '127.0.1.4': 'DBL: a phishing domain',
  '127.0.1.5': 'DBL: a malware domain',
  '127.0.1.6': 'DBL: a botnet command-and-control domain',
  '127.0.1.102': 'DBL: an abused legitimate domain (spam)',
  '127.0.1.103': 'DBL: an abused legitimate spammed redirector domain',
  '127.0.1.104': 'DBL: an abused legitimate domain (phishing)',
  '127.0.1.105': 'DBL: an abused legitimate domain (malware)',
  '127.0.1.106': 'DBL: an abused legitimate domain (botnet command and control)',
};

const REFUSED: Record<string, string> = {
  '127.255.255.252': 'the list refused the query: typing error in the zone name',
  '127.255.255.254': 'the list refused the query: it came through a public or open resolver (use your own resolver, or the list\'s paid query service)',
  '127.255.255.255': 'the list refused the query: too many queries from this resolver',
};

export type BlocklistVerdict =
  | { status: 'clear' }
  | { status: 'listed'; codes: string[]; meaning: string[]; reason?: string }
  | { status: 'refused'; codes: string[]; meaning: string[] }
  | { status: 'error'; error: string };

/** What an answer means. Pure: the A records of the query name (empty: NXDOMAIN or no data). */
export function readBlocklistAnswer(addresses: readonly string[]): BlocklistVerdict {
  if (addresses.length === 0) return { status: 'clear' };
  const refused = addresses.filter((a) => a.startsWith('127.255.255.'));
  if (refused.length) return { status: 'refused', codes: refused, meaning: refused.map((c) => REFUSED[c] ?? `the list refused the query (code ${c})`) };
  const odd = addresses.filter((a) => !a.startsWith('127.'));
  if (odd.length) return { status: 'error', error: `answer ${odd.join(', ')} is not a blocklist code (127.0.0.0/8): the resolver may rewrite NXDOMAIN answers` };
  return { status: 'listed', codes: [...addresses], meaning: addresses.map((c) => SPAMHAUS[c] ?? `listed (code ${c})`) };
}

const gone = (code: string | undefined) => code === 'ENOTFOUND' || code === 'ENODATA';

/**
 * Asks one list about one target. A listing's TXT record usually says why (a URL to the lookup
 * page); it is read too, and its failure costs nothing.
 */
export async function queryBlocklist(resolver: DomainResolver, target: string, zone: string): Promise<BlocklistVerdict & { query: string }> {
  const query = blocklistQueryName(target, zone);
  let addresses: string[];
  try {
    addresses = await resolver.resolve4(query);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (gone(code)) return { status: 'clear', query };
    return { status: 'error', error: `${code ?? 'error'}: ${(e as Error).message}`, query };
  }
  const v = readBlocklistAnswer(addresses);
  if (v.status !== 'listed') return { ...v, query };
  const txt = await resolver.resolveTxt(query).catch(() => [] as string[][]);
  const reason = txt.map((c) => c.join('')).join(' ').slice(0, 300);
  return { ...v, ...(reason ? { reason } : {}), query };
}
