import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { cadenzaError } from './errors.ts';

/**
 * The one way Cadenza builds a DNS resolver: node:dns's Resolver (c-ares), pointed at a configured
 * server or the system's. Shared by the sending-domain check (sending/dns/check.ts: TXT) and list
 * hygiene (leads/hygiene/: MX, A, AAAA), so both read the same setting the same way; tests point it
 * at their local server (test/dns-server.ts), never at the machine's resolver.
 */
export interface ResolverOptions {
  /** 'HOST:PORT', '[V6]:PORT' or 'HOST' (port 53); HOST is an IP address. Default: the system's resolvers. */
  server?: string;
  timeoutMs?: number;
}

/** Parses a resolver address (--resolver, CADENZA_DNS_RESOLVER); throws INVALID_INPUT for anything but an IP address with an optional port. */
export function parseResolverAddress(s: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? /^([^:]+)(?::(\d+))?$/.exec(s) ?? (isIP(s) === 6 ? [s, s, undefined] : null);
  const host = m?.[1];
  const port = m?.[2] === undefined ? 53 : Number(m[2]);
  if (!host || isIP(host) === 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw cadenzaError('INVALID_INPUT', `resolver '${s}' must be an IP address with an optional port (127.0.0.1:5353, [::1]:53)`, { resolver: s });
  }
  return { host, port };
}

/** A node:dns Resolver for these options. */
export function nodeResolver(o: ResolverOptions = {}): Resolver {
  // tries: 2 — one retransmission over UDP; a check that waits longer is worse than one that says "error".
  const r = new Resolver({ timeout: o.timeoutMs ?? 5000, tries: 2 });
  if (o.server) {
    const { host, port } = parseResolverAddress(o.server);
    r.setServers([isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`]);
  }
  return r;
}
