import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { addressCategory, isLocalName } from '../../common/destination-policy.ts';
import { cadenzaError } from '../../common/errors.ts';

/**
 * Where a webhook may be sent: the installation's one destination policy
 * (common/destination-policy.ts), applied to webhook URLs. Without CADENZA_WEBHOOK_ALLOW_PRIVATE
 * only public addresses; with it, loopback, private, link-local and reserved ones too (receivers
 * on the installation's own network; tests use loopback), over http as well.
 *
 * The check is made on the address the connection is actually opened to (`vettedLookup` is the
 * socket's DNS lookup), so a name that resolves to a public address when the endpoint is saved and
 * to 127.0.0.1 at delivery time (DNS rebinding) is still refused.
 *
 * True for an address a webhook must not reach unless private destinations are allowed. */
export function isPrivateAddress(address: string): boolean {
  return addressCategory(address) !== 'public';
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
  if (!policy.allowPrivate && (isLocalName(host) || (isIP(host) && isPrivateAddress(host)))) {
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
