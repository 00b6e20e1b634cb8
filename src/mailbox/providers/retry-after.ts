/**
 * The wait a provider asks for, in milliseconds, or null when it names none.
 *
 * RFC 9110 §10.2.3 allows delay-seconds or an HTTP-date. Microsoft Graph has been seen sending
 * decimal seconds ('2.128' in one version of its throttling page, '10' in another), so fractions
 * are kept. Gmail's sending cap puts the time in the message text instead ("User-rate limit
 * exceeded.  Retry after 2024-05-04T12:52:16.364Z"), which retryAfterInText reads.
 *
 * A wait longer than maxMs is capped: a garbled header must not park a mailbox for a year.
 */
export const maxRetryAfterMs = 24 * 3_600_000;

export function parseRetryAfter(value: string | undefined | null, nowMs: number, maxMs = maxRetryAfterMs): number | null {
  if (value === undefined || value === null) return null;
  const v = value.trim();
  if (v === '') return null;
  const secs = /^(\d+)(?:\.(\d+))?$/.exec(v);
  if (secs) {
    // Digit arithmetic, not Number(v) * 1000: 4.35 * 1000 is 4350.000000000001 in floating point.
    const frac = (secs[2] ?? '').padEnd(3, '0');
    const ms = Number(secs[1]) * 1000 + Number(frac.slice(0, 3)) + (/[1-9]/.test(frac.slice(3)) ? 1 : 0);
    return clamp(ms, maxMs);
  }
  // An HTTP-date: the IMF-fixdate form, which Date.parse reads; anything else is ignored.
  if (/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(v)) {
    const at = Date.parse(v);
    if (Number.isFinite(at)) return clamp(at - nowMs, maxMs);
  }
  return null;
}

/** "Retry after <ISO 8601 instant>" inside an error message (Gmail's daily sending cap). */
export function retryAfterInText(text: string | undefined | null, nowMs: number, maxMs = maxRetryAfterMs): number | null {
  if (!text) return null;
  const m = /retry after (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))/i.exec(text);
  if (!m) return null;
  const at = Date.parse(m[1]!);
  return Number.isFinite(at) ? clamp(at - nowMs, maxMs) : null;
}

function clamp(ms: number, maxMs: number): number {
  return Math.min(Math.max(0, ms), maxMs);
}
