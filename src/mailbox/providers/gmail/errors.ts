import type { IncomingHttpHeaders } from 'node:http';
import { excerpt, type ProviderError } from '../call.ts';
import { headerOf, jsonBody } from '../http.ts';
import { parseRetryAfter, retryAfterInText } from '../retry-after.ts';

/**
 * Gmail's error answer (developers.google.com/workspace/gmail/api/guides/handle-errors):
 * `{"error":{"code":N,"message":"…","errors":[{"domain","reason","message"}],"status":"…"}}`.
 * The reason ('rateLimitExceeded', 'authError', …) is what tells cases apart: a 403 may be a rate
 * limit or a refusal, and a 429 may be concurrency or the daily sending cap.
 */
export function parseGmailError(status: number, body: Buffer): ProviderError {
  const j = jsonBody(body) as { error?: { message?: unknown; status?: unknown; errors?: unknown } } | undefined;
  const e = j && typeof j === 'object' ? j.error : undefined;
  if (!e || typeof e !== 'object') {
    return { code: `http_${status}`, message: body.length ? excerpt(body) : `HTTP ${status} without a body`, codes: [] };
  }
  const codes: string[] = [];
  if (Array.isArray(e.errors)) {
    for (const x of e.errors) if (x && typeof x.reason === 'string') codes.push(x.reason);
  }
  if (typeof e.status === 'string') codes.push(e.status);
  const message = typeof e.message === 'string' ? e.message : `HTTP ${status}`;
  return { code: codes[0] ?? `http_${status}`, message, codes };
}

/** A Retry-After header if there is one, else a "Retry after <instant>" in the message (the sending cap). */
export function gmailRetryAfter(_status: number, headers: IncomingHttpHeaders, error: ProviderError, nowMs: number): number | null {
  return parseRetryAfter(headerOf(headers, 'retry-after'), nowMs) ?? retryAfterInText(error.message, nowMs);
}
