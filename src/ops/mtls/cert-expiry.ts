import { readFileSync } from 'node:fs';
import { readCert } from './certificates.ts';
import { daysLeft } from './rotation.ts';

/**
 * Said at a role's start when the client certificate its database URL names (sslcert) expires
 * soon: PostgreSQL refuses it the moment it expires, and then every role on it stops connecting
 * at once. Undefined when the URL names no certificate, or it has time left.
 */
export const EXPIRY_WARNING_DAYS = 14;

export function clientCertExpiry(databaseUrl: string | undefined, nowMs: number): string | undefined {
  if (!databaseUrl) return undefined;
  const q = databaseUrl.indexOf('?');
  const file = q < 0 ? null : new URLSearchParams(databaseUrl.slice(q + 1)).get('sslcert');
  if (!file) return undefined;
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch {
    // Unreadable: the connection says so in plain words (store/pg-tls-errors.ts).
    return undefined;
  }
  const info = readCert(pem);
  const left = daysLeft(info, nowMs);
  if (left > EXPIRY_WARNING_DAYS) return undefined;
  const when = info.notAfter.toISOString();
  return left < 0
    ? `the database client certificate ${file} (CN ${info.commonName}) expired on ${when}: PostgreSQL refuses it; issue a new one with \`cadenza ca rotate\``
    : `the database client certificate ${file} (CN ${info.commonName}) expires on ${when}, in ${left} day(s): reissue it with \`cadenza ca rotate\` and restart this role`;
}
