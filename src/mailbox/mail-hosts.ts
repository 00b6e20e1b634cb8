import { isIP } from 'node:net';
import { isLocalName, vetDestination, type DestinationPolicy, type ResolveHost, systemResolve } from '../common/destination-policy.ts';
import type { Endpoint } from './settings.ts';

/**
 * A mailbox's SMTP and IMAP hosts under the installation's destination policy
 * (common/destination-policy.ts): public addresses always; private ranges (RFC 1918, ULA, CGNAT)
 * only with CADENZA_MAIL_ALLOW_PRIVATE (an internal mail server); loopback only with
 * CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS (the test mail bed, a local relay); link-local (cloud
 * metadata) and reserved ranges never. Checked when the mailbox is saved and again on every
 * connection, to the vetted address (DNS rebinding).
 */
export interface MailHostSettings {
  allowPrivate: boolean;
  allowLoopback: boolean;
  /** Resolves names (a test's DNS server on loopback; default: the system's). */
  resolve?: ResolveHost;
}

/** Read from the environment, where config.ts declares both settings (default: both off). */
export function mailHostSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): MailHostSettings {
  return { allowPrivate: env.CADENZA_MAIL_ALLOW_PRIVATE === 'true', allowLoopback: env.CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS === 'true' };
}

export function mailHostPolicy(s: MailHostSettings): DestinationPolicy {
  const allow = new Set<'loopback' | 'private'>();
  if (s.allowPrivate) allow.add('private');
  if (s.allowLoopback) allow.add('loopback');
  return { allow, setting: 'CADENZA_MAIL_ALLOW_PRIVATE=true for private networks, CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS=true for loopback' };
}

/** The address to open a connection to, refused with INVALID_INPUT where the policy says no. */
export function vetMailHost(host: string, s: MailHostSettings = mailHostSettingsFromEnv()): Promise<string> {
  return vetDestination(host, mailHostPolicy(s), s.resolve ?? systemResolve);
}

/**
 * When a mailbox is saved: an IP literal or a local name (localhost) the policy refuses is refused
 * now, with the setting to change. A name is not resolved here: what it resolves to at save time
 * says nothing about later (DNS rebinding), so every connection checks it (pinnedHost).
 */
export async function checkMailEndpoints(endpoints: ReadonlyArray<Endpoint | undefined>, s: MailHostSettings = mailHostSettingsFromEnv()): Promise<void> {
  for (const e of endpoints) {
    const bare = e?.host.replace(/^\[|\]$/g, '');
    if (bare !== undefined && (isIP(bare) || isLocalName(bare))) await vetMailHost(e!.host, { ...s, resolve: async () => [] });
  }
}

/**
 * The connection options for an endpoint: the vetted address as the host, the name kept for TLS
 * (SNI and the certificate check), so the socket goes where the check looked.
 */
export async function pinnedHost(host: string, s: MailHostSettings = mailHostSettingsFromEnv()): Promise<{ host: string; servername?: string }> {
  const address = await vetMailHost(host, s);
  return isIP(host.replace(/^\[|\]$/g, '')) ? { host: address } : { host: address, servername: host };
}
