import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maxRetryAfterMs, parseRetryAfter, retryAfterInText } from './retry-after.ts';

const now = Date.UTC(2026, 2, 2, 12, 0, 0);

describe('parseRetryAfter', () => {
  it('reads integer and decimal seconds (Graph sends both) and HTTP-dates', () => {
    expect(parseRetryAfter('10', now)).toBe(10_000);
    expect(parseRetryAfter('2.128', now)).toBe(2_128);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('4.35', now)).toBe(4_350);
    expect(parseRetryAfter('0.0001', now)).toBe(1); // rounded up: never retry early
    expect(parseRetryAfter('Mon, 02 Mar 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Mon, 02 Mar 2026 11:00:00 GMT', now)).toBe(0); // already past
  });

  it('ignores what it cannot read and caps what is absurd', () => {
    for (const v of [undefined, null, '', 'soon', '-5', '1e3', '12abc', '2026-03-02T12:00:30Z']) expect(parseRetryAfter(v, now)).toBeNull();
    expect(parseRetryAfter('99999999999', now)).toBe(maxRetryAfterMs);
  });

  it('any non-negative seconds value gives ceil(seconds × 1000), capped', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 999 }), (s, ms) => {
        const v = `${s}.${String(ms).padStart(3, '0')}`;
        expect(parseRetryAfter(v, now)).toBe(Math.min(s * 1000 + ms, maxRetryAfterMs));
      }),
    );
  });
});

describe('retryAfterInText', () => {
  it("reads Gmail's sending-cap message", () => {
    expect(retryAfterInText('User-rate limit exceeded.  Retry after 2026-03-02T13:30:00.000Z (Mail sending)', now)).toBe(90 * 60_000);
    expect(retryAfterInText('Rate Limit Exceeded', now)).toBeNull();
    expect(retryAfterInText(undefined, now)).toBeNull();
  });
});
