import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressCategory, allows, type DestinationPolicy } from '../../../common/destination-policy.ts';

/** The most of a provider's answer read (a discovery document, a JWKS, a token answer): 1 MiB. */
const MAX_BODY = 1 << 20;

/** A socket lookup that resolves as usual and keeps only the addresses the policy allows. */
function policyLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const usable = addresses.filter((a) => allows(policy, a.address));
      if (usable.length === 0) {
        const kinds = [...new Set(addresses.map((a) => addressCategory(a.address)))].join(', ');
        return callback(Object.assign(new Error(`${hostname} resolves only to ${kinds} addresses: Cadenza does not connect there unless the operator allows it (${policy.setting})`), { code: 'EDESTINATION' }), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/**
 * The fetch oauth4webapi makes its requests to the identity provider with (its `customFetch`):
 * every connection goes to an address the destination policy allows, checked on the address the
 * socket actually opens, so a name that resolved to a public address when the issuer was saved and
 * to 127.0.0.1 now (DNS rebinding) is refused, as webhook deliveries are (webhooks/post.ts). No
 * redirects are followed (oauth4webapi asks for none), and an answer is read up to 1 MiB.
 */
export function vettedFetch(policy: DestinationPolicy) {
  return (url: string, init: { method?: string; headers?: Headers | Record<string, string>; body?: string | URLSearchParams | null; signal?: AbortSignal | null }): Promise<Response> =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      const host = u.hostname.replace(/^\[|\]$/g, '');
      // Node connects to an IP literal without calling `lookup`: checked here.
      if (isIP(host) && !allows(policy, host)) return reject(new Error(`${host} is a ${addressCategory(host)} address: Cadenza does not connect there unless the operator allows it (${policy.setting})`));
      const lib = u.protocol === 'https:' ? https : u.protocol === 'http:' ? http : null;
      if (!lib) return reject(new Error(`unsupported scheme ${u.protocol}`));
      const headers = init.headers instanceof Headers ? Object.fromEntries(init.headers.entries()) : { ...(init.headers ?? {}) };
      const body = init.body == null ? undefined : String(init.body);
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const req = lib.request(u, { method: init.method ?? 'GET', headers, lookup: policyLookup(policy), agent: false, ...(init.signal ? { signal: init.signal } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (c: Buffer) => {
          read += c.length;
          if (read > MAX_BODY) return res.destroy(new Error(`the answer of ${u.origin} is larger than 1 MiB`));
          chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const x of Array.isArray(v) ? v : [v]) h.append(k, x);
          const status = res.statusCode ?? 502;
          resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers: h }));
        });
      });
      req.on('error', reject);
      req.end(body);
    });
}
