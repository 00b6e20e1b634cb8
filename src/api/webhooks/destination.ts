import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { cadenzaError } from '../../common/errors.ts';

/**
 * Where a webhook may be sent. A webhook URL is chosen by a workspace admin, and the server posts
 * to it from inside the installation's network: without a check, `http://169.254.169.254/` (cloud
 * metadata) or `http://localhost:5432/` would be reachable through it (server-side request
 * forgery). Refused: loopback, private (RFC 1918, ULA), link-local, CGNAT, unspecified, multicast
 * and reserved ranges, for IPv4 and IPv6 (IPv4-mapped IPv6 included), unless the installation
 * allows private destinations (its receivers are on its own network; tests use loopback).
 *
 * The check is made on the address the connection is actually opened to (`vettedLookup` is the
 * socket's DNS lookup), so a name that resolves to a public address when the endpoint is saved and
 * to 127.0.0.1 at delivery time (DNS rebinding) is still refused.
 */
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** True for an address a webhook must not reach unless private destinations are allowed. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

export interface DestinationPolicy {
  /** Loopback and private networks allowed (CADENZA_WEBHOOK_ALLOW_PRIVATE); plain http too. */
  allowPrivate: boolean;
}

/**
 * Checks an endpoint URL when it is saved: http(s) only, https unless private destinations are
 * allowed, no credentials in it, and no literal private address. Names are checked at delivery.
 */
export function checkEndpointUrl(text: string, policy: DestinationPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw cadenzaError('INVALID_INPUT', `not a URL: ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    throw cadenzaError('INVALID_INPUT', policy.allowPrivate ? 'a webhook URL is http or https' : 'a webhook URL must be https');
  }
  if (url.username || url.password) throw cadenzaError('INVALID_INPUT', 'a webhook URL carries no user name or password (the signature authenticates the sender)');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && isPrivateAddress(host)))) {
    throw cadenzaError('INVALID_INPUT', `a webhook URL may not point at a loopback or private address (${url.hostname})`);
  }
  return url;
}

/** A socket `lookup` that resolves as usual and refuses private answers (unless allowed). */
export function vettedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const usable = policy.allowPrivate ? addresses : addresses.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        return callback(Object.assign(new Error(`${hostname} resolves only to loopback or private addresses (${addresses.map((a) => a.address).join(', ')})`), { code: 'EWEBHOOKPRIVATE' }), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
