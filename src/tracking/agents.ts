/**
 * Who fetches tracking URLs besides people: the registry the classifier (classify.ts) reads. One
 * entry per known fetcher, with the evidence that names it. Patterns match the User-Agent header;
 * address blocks match the client IP. Add a fetcher here, with where its signature comes from.
 */

export interface KnownAgent {
  /** Stable name, stored in the reason (`scanner_ua:mimecast`). */
  name: string;
  pattern: RegExp;
}

/**
 * Mail security gateways that follow (and often fetch images of) every link of incoming mail at
 * delivery, to detonate it in a sandbox. Their own product names appear in the UA when they do not
 * pose as a browser; when they do, the timing and burst rules in classify.ts catch them instead.
 */
export const securityScanners: readonly KnownAgent[] = [
  { name: 'mimecast', pattern: /mimecast/i },
  { name: 'proofpoint', pattern: /proofpoint|urldefense/i },
  { name: 'barracuda', pattern: /barracuda/i },
  { name: 'cisco_ironport', pattern: /ironport|cisco[ -]?(secure|esa)/i },
  // Microsoft Defender for Office 365 Safe Links, and Office's own link probes (HEAD/OPTIONS before
  // opening a link from Outlook or Word).
  { name: 'microsoft_safelinks', pattern: /safelinks|safe ?links|defender/i },
  { name: 'microsoft_office_discovery', pattern: /microsoft office (existence|protocol) discovery|ms-office[^a-z]*discovery/i },
  { name: 'bing_preview', pattern: /bingpreview/i },
  { name: 'symantec', pattern: /symantec|messagelabs|broadcom/i },
  { name: 'trend_micro', pattern: /trend ?micro/i },
  { name: 'sophos', pattern: /sophos/i },
  { name: 'fortinet', pattern: /forti(mail|guard|net)/i },
  { name: 'forcepoint', pattern: /forcepoint|websense/i },
  { name: 'zscaler', pattern: /zscaler/i },
  { name: 'check_point', pattern: /check ?point/i },
  { name: 'trustwave', pattern: /trustwave|mailmarshal/i },
  { name: 'hornetsecurity', pattern: /hornetsecurity/i },
  { name: 'url_scanner', pattern: /url ?scan|link ?check|link ?scan/i },
];

/** Programs, crawlers and previewers: never a person reading the message. */
export const bots: readonly KnownAgent[] = [
  // `[a-z]bot/` and a lone `bot` word, not any `bot` substring: a CUBOT phone is a person.
  { name: 'crawler', pattern: /[a-z]bot\/|\bbot\b|crawler|spider|slurp/i },
  { name: 'http_library', pattern: /^(curl|wget|python|go-http-client|java\/|okhttp|axios|node-fetch|undici|got |libwww|lwp-|httpclient|apache-httpclient|ruby|php|perl|aiohttp|scrapy|postmanruntime|insomnia)/i },
  { name: 'headless_browser', pattern: /headlesschrome|phantomjs|puppeteer|playwright|selenium/i },
  { name: 'link_preview', pattern: /facebookexternalhit|slackbot|twitterbot|linkedinbot|whatsapp|telegrambot|discordbot|skypeuripreview|embedly/i },
];

/**
 * Gmail rewrites every image URL to its proxy (googleusercontent.com) and fetches it when the
 * recipient opens the message, then serves later opens from its cache: an open is a person, but
 * only the first one is seen, and the IP is Google's.
 */
export const GMAIL_PROXY = /GoogleImageProxy|ggpht\.com/i;
/** Yahoo and AOL mail fetch images through their proxy when the message is opened, like Gmail. */
export const YAHOO_PROXY = /YahooMailProxy/i;

/**
 * Apple Mail Privacy Protection (iOS 15+, macOS 12+) prefetches every remote image of every
 * message through Apple's proxies as soon as it reaches the device, whether or not anyone reads
 * it. Its requests carry a bare `Mozilla/5.0` user agent and come from Apple's own address blocks.
 */
