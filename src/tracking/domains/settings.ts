import { readFileSync } from 'node:fs';
import type { Config } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { CustomHostSettings } from './custom-hosts.ts';

/**
 * Custom tracking hosts' settings from the configuration (common/config.ts): on when
 * CADENZA_TRACKING_HTTPS_PORT is set. The public host is CADENZA_PUBLIC_HOST, else the host of
 * CADENZA_PUBLIC_URL; with neither there is nothing for customers to point at, which is an error.
 */
export function trackingDomainSettingsFrom(cfg: Config): CustomHostSettings | undefined {
  if (cfg.CADENZA_TRACKING_HTTPS_PORT === undefined) return undefined;
  const publicHost = cfg.CADENZA_PUBLIC_HOST ?? (cfg.CADENZA_PUBLIC_URL ? new URL(cfg.CADENZA_PUBLIC_URL).hostname : undefined);
  if (!publicHost) throw cadenzaError('CONFIG_INVALID', 'CADENZA_TRACKING_HTTPS_PORT needs CADENZA_PUBLIC_HOST (or CADENZA_PUBLIC_URL): the name customers point their tracking hosts at');
  let directoryCa: string | undefined;
  if (cfg.CADENZA_ACME_CA_FILE) {
    try {
      directoryCa = readFileSync(cfg.CADENZA_ACME_CA_FILE, 'utf8');
    } catch {
      throw cadenzaError('CONFIG_INVALID', `CADENZA_ACME_CA_FILE ${cfg.CADENZA_ACME_CA_FILE} cannot be read`);
    }
  }
  // One address, checked by the config (parseResolverAddress).
  const dnsServers = cfg.CADENZA_DNS_RESOLVER ? [cfg.CADENZA_DNS_RESOLVER] : undefined;
  return {
    httpsPort: cfg.CADENZA_TRACKING_HTTPS_PORT,
    httpsHost: cfg.CADENZA_TRACKING_HTTPS_HOST ?? cfg.HOST,
    publicHost: publicHost.toLowerCase(),
    acme: {
      directoryUrl: cfg.CADENZA_ACME_DIRECTORY_URL,
      ...(directoryCa ? { directoryCa } : {}),
      ...(cfg.CADENZA_ACME_EMAIL ? { email: cfg.CADENZA_ACME_EMAIL } : {}),
    },
    ...(dnsServers?.length ? { dnsServers } : {}),
  };
}
