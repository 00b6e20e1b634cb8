import type { Config } from '../../common/config.ts';
import { DEFAULT_BLOCKLISTS, parseZones, type BlocklistZones } from './blocklist.ts';
import { dnsResolver, parseResolverAddress } from './check.ts';
import type { DomainHealthSettings } from './domain-monitor.ts';

/** What the configuration says about domain checks; null: they are off (CADENZA_DOMAIN_CHECKS=off). */
export interface DomainCheckConfig {
  /** IP[:port] of the DNS server to ask; absent: the system's. */
  resolver?: string;
  blocklists: BlocklistZones;
  /** How often the daily passes (domain health, SSO domain proofs) look for domains due (default 1 h; tests make it short). */
  everyMs?: number;
}

/** Reads the CADENZA_DNS_* settings; a bad resolver or zone refuses the start with what is wrong. */
export function domainCheckConfigFrom(cfg: Pick<Config, 'CADENZA_DNS_RESOLVER' | 'CADENZA_DOMAIN_CHECKS' | 'CADENZA_DNSBL_IP_ZONES' | 'CADENZA_DNSBL_DOMAIN_ZONES'>): DomainCheckConfig | null {
  if (cfg.CADENZA_DOMAIN_CHECKS === 'off') return null;
  if (cfg.CADENZA_DNS_RESOLVER) parseResolverAddress(cfg.CADENZA_DNS_RESOLVER);
  return {
    ...(cfg.CADENZA_DNS_RESOLVER ? { resolver: cfg.CADENZA_DNS_RESOLVER } : {}),
    blocklists: {
      ip: cfg.CADENZA_DNSBL_IP_ZONES === undefined ? DEFAULT_BLOCKLISTS.ip : parseZones(cfg.CADENZA_DNSBL_IP_ZONES, 'CADENZA_DNSBL_IP_ZONES'),
      domain: cfg.CADENZA_DNSBL_DOMAIN_ZONES === undefined ? DEFAULT_BLOCKLISTS.domain : parseZones(cfg.CADENZA_DNSBL_DOMAIN_ZONES, 'CADENZA_DNSBL_DOMAIN_ZONES'),
    },
  };
}

/**
 * The checks' settings for a process: one resolver, the zones, and the host tracking CNAMEs point
 * to: the custom tracking hosts' public host when they are on (CADENZA_PUBLIC_HOST), else the
 * public URL's host.
 */
export function domainHealthSettings(c: DomainCheckConfig, publicUrl: string, trackingPublicHost?: string): DomainHealthSettings {
  return {
    // 3 s per query, one retry: a pass over many domains must not hang on a dead server.
    resolver: dnsResolver({ ...(c.resolver ? { server: c.resolver } : {}), timeoutMs: 3000 }),
    blocklists: c.blocklists,
    publicHost: trackingPublicHost ?? new URL(publicUrl).hostname,
  };
}
