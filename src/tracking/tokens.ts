import { unseal } from '../common/sealed-token.ts';

/**
 * What a tracking link carries, sealed (src/common/sealed-token.ts): the recipient can neither read
 * nor forge it, and a click link carries its destination inside, never in clear, so the redirect
 * cannot be turned into an open redirect. The shapes were agreed with the composer (sending/):
 *
 *   open         { k: 'o', ws, sr }
 *   click        { k: 'c', ws, sr, u: url, i: linkIndex }
 *   unsubscribe  { k: 'u', ws, sr }
 *
 * ws is the workspace id, sr the send request id. Short keys because every byte is in every link.
 * The composer seals them (trackingKey and trackingLinks in sending/compose/tracking.ts, key
 * deriveKey(master, 'tracking')); this module only opens them.
 */
export type OpenToken = { k: 'o'; ws: string; sr: string };
export type ClickToken = { k: 'c'; ws: string; sr: string; u: string; i: number };
export type UnsubscribeToken = { k: 'u'; ws: string; sr: string };
export type TrackingToken = OpenToken | ClickToken | UnsubscribeToken;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * A link's index is stored in an integer column: a larger one is a broken composer, not a link.
 * (A destination's length needs no limit of its own: unseal refuses tokens over 4,096 characters,
 * which bounds it at about 2,900; the composer sends a longer link untracked rather than broken.)
 */
export const MAX_LINK_INDEX = 2_147_483_647;

/**
 * The payload of a token of the expected kind, or null. The seal proves we made it; the shape is
 * still checked, because a token sealed by an older or buggy composer must not crash a route or
 * put a malformed id into SQL. Only the agreed fields come back; a click's URL comes back
 * normalised (see below).
 */
export function openToken<K extends TrackingToken['k']>(key: Buffer, token: string, kind: K): Extract<TrackingToken, { k: K }> | null {
  const p = unseal<Record<string, unknown>>(key, token);
  if (p === null || typeof p !== 'object' || Array.isArray(p) || p.k !== kind) return null;
  if (typeof p.ws !== 'string' || !UUID.test(p.ws) || typeof p.sr !== 'string' || !UUID.test(p.sr)) return null;
  if (kind === 'c') {
    if (typeof p.i !== 'number' || !Number.isSafeInteger(p.i) || p.i < 0 || p.i > MAX_LINK_INDEX) return null;
    const dest = typeof p.u === 'string' ? safeDestination(p.u) : null;
    if (!dest) return null;
    // The destination in its WHATWG serialisation: ASCII only (IDN as punycode, the rest
    // percent-encoded, tabs and newlines gone), so it can go into a Location header as it is.
    return { k: 'c', ws: p.ws, sr: p.sr, u: dest.href, i: p.i } as Extract<TrackingToken, { k: K }>;
  }
  return { k: p.k, ws: p.ws, sr: p.sr } as Extract<TrackingToken, { k: K }>;
}

/** Only http and https destinations: a sealed javascript:, data: or file: URL is never followed. */
export function safeDestination(url: string): URL | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
}
