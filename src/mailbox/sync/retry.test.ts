import { describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import type { ApiFailure, ApiResult } from '../providers/call.ts';
import { retryDelay, withRetry, type RetryPolicy } from './retry.ts';

const policy: RetryPolicy = { maxAttempts: 3, baseDelayMs: 10, maxWaitMs: 1_000 };
const http = (status: number, codes: string[] = [], retryAfterMs: number | null = null): ApiFailure => ({
  kind: 'http',
  status,
  error: { code: codes[0] ?? `http_${status}`, message: 'x', codes },
  retryAfterMs,
});

describe('sync retry policy', () => {
  it('waits what the provider asked on throttling, backs off on 5xx and the network, gives up on the rest', () => {
    expect(retryDelay(http(429, [], 2_128), 0, policy)).toBe(2_128);
    expect(retryDelay(http(429), 2, policy)).toBe(40);
    expect(retryDelay(http(403, ['userRateLimitExceeded'], 500), 0, policy)).toBe(500);
    expect(retryDelay(http(403, ['insufficientPermissions']), 0, policy)).toBeNull();
    expect(retryDelay(http(503, ['serviceNotAvailable'], 1_000), 0, policy)).toBe(1_000);
    expect(retryDelay(http(502), 1, policy)).toBe(20);
    expect(retryDelay(http(404), 0, policy)).toBeNull();
    expect(retryDelay(http(401), 0, policy)).toBeNull();
    expect(retryDelay({ kind: 'network', stage: 'connect', reason: 'ECONNREFUSED', status: null, timedOut: false, aborted: false }, 0, policy)).toBe(10);
    expect(retryDelay({ kind: 'network', stage: 'response', reason: 'aborted', status: null, timedOut: false, aborted: true }, 0, policy)).toBeNull();
    expect(retryDelay({ kind: 'token', reason: 'invalid_grant', transient: false }, 0, policy)).toBeNull();
    expect(retryDelay({ kind: 'token', reason: 'down', transient: true }, 0, policy)).toBe(10);
    expect(retryDelay(http(500), 20, policy)).toBe(1_000); // capped
  });

  it('retries up to the bound, then throws a coded error with the provider details; an accepted failure is returned', async () => {
    let calls = 0;
    const failing = async (): Promise<ApiResult<number>> => (calls++, { ok: false, failure: http(500, ['backendError']) });
    const err = await withRetry(systemClock, 'test call', failing, { policy }).catch((e) => e);
    expect(calls).toBe(3);
    expect(isCadenzaError(err, 'MAILBOX_UNAVAILABLE')).toBe(true);
    expect(err.details).toMatchObject({ status: 500, code: 'backendError' });

    calls = 0;
    const flaky = async (): Promise<ApiResult<number>> => (++calls < 3 ? { ok: false, failure: http(429, [], 5) } : { ok: true, status: 200, value: 7 });
    expect(await withRetry(systemClock, 'test call', flaky, { policy })).toEqual({ ok: true, status: 200, value: 7 });

    const gone = await withRetry(systemClock, 'test call', async () => ({ ok: false, failure: http(404) }) as ApiResult<number>, { policy, accept: (f) => f.kind === 'http' && f.status === 404 });
    expect(gone.ok).toBe(false);

    const auth = await withRetry(systemClock, 'test call', async () => ({ ok: false, failure: http(401) }) as ApiResult<number>, { policy }).catch((e) => e);
    expect(isCadenzaError(auth, 'MAILBOX_AUTH_FAILED')).toBe(true);
    const dead = await withRetry(systemClock, 'test call', async () => ({ ok: false, failure: { kind: 'token', reason: 'invalid_grant', transient: false } }) as ApiResult<number>, { policy }).catch((e) => e);
    expect(isCadenzaError(dead, 'MAILBOX_AUTH_FAILED')).toBe(true);
  });
});
