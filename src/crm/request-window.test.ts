import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RequestWindow } from './request-window.ts';

describe('RequestWindow: at most N requests in any window', () => {
  it('lets N through at once, then the next only when the oldest leaves the window', () => {
    const w = new RequestWindow(3, 1000);
    expect(w.earliest(3, 0)).toBe(0);
    w.take(3, 0);
    expect(w.earliest(1, 10)).toBe(1000);
    expect(() => w.take(1, 999)).toThrow(/would exceed/);
    w.take(1, 1000);
    // The three of t=0 have left the window at t=1000; the one of t=1000 stays until 2000.
    expect(w.earliest(2, 1000)).toBe(1000);
    expect(w.earliest(3, 1000)).toBe(2000);
    expect(() => new RequestWindow(2, 10).earliest(3, 0)).toThrow(/never fit/);
  });

  it('property: whatever the arrivals, no window of windowMs ever holds more than N requests taken at their earliest time', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 500 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 6 })), { maxLength: 60 }), (n, windowMs, arrivals) => {
        const w = new RequestWindow(n, windowMs);
        const taken: number[] = [];
        let now = 0;
        for (const [gap, want] of arrivals) {
          const k = Math.min(want, n);
          now = w.earliest(k, now + gap);
          w.take(k, now);
          for (let i = 0; i < k; i++) taken.push(now);
        }
        // Every window [t, t + windowMs) starting at a request holds at most n.
        for (const t of taken) expect(taken.filter((x) => x >= t && x < t + windowMs).length).toBeLessThanOrEqual(n);
      }),
    );
  });
});
