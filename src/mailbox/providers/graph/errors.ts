import type { IncomingHttpHeaders } from 'node:http';
import { excerpt, type ProviderError } from '../call.ts';
import { headerOf, jsonBody } from '../http.ts';
import { parseRetryAfter } from '../retry-after.ts';

/**
 * Graph's error answer (learn.microsoft.com/graph/errors):
 * `{"error":{"code":"…","message":"…","innerError":{"code"?,"request-id","date"}}}`.
 * The code ('TooManyRequests', 'ErrorMimeContentInvalidBase64String', 'InvalidAuthenticationToken')
 * is what tells cases apart.
 */
export function parseGraphError(status: number, body: Buffer): ProviderError {
  const j = jsonBody(body) as { error?: { code?: unknown; message?: unknown; innerError?: { code?: unknown } } } | undefined;
  const e = j && typeof j === 'object' ? j.error : undefined;
  if (!e || typeof e !== 'object') {
    return { code: `http_${status}`, message: body.length ? excerpt(body) : `HTTP ${status} without a body`, codes: [] };
  }
  const codes: string[] = [];
  if (typeof e.code === 'string') codes.push(e.code);
  if (e.innerError && typeof e.innerError === 'object' && typeof e.innerError.code === 'string') codes.push(e.innerError.code);
  return { code: codes[0] ?? `http_${status}`, message: typeof e.message === 'string' ? e.message : `HTTP ${status}`, codes };
}

/** Retry-After in seconds, decimals allowed (concepts/throttling.md shows '2.128'). */
export function graphRetryAfter(_status: number, headers: IncomingHttpHeaders, _error: ProviderError, nowMs: number): number | null {
  return parseRetryAfter(headerOf(headers, 'retry-after'), nowMs);
}
