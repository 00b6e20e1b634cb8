import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifying a CRM's webhook delivery, one function per CRM's documented scheme. Pure: the request's
 * parts in, a verdict with its reason out (the reason is logged and counted, never answered).
 *
 * - HubSpot, signature v3 (developers.hubspot.com "Validating requests from HubSpot"):
 *   `X-HubSpot-Signature-v3` is the base64 HMAC-SHA256, keyed with the app's client secret, of
 *   method + URI + body + `X-HubSpot-Request-Timestamp` (ms since the epoch), the URI being the full
 *   URL the app was configured with (scheme, host, path, query). A timestamp more than 5 minutes
 *   old is refused: a captured delivery replayed later does not verify.
 * - Pipedrive (webhooks v1 and v2): no signature; the credentials given at webhook creation come
 *   back as HTTP Basic auth. Cadenza registers a random password of its own per connection.
 *
 * Every comparison is constant-time over equal-length digests (both sides hashed first), so
 * neither the secret's length nor a matching prefix shows in the answer's timing.
 */
export type HookVerdict = { ok: true } | { ok: false; reason: string };

/** HubSpot's documented replay window for v3 signatures. */
export const HUBSPOT_MAX_AGE_MS = 5 * 60_000;

export function hubspotV3Signature(secret: string, method: string, uri: string, body: string, timestamp: string): string {
  return createHmac('sha256', secret).update(`${method}${uri}${body}${timestamp}`, 'utf8').digest('base64');
}

export function verifyHubSpotV3(
  secret: string,
  req: { method: string; uri: string; body: string; signature: string | undefined; timestamp: string | undefined },
  nowMs: number,
): HookVerdict {
  if (!req.signature || !req.timestamp) return { ok: false, reason: 'no X-HubSpot-Signature-v3 or X-HubSpot-Request-Timestamp' };
  const at = Number(req.timestamp);
  if (!/^\d{1,16}$/.test(req.timestamp) || !Number.isFinite(at)) return { ok: false, reason: 'a timestamp that is not milliseconds' };
  // Also refused from the future beyond the same slack: a clock that far off is no better than a replay.
  if (Math.abs(nowMs - at) > HUBSPOT_MAX_AGE_MS) return { ok: false, reason: 'a timestamp more than 5 minutes away' };
  const want = hubspotV3Signature(secret, req.method.toUpperCase(), req.uri, req.body, req.timestamp);
  return sameSecret(req.signature, want) ? { ok: true } : { ok: false, reason: 'a signature that does not match' };
}

export function verifyBasicAuth(user: string, password: string, authorization: string | undefined): HookVerdict {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authorization ?? '');
  if (!m) return { ok: false, reason: 'no basic auth' };
  const given = Buffer.from(m[1]!, 'base64').toString('utf8');
  return sameSecret(given, `${user}:${password}`) ? { ok: true } : { ok: false, reason: 'basic auth credentials that do not match' };
}

function sameSecret(given: string, want: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(want).digest();
  return timingSafeEqual(a, b);
}
