import type { Clock } from '../../common/clock.ts';
import { parseRetryAfter } from '../../mailbox/providers/retry-after.ts';
import { CrmAuthError, CrmTransientError } from '../connector.ts';

/**
 * One request (POST or GET) to HubSpot's API, and what its failures mean to the writer (error-handling and
 * usage-guidelines pages):
 *
 *   401, 403                  the token is refused or lacks a scope → CrmAuthError (the connection pauses)
 *   429                       a rate limit → CrmTransientError, retry after Retry-After if sent
 *                             (documented only for workflows), else the policy's window: 1 s for
 *                             SECONDLY (search), X-HubSpot-RateLimit-Interval-Milliseconds (10 s)
 *                             for TEN_SECONDLY_ROLLING
 *   423                       a locked record: wait at least 2 s (documented)
 *   5xx, 477, anything else   → CrmTransientError, after Retry-After when given (477 documents one)
 *   no answer, a timeout      → CrmTransientError: the request may or may not have been acted on
 *
 * A failure that may have written (no answer, a 5xx) is retried no sooner than SEARCH_SETTLE_MS:
 * the retry finds what the lost attempt wrote by searching for it, and HubSpot documents that a
 * new record takes "a few moments" to show in search.
 *
 * Statuses the caller names in `accept` (a 400 it turns into `rejected`, a 409 "already there")
 * come back as answers, like a 2xx. The token goes only into the Authorization header, never into
 * an error's message.
 */

/** How long a new record may take to show in search (documented "a few moments"; 10 s assumed, unverified). */
export const SEARCH_SETTLE_MS = 10_000;

export interface HubSpotAnswer {
  status: number;
  /** The JSON body; undefined when empty. */
  body: any;
}

export interface HubSpotHttpOptions {
  /** https://api.hubapi.com, or an emulator's. */
  baseUrl: string;
  token: () => string | Promise<string>;
  /** One deadline per request, connection to last byte. */
  timeoutMs: number;
  clock: Clock;
}

export function hubspotPost(o: HubSpotHttpOptions, path: string, body: unknown, accept: readonly number[] = []): Promise<HubSpotAnswer> {
  return hubspotRequest(o, 'POST', path, body, accept);
}

/** A GET (owners, list memberships, token metadata), with the same meaning of failures. */
export function hubspotGet(o: HubSpotHttpOptions, path: string, accept: readonly number[] = []): Promise<HubSpotAnswer> {
  return hubspotRequest(o, 'GET', path, undefined, accept);
}

async function hubspotRequest(o: HubSpotHttpOptions, method: 'GET' | 'POST', path: string, body: unknown, accept: readonly number[]): Promise<HubSpotAnswer> {
  const token = await o.token();
  let status: number;
  let headers: Headers;
  let text: string;
  try {
    const res = await fetch(new URL(path, o.baseUrl), {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(o.timeoutMs),
    });
    status = res.status;
    headers = res.headers;
    text = await res.text();
  } catch (e) {
    const timedOut = e instanceof Error && e.name === 'TimeoutError';
    throw new CrmTransientError(timedOut ? `HubSpot gave no answer within ${o.timeoutMs} ms (${method} ${redact(path)})` : `HubSpot unreachable (${method} ${redact(path)}): ${causeOf(e)}`, SEARCH_SETTLE_MS);
  }
  const json = parseJson(text);
  const ok = status >= 200 && status < 300;
  if (ok && json === invalid) throw new CrmTransientError(`HubSpot answered ${status} to ${method} ${redact(path)} with a body that is not JSON`);
  if (ok || accept.includes(status)) return { status, body: json === invalid ? undefined : json };
  throw failure(status, headers, json === invalid ? undefined : json, o.clock.now(), redact(path), method);
}

/** The token-metadata path carries the token: never in a message. */
function redact(path: string): string {
  return path.replace(/^\/oauth\/v1\/access-tokens\/.*/, '/oauth/v1/access-tokens/…');
}

/** The error for an answer the caller did not accept. */
export function failure(status: number, headers: Headers, body: any, nowMs: number, path: string, method = 'POST'): Error {
  const what = `HubSpot answered ${status}${body?.category ? ` ${body.category}` : ''} to ${method} ${path}${body?.message ? `: ${body.message}` : ''}`;
  if (status === 401 || status === 403) return new CrmAuthError(what);
  const retryAfter = parseRetryAfter(headers.get('retry-after'), nowMs);
  if (retryAfter !== null) return new CrmTransientError(what, status >= 500 ? Math.max(retryAfter, SEARCH_SETTLE_MS) : retryAfter);
  if (status === 429) {
    if (body?.policyName === 'SECONDLY') return new CrmTransientError(what, 1000);
    // The daily count resets at midnight in the account's time zone, which the answer does not say.
    if (body?.policyName === 'DAILY') return new CrmTransientError(what);
    const interval = Number(headers.get('x-hubspot-ratelimit-interval-milliseconds'));
    return new CrmTransientError(what, interval > 0 ? interval : 10_000);
  }
  if (status === 423) return new CrmTransientError(what, 2000);
  return new CrmTransientError(what, status >= 500 ? SEARCH_SETTLE_MS : undefined);
}

const invalid = Symbol('invalid JSON');

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return invalid;
  }
}

function causeOf(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error ? `${e.message} (${cause.message})` : e.message;
}
