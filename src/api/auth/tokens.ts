import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets handed to people (session cookies, API keys, CSRF tokens) come from the operating
 * system's CSPRNG, not the injected seeded Random: a simulation may replay ids, never credentials.
 */
export function newSecret(prefix = '', bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** What is stored in place of a secret: its SHA-256. The secrets are 256-bit random, so no salt or slow hash is needed. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Compares two strings without leaking, through timing, how many leading characters matched. */
export function safeEqual(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y) && a === b;
}