export const APPLE_MPP_UA = /^Mozilla\/5\.0$/;
const appleBlocks: Cidr[] = [
  cidr('17.0.0.0', 8), // ARIN, Apple Inc. since 1990
  cidr('2620:149::', 32), // ARIN, Apple Inc.
  cidr('2a01:b740::', 32), // RIPE, Apple Distribution International
];

/**
 * Exchange Online Protection's published outbound ranges: Safe Links and Defender detonations of
 * links in mail to Microsoft 365 tenants come from these (and from other Azure addresses, which
 * only the timing rules can catch).
 */
const microsoftEopBlocks: Cidr[] = [cidr('40.92.0.0', 15), cidr('40.107.0.0', 16), cidr('52.100.0.0', 14), cidr('104.47.0.0', 17), cidr('2a01:111:f400::', 48)];

/** Desktop and mobile mail clients that load images only when a person opens the message. */
export const MAIL_CLIENTS = /microsoft outlook|outlook-(ios|android)|ms-office|thunderbird|airmail|spark\/|mailbird|em client|postbox/i;
/** A browser or an embedded web view: a person's engine, unless something above said otherwise. */
export const BROWSER = /^Mozilla\/5\.0 \(.+\)/;

export function isAppleAddress(ip: string | null): boolean {
  return inBlocks(appleBlocks, ip);
}

export function isMicrosoftEopAddress(ip: string | null): boolean {
  return inBlocks(microsoftEopBlocks, ip);
}

/**
 * An address block as 16-bit groups (IPv4 as two groups). Hand-written rather than node:net's
 * BlockList, whose check() builds a SocketAddress object per call: classifying a batch of a
 * thousand events spent more time there than in the rest of the classifier.
 */
interface Cidr {
  groups: number[];
  bits: number;
  v6: boolean;
}

function cidr(address: string, bits: number): Cidr {
  const groups = parseIp(address);
  if (!groups) throw new Error(`bad address block ${address}/${bits}`);
  return { groups, bits, v6: groups.length === 8 };
}

function inBlocks(blocks: readonly Cidr[], ip: string | null): boolean {
  if (!ip) return false;
  const g = parseIp(ip);
  if (!g) return false; // not an address: no evidence either way
  return blocks.some((b) => b.v6 === (g.length === 8) && prefixMatches(b, g));
}

function prefixMatches(b: Cidr, g: number[]): boolean {
  let bits = b.bits;
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((g[i]! & mask) !== (b.groups[i]! & mask)) return false;
  }
  return true;
}

/** IPv4 as 2 groups, IPv6 as 8 (an IPv4-mapped ::ffff:a.b.c.d as IPv4, which it is); null if neither. */
export function parseIp(ip: string): number[] | null {
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/i.exec(ip);
  if (v4) {
    const o = v4.slice(1, 5).map(Number);
    if (o.some((x) => x > 255)) return null;
    return [(o[0]! << 8) | o[1]!, (o[2]! << 8) | o[3]!];
  }
  if (ip.length > 45 || !/^[0-9a-f:]+$/i.test(ip)) return null;
  const halves = ip.split('::');
  if (halves.length > 2) return null;
  const part = (s: string) => (s === '' ? [] : s.split(':'));
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(missing).fill('0'), ...tail];
  if (all.some((h) => h.length === 0 || h.length > 4)) return null;
  return all.map((h) => parseInt(h, 16));
}

/**
 * The first agent of the list whose pattern matches. Most user agents match none (people's
 * browsers), so the list is first tried as one regular expression, the agents' patterns joined by
 * |: one scan of the string instead of one per agent. Only on a hit are the agents tried in order,
 * so that the list's order decides which one is named.
 */
export function match(list: readonly KnownAgent[], ua: string): KnownAgent | undefined {
  let any = compiled.get(list);
  if (!any) {
    for (const a of list) if (a.pattern.flags !== 'i') throw new Error(`agent pattern ${a.name} must have the i flag and no other`);
    any = new RegExp(list.map((a) => `(?:${a.pattern.source})`).join('|'), 'i');
    compiled.set(list, any);
  }
  return any.test(ua) ? list.find((a) => a.pattern.test(ua)) : undefined;
}

const compiled = new WeakMap<readonly KnownAgent[], RegExp>();
