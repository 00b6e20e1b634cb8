import { describe, expect, it } from 'vitest';
import { afterFailure, afterIssued, backoffMs, DNS_RECHECK_MS, nextStep, renewAt } from './policy.ts';

const DAY = 86_400_000;

describe('tracking domain policy', () => {
  it('renews when a third of the lifetime is left: day 60 of a 90-day certificate', () => {
    expect(renewAt(0, 90 * DAY)).toBe(60 * DAY);
    expect(afterIssued({ notBefore: 10 * DAY, notAfter: 100 * DAY })).toEqual({ state: 'active', nextAttemptAt: 70 * DAY });
  });

  it('backs off 1 min, 2, 4 … capped at 6 h', () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(backoffMs(30)).toBe(6 * 3_600_000);
    expect(backoffMs(0)).toBe(60_000);
  });

  it('a host without its CNAME stays pending and is looked up again in minutes, not at the back-off', () => {
    expect(afterFailure({ state: 'pending_dns', attempts: 0, notAfter: null }, 1000, 'dns')).toEqual({ state: 'pending_dns', attempts: 1, nextAttemptAt: 1000 + DNS_RECHECK_MS });
  });

  it('a failed issuance without a certificate is failed; with a valid one it keeps serving (renewing) until its end', () => {
    expect(afterFailure({ state: 'issuing', attempts: 2, notAfter: null }, 0, 'issue')).toEqual({ state: 'failed', attempts: 3, nextAttemptAt: 240_000 });
    expect(afterFailure({ state: 'renewing', attempts: 0, notAfter: DAY }, 0, 'issue')).toEqual({ state: 'renewing', attempts: 1, nextAttemptAt: 60_000 });
    // The retry is never after the certificate's end, when the host must stop being used.
    expect(afterFailure({ state: 'renewing', attempts: 30, notAfter: 1000 }, 0, 'dns').nextAttemptAt).toBe(1000);
  });

  it('verifies before issuing or renewing, and expires a serving host past its certificate', () => {
    expect(nextStep({ state: 'pending_dns', notAfter: null }, 0)).toBe('verify');
    expect(nextStep({ state: 'active', notAfter: 10 }, 5)).toBe('verify');
    expect(nextStep({ state: 'issuing', notAfter: null }, 0)).toBe('issue');
    expect(nextStep({ state: 'renewing', notAfter: 10 }, 10)).toBe('expire');
    expect(nextStep({ state: 'failed', notAfter: 10 }, 20)).toBe('verify');
  });
});
