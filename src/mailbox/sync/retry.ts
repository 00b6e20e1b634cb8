import type { Clock } from '../../common/clock.ts';
import { cadenzaError, type CadenzaError } from '../../common/errors.ts';
import type { ApiFailure, ApiResult } from '../providers/call.ts';

/**
 * How the Gmail and Graph sync connectors retry a read (every sync call is a GET, or a watch/
 * subscription that is safe to repeat): throttling (429, Gmail's 403 *RateLimitExceeded, Graph's
 * 503) waits the Retry-After the provider gave, other 5xx and network failures back off
 * exponentially. Waits are bounded (a pull must not sit on a mailbox for an hour: the worker
 * schedules the next pull instead) and abortable. Whatever cannot be retried becomes a
 * CadenzaError with the provider's status, code and the wait it asked for, for the worker to log
 * and back off on.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff without a Retry-After; doubled each attempt. */
  baseDelayMs: number;
  /** No single wait is longer: a longer Retry-After ends the pull with the wait in the error. */
  maxWaitMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxWaitMs: 60_000 };

/** Gmail's rate-limit reasons on a 403 (guides/handle-errors); a 429 is always a rate limit. */
const rateReasons = new Set(['userRateLimitExceeded', 'rateLimitExceeded', 'dailyLimitExceeded', 'quotaExceeded', 'RESOURCE_EXHAUSTED']);

/** The wait before the next attempt, or null when this failure is not worth another. */
export function retryDelay(f: ApiFailure, attempt: number, policy: RetryPolicy): number | null {
  const backoff = Math.min(policy.baseDelayMs * 2 ** attempt, policy.maxWaitMs);
  switch (f.kind) {
    case 'network':
      return f.aborted || f.tooLarge ? null : backoff;
    case 'token':
      return f.transient ? backoff : null;
    case 'malformed':
      return null;
    case 'http': {
      const throttled = f.status === 429 || f.status === 503 || (f.status === 403 && f.error.codes.some((c) => rateReasons.has(c)));
      if (throttled) return f.retryAfterMs ?? backoff;
      if (f.status === 500 || f.status === 502 || f.status === 504) return f.retryAfterMs ?? backoff;
      return null;
    }
  }
}

/**
 * Runs `call` until it succeeds, fails for good, or the policy is spent. `accept` lets a caller
 * take some failures as answers (Gmail's history 404, Graph's 410), returned as they are.
 */
export async function withRetry<T>(
  clock: Clock,
  what: string,
  call: () => Promise<ApiResult<T>>,
  opts: { policy?: RetryPolicy; signal?: AbortSignal; accept?: (f: ApiFailure) => boolean } = {},
): Promise<ApiResult<T>> {
  const policy = opts.policy ?? defaultRetryPolicy;
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(opts.signal, what);
    const r = await call();
    if (r.ok || opts.accept?.(r.failure)) return r;
    const delay = retryDelay(r.failure, attempt, policy);
    if (delay === null || attempt + 1 >= policy.maxAttempts || delay > policy.maxWaitMs) throw syncFailure(what, r.failure);
    await abortableSleep(clock, delay, opts.signal, what);
  }
}

/** The error a pull ends with: MAILBOX_AUTH_FAILED when the grant is dead, MAILBOX_UNAVAILABLE otherwise. */
export function syncFailure(what: string, f: ApiFailure): CadenzaError {
  switch (f.kind) {
    case 'token':
      return f.transient
        ? cadenzaError('MAILBOX_UNAVAILABLE', `${what}: ${f.reason}`, { transient: true })
        : cadenzaError('MAILBOX_AUTH_FAILED', `${what}: ${f.reason}`);
    case 'network':
      return cadenzaError('MAILBOX_UNAVAILABLE', `${what}: ${f.aborted ? 'aborted' : f.timedOut ? 'timeout' : 'network'}: ${f.reason}`, {
        stage: f.stage,
        aborted: f.aborted,
      });
    case 'malformed':
      return cadenzaError('MAILBOX_UNAVAILABLE', `${what}: unreadable answer (${f.status}): ${f.reason}`, { status: f.status });
    case 'http': {
      const details = { status: f.status, code: f.error.code, retryAfterMs: f.retryAfterMs };
      const message = `${what}: ${f.status} ${f.error.code}: ${f.error.message}`;
      // 401 after callApi already refreshed the token once: the grant no longer works.
      return f.status === 401 ? cadenzaError('MAILBOX_AUTH_FAILED', message, details) : cadenzaError('MAILBOX_UNAVAILABLE', message, details);
    }
  }
}

export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw cadenzaError('MAILBOX_UNAVAILABLE', `${what}: aborted`, { aborted: true });
}

/** clock.sleep that an abort ends early (with the abort error), its timer cancelled. */
export function abortableSleep(clock: Clock, ms: number, signal: AbortSignal | undefined, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cadenzaError('MAILBOX_UNAVAILABLE', `${what}: aborted`, { aborted: true }));
    const onAbort = () => {
      timer.cancel();
      reject(cadenzaError('MAILBOX_UNAVAILABLE', `${what}: aborted`, { aborted: true }));
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
