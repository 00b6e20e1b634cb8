import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The `Cadenza-Signature` header of a webhook delivery, in Stripe's shape: `t=<unix seconds>,v1=<hex>`
 * where v1 is HMAC-SHA256(secret, `${t}.${body}`) over the exact bytes of the body. The timestamp is
 * inside the signed text, so a receiver that refuses old timestamps (default tolerance 5 minutes)
 * also refuses a recorded delivery replayed later. Several v1 values may appear (while a secret is
 * being rotated); any one matching is enough.
 */
export const signatureHeader = 'cadenza-signature';

export function sign(secret: string, body: string, unixSeconds: number): string {
  return signAll([secret], body, unixSeconds);
}

/** One v1 per secret, current first: while a secret is rotated, receivers with either verify. */
export function signAll(secrets: readonly string[], body: string, unixSeconds: number): string {
  return [`t=${unixSeconds}`, ...secrets.map((s) => `v1=${hmac(s, unixSeconds, body)}`)].join(',');
}

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; why: 'malformed' | 'mismatch' | 'too_old' };

/** What a receiver does: parse, recompute, compare in constant time, refuse stale timestamps. */
export function verify(header: string | undefined, body: string, secret: string, nowMs: number, toleranceSeconds = 300): SignatureCheck {
  if (!header) return { ok: false, why: 'malformed' };
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d+$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) v1.push(v);
  }
  if (t === null || v1.length === 0) return { ok: false, why: 'malformed' };
  const want = Buffer.from(hmac(secret, t, body), 'hex');
  if (!v1.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), want))) return { ok: false, why: 'mismatch' };
  if (Math.abs(nowMs / 1000 - t) > toleranceSeconds) return { ok: false, why: 'too_old' };
  return { ok: true, timestamp: t };
}

function hmac(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}
