import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../../common/clock.ts';
import type { AccessTokenProvider } from '../access-token.ts';
import { httpRequest, type HttpRequest, type HttpStage } from './http.ts';

/**
 * One authorized call to a provider API (Gmail, Graph): Bearer token, one retry with a refreshed
 * token after a 401, and the answer sorted into what the callers need to tell apart. Each API
 * verb (one file each under gmail/ and graph/) builds its request and reads its answer; this file
 * does the rest once.
 */

/**
 * Supplies an OAuth 2 access token; asked again with forceRefresh after the provider refused one
 * (mailbox/access-token.ts: a supplier that cannot reach the token endpoint throws an error with
 * `transient: true`; any other throw means the grant itself is dead and the mailbox must be
 * reconnected). The HTTP clients' name for AccessTokenProvider.
 */
export type TokenSource = AccessTokenProvider;

export interface ApiDeps {
  clock: Clock;
  tokens: TokenSource;
  /** Deadline of one HTTP exchange. */
  timeoutMs: number;
}

/** A provider's error answer, reduced to what a classifier reads. */
export interface ProviderError {
  /** Gmail: the first `errors[].reason` ('rateLimitExceeded'), else its status; Graph: `error.code`. */
  code: string;
  message: string;
  /** Every reason/code the body names (Gmail lists several; Graph nests innerError.code). */
  codes: string[];
}

export type ApiFailure =
  /** The token supplier threw: nothing was sent. */
  | { kind: 'token'; reason: string; transient: boolean }
  /** No complete answer; `stage` says whether the provider may have acted (see http.ts). */
  | { kind: 'network'; stage: HttpStage; reason: string; status: number | null; timedOut: boolean; aborted: boolean; tooLarge?: boolean }
  /** A non-2xx answer. retryAfterMs: the wait the provider asked for, if any. */
  | { kind: 'http'; status: number; error: ProviderError; retryAfterMs: number | null }
  /** A 2xx answer the verb could not read (promise 8: a bad provider answer is reported, not thrown). */
  | { kind: 'malformed'; status: number; reason: string };

export type ApiResult<T> = { ok: true; status: number; value: T } | { ok: false; failure: ApiFailure };

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface CallSpec<T> {
  method: HttpRequest['method'];
  url: URL;
  headers?: Record<string, string>;
  body?: Buffer;
  signal?: AbortSignal;
  maxResponseBytes?: number;
  /** Reads a 2xx answer. */
  parseOk(status: number, headers: IncomingHttpHeaders, body: Buffer): Parsed<T>;
  parseError(status: number, body: Buffer): ProviderError;
  retryAfter(status: number, headers: IncomingHttpHeaders, error: ProviderError, nowMs: number): number | null;
}

export async function callApi<T>(deps: ApiDeps, spec: CallSpec<T>): Promise<ApiResult<T>> {
  let forceRefresh = false;
  for (;;) {
    let token: string;
    try {
      token = await deps.tokens({ forceRefresh });
    } catch (e) {
      const err = e as { message?: string; transient?: unknown };
      return { ok: false, failure: { kind: 'token', reason: `access token: ${err?.message ?? String(e)}`, transient: err?.transient === true } };
    }
    const r = await httpRequest(deps.clock, {
      method: spec.method,
      url: spec.url,
      headers: { ...spec.headers, authorization: `Bearer ${token}`, accept: 'application/json' },
      body: spec.body,
      timeoutMs: deps.timeoutMs,
      signal: spec.signal,
      maxResponseBytes: spec.maxResponseBytes,
    });
    if (r.kind === 'failed') {
      return {
        ok: false,
        failure: { kind: 'network', stage: r.stage, reason: r.reason, status: r.status, timedOut: r.timedOut, aborted: r.aborted, ...(r.tooLarge ? { tooLarge: true } : {}) },
      };
    }
    // A 401 refuses the request before it is processed, so asking again is safe, even for a send.
    if (r.status === 401 && !forceRefresh) {
      forceRefresh = true;
      continue;
    }
    if (r.status >= 200 && r.status < 300) {
      const v = spec.parseOk(r.status, r.headers, r.body);
      if (!v.ok) return { ok: false, failure: { kind: 'malformed', status: r.status, reason: v.reason } };
      return { ok: true, status: r.status, value: v.value };
    }
    const error = spec.parseError(r.status, r.body);
    return { ok: false, failure: { kind: 'http', status: r.status, error, retryAfterMs: spec.retryAfter(r.status, r.headers, error, deps.clock.now()) } };
  }
}

/** A short, single-line excerpt of an unreadable body for an error reason. */
export function excerpt(body: Buffer, max = 200): string {
  const s = body.toString('utf8', 0, Math.min(body.length, max * 4)).replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** One line saying what went wrong, for logs and outcome reasons: `Gmail API 403 rateLimitExceeded: …`, `Graph: timeout: …`. */
export function describeFailure(f: ApiFailure, api: string): string {
  switch (f.kind) {
    case 'http':
      return `${api} ${f.status} ${f.error.code}: ${f.error.message}`;
    case 'network':
      return `${api}: ${f.timedOut ? 'timeout: ' : ''}${f.reason}`;
    case 'token':
    case 'malformed':
      return `${api}: ${f.reason}`;
  }
}
