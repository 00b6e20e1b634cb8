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

  it('property: requests that arrive while a batch runs, counted at its end (restamp), never put more than N in any window at the CRM', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 10, max: 500 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 9 })), { maxLength: 40 }), (n, windowMs, batches) => {
        const w = new RequestWindow(n, windowMs);
        // What the CRM counts: each request when it arrives, spread over the batch's run.
        const arrivals: number[] = [];
        let now = 0;
        for (const [gap, delays] of batches) {
          const k = Math.min(delays.length, n);
          const start = w.earliest(k, now + gap);
          w.take(k, start);
          let t = start;
          for (const d of delays.slice(0, k)) arrivals.push((t += d));
          now = t;
          w.restamp(k, start, now);
        }
        for (const t of arrivals) expect(arrivals.filter((x) => x >= t && x < t + windowMs).length).toBeLessThanOrEqual(n);
      }),
    );
  });

  it('property: batches that reserve their worst case and are settled with what they really made (settle) never put more than N in any window at the CRM, and free the rest', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 10, max: 500 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 9 }), fc.integer({ min: 1, max: 9 })), { maxLength: 40 }), (n, windowMs, batches) => {
        const w = new RequestWindow(n, windowMs);
        const arrivals: number[] = [];
        let now = 0;
        for (const [gap, delays, worst] of batches) {
          const reserved = Math.min(worst, n);
          const used = Math.min(delays.length, reserved);
          const start = w.earliest(reserved, now + gap);
          w.take(reserved, start);
          let t = start;
          for (const d of delays.slice(0, used)) arrivals.push((t += d));
          now = t;
          w.settle(reserved, used, start, now);
        }
        for (const t of arrivals) expect(arrivals.filter((x) => x >= t && x < t + windowMs).length).toBeLessThanOrEqual(n);
        // Never fewer counted than the CRM still holds in its window.
        expect(w.snapshot(now).reduce((a, [, k]) => a + k, 0)).toBeGreaterThanOrEqual(arrivals.filter((x) => x > now - windowMs).length);
      }),
    );
  });

  it('settle frees what a batch reserved and did not make, and counts what it made beyond its reservation', () => {
    const w = new RequestWindow(12, 1000);
    w.take(12, 0);
    expect(w.earliest(1, 5)).toBe(1000);
    w.settle(12, 3, 0, 5);
    expect(w.snapshot(5)).toEqual([[5, 3]]);
    expect(w.earliest(9, 5)).toBe(5);
    w.take(2, 6);
    w.settle(2, 4, 6, 7);
    expect(w.snapshot(7)).toEqual([[5, 3], [7, 4]]);
  });

  it('restamp moves only the last batch\'s requests, and never back in time', () => {
    const w = new RequestWindow(4, 1000);
    w.take(2, 0);
    w.take(2, 100);
    w.restamp(2, 100, 900);
    // The two of t=0 leave at 1000, the batch counted at 900 stays until 1900.
    expect(w.earliest(2, 1000)).toBe(1000);
    expect(w.earliest(3, 1000)).toBe(1900);
    expect(() => w.restamp(1, 900, 800)).toThrow(/back in time/);
  });
  it('property: a window restored from its snapshot (another writer taking over) answers as the original would; bad entries are ignored', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 500 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 6 })), { maxLength: 40 }), fc.integer({ min: 0, max: 600 }), (n, windowMs, arrivals, later) => {
        const w = new RequestWindow(n, windowMs);
        let now = 0;
        for (const [gap, want] of arrivals) {
          const k = Math.min(want, n);
          now = w.earliest(k, now + gap);
          w.take(k, now);
        }
        const copy = new RequestWindow(n, windowMs);
        copy.absorb([...w.snapshot(now), ['x', 1], [5, 0], null], now);
        for (let k = 1; k <= n; k++) expect(copy.earliest(k, now + later)).toBe(w.earliest(k, now + later));
      }),
    );
  });
});
