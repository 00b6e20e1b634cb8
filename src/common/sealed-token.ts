import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Sealed tokens: a small JSON payload encrypted and authenticated with AES-256-GCM, in base64url.
 * Used where a URL must carry data a recipient can neither read nor forge: tracking pixels, click
 * redirects (the destination is inside, never in clear, so there is no open redirect) and
 * unsubscribe links. Unguessable (a random 96-bit nonce) and tamper-evident (a 128-bit tag).
 *
 * Layout: version byte (1) | nonce (12) | ciphertext | tag (16).
 */
const VERSION = 1;

/**
 * The longest token unseal accepts (and the tracking routes route): 3 KB of sealed bytes, room
 * for a click destination of about 2,900 characters. A bound, so that a request cannot make the
 * server decrypt megabytes; a caller sealing something bigger checks sealedLength first.
 */
export const MAX_TOKEN_LENGTH = 4096;

/** The length of the token seal() makes for this payload, without sealing it. */
export function sealedLength(payload: unknown): number {
  const bytes = 1 + 12 + Buffer.byteLength(JSON.stringify(payload), 'utf8') + 16;
  return Math.ceil((bytes * 4) / 3);
}

export function seal(key: Buffer, payload: unknown): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const ct = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), nonce, ct, cipher.getAuthTag()]).toString('base64url');
}

/** The payload, or null for anything that is not a token this key sealed (never throws). */
export function unseal<T = unknown>(key: Buffer, token: string): T | null {
  if (typeof token !== 'string' || token.length < 40 || token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return null;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length < 1 + 12 + 16 + 2 || raw[0] !== VERSION) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(1, 13));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const pt = Buffer.concat([decipher.update(raw.subarray(13, raw.length - 16)), decipher.final()]);
    return JSON.parse(pt.toString('utf8')) as T;
  } catch {
    return null;
  }
}
