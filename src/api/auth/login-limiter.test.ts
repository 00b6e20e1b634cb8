import { describe, expect, it } from 'vitest';
import { backoffRemainingMs } from './login-limiter.ts';

describe('sign-in back-off (pure)', () => {
  const limit = { perEmail: 10, perIp: 30, windowMs: 15 * 60_000, free: 3, baseDelayMs: 1_000, deviceMaxDelayMs: 60_000 };
  const failuresAt = (n: number, last: number) => Array.from({ length: n }, (_, i) => last - (n - 1 - i));

  it('lets `free` failures through, then doubles the wait after each further one', () => {
    expect(backoffRemainingMs(failuresAt(2, 0), 0, limit, false)).toBe(0);
    expect(backoffRemainingMs(failuresAt(3, 0), 0, limit, false)).toBe(1_000);
    expect(backoffRemainingMs(failuresAt(4, 0), 0, limit, false)).toBe(2_000);
    expect(backoffRemainingMs(failuresAt(6, 0), 0, limit, false)).toBe(8_000);
    // Counted from the last failure: half the wait gone, half left.
    expect(backoffRemainingMs(failuresAt(6, 0), 4_000, limit, false)).toBe(4_000);
    expect(backoffRemainingMs(failuresAt(6, 0), 8_000, limit, false)).toBe(0);
  });

  it("caps a stranger's wait at the window, and a known device's far below it", () => {
    expect(backoffRemainingMs(failuresAt(40, 0), 0, limit, false)).toBe(limit.windowMs);
    expect(backoffRemainingMs(failuresAt(40, 0), 0, limit, true)).toBe(60_000);
  });
});
