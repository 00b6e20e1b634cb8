import { nodeResolver } from '../../common/dns-resolver.ts';

/**
 * Is the customer's host a CNAME to this installation's public host? Checked before every
 * issuance and renewal: the CA would validate a name pointed at us anyway, but a clear "your CNAME
 * points at X" beats an ACME error, and a customer who moved the name away must not keep getting
 * certificates from us.
 */

/** What the check needs from DNS (declared here, the user: tests pass a resolver on test/dns-server.ts). */
export interface CnameResolver {
  resolveCname(host: string): Promise<string[]>;
}

/**
 * The configured resolver (CADENZA_DNS_RESOLVER: one address, '127.0.0.1:5353') or the system's,
 * built the one way Cadenza builds them (common/dns-resolver.ts), with a deadline of 2 s a try so a
 * dead server answers in seconds and never holds the job.
 */
export function dnsResolver(servers?: readonly string[]): CnameResolver {
  const r = nodeResolver({ ...(servers?.[0] ? { server: servers[0] } : {}), timeoutMs: 2000 });
  return { resolveCname: (host) => r.resolveCname(host) };
}

export type CnameVerdict = { ok: true } | { ok: false; reason: string };

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');

export async function checkCname(resolver: CnameResolver, host: string, publicHost: string): Promise<CnameVerdict> {
  const want = bare(publicHost);
  let targets: string[];
  try {
    targets = await resolver.resolveCname(host);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return { ok: false, reason: `${host} has no CNAME record yet: add "${host} CNAME ${want}." at your DNS provider` };
    return { ok: false, reason: `the DNS lookup of ${host} failed (${code ?? 'error'}); it is tried again later` };
  }
  if (targets.some((t) => bare(t) === want)) return { ok: true };
  return { ok: false, reason: `${host} is a CNAME to ${targets.map(bare).join(', ')}, not to ${want}` };
}
