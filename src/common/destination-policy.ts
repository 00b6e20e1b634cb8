import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { cadenzaError } from './errors.ts';

/**
 * Where Cadenza may open a connection that a workspace user chose: a webhook URL
 * (api/webhooks/destination.ts) or a mailbox's SMTP and IMAP hosts (mailbox/mail-hosts.ts). The
 * server connects from inside the installation's network, so without a check such a host would
 * reach `169.254.169.254` (cloud metadata), `localhost:5432` or the office network for whoever
 * can add a webhook or a mailbox (server-side request forgery).
 *
 * Each address falls in one category; a policy names the categories it allows. Public addresses
 * are always allowed; loopback and private ones only where the operator enables them (a
 * self-hosted team's mail server is often on its own network; tests run on loopback); link-local
 * (metadata endpoints) and reserved ranges only for webhooks of an installation that allows
 * everything private, as before.
 *
 * A name is checked on the addresses it resolves to when the connection is opened, and the
 * connection goes to that vetted address: a name that resolves to a public address when it is
 * saved and to 127.0.0.1 later (DNS rebinding) is still refused.
 */
export type AddressCategory = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

const ranges: Record<Exclude<AddressCategory, 'public'>, Array<[string, number, 'ipv4' | 'ipv6']>> = {
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  private: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['100.64.0.0', 10, 'ipv4'], ['fc00::', 7, 'ipv6']],
  'link-local': [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']],
  reserved: [
    ['0.0.0.0', 8, 'ipv4'], ['192.0.0.0', 24, 'ipv4'], ['192.0.2.0', 24, 'ipv4'], ['198.18.0.0', 15, 'ipv4'], ['198.51.100.0', 24, 'ipv4'],
    ['203.0.113.0', 24, 'ipv4'], ['224.0.0.0', 4, 'ipv4'], ['240.0.0.0', 4, 'ipv4'],
    ['::', 128, 'ipv6'], ['64:ff9b::', 96, 'ipv6'], ['100::', 64, 'ipv6'], ['2001:db8::', 32, 'ipv6'], ['ff00::', 8, 'ipv6'],
  ],
};
const lists = Object.entries(ranges).map(([category, nets]) => {
  const list = new BlockList();
  for (const [net, bits, family] of nets) list.addSubnet(net, bits, family);
  return [category as AddressCategory, list] as const;
});

/** The category of an IP address (IPv4-mapped IPv6 as its IPv4); anything not an IP is 'reserved'. */
export function addressCategory(address: string): AddressCategory {
  const family = isIP(address);
  if (family === 0) return 'reserved';
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address) : null;
  const [addr, type] = mapped ? [mapped[1]!, 'ipv4' as const] : [address, family === 4 ? ('ipv4' as const) : ('ipv6' as const)];
  for (const [category, list] of lists) if (list.check(addr, type)) return category;
  return 'public';
}

export interface DestinationPolicy {
  /** The categories besides 'public' that may be reached. */
  allow: ReadonlySet<AddressCategory>;
  /** What the message says to set to allow more (a setting's name). */
  setting: string;
}

export function allows(policy: DestinationPolicy, address: string): boolean {
  const c = addressCategory(address);
  return c === 'public' || policy.allow.has(c);
}

/** Resolves a host name to its addresses; injectable so tests answer from a DNS server of their own. */
export type ResolveHost = (host: string) => Promise<string[]>;

export const systemResolve: ResolveHost = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** True for a name that means this machine whatever DNS says. */
export function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * The address to connect to for a host: the host itself when it is an IP literal, else the first
 * address it resolves to that the policy allows. Refused (INVALID_INPUT, naming the host and its
 * category) when none is allowed; a resolution failure is passed on as is.
 */
export async function vetDestination(host: string, policy: DestinationPolicy, resolve: ResolveHost = systemResolve): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  const refuse = (what: string) =>
    cadenzaError('INVALID_INPUT', `${host} ${what}: Cadenza does not connect there unless the operator allows it (${policy.setting})`, { host });
  if (isIP(bare)) {
    if (!allows(policy, bare)) throw refuse(`is a ${addressCategory(bare)} address`);
    return bare;
  }
  if (isLocalName(bare) && !policy.allow.has('loopback')) throw refuse('is this machine (loopback)');
  const addresses = await resolve(bare);
  const usable = addresses.find((a) => allows(policy, a));
  if (!usable) throw refuse(`resolves only to ${[...new Set(addresses.map(addressCategory))].join(', ')} addresses (${addresses.join(', ')})`);
  return usable;
}
