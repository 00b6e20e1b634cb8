import { describe, expect, it } from 'vitest';
import { seededRandom, type Random } from './random.ts';
import { backoffCeiling, backoffDelay, BackoffSchedule } from './backoff.ts';

const policy = { baseMs: 100, capMs: 10_000 };
const fixed = (v: number): Random => ({ next: () => v, int: (a) => a, fork: () => fixed(v) });

describe('backoff with full jitter', () => {
  it('doubles the ceiling per attempt up to the cap, and never overflows', () => {
    expect([0, 1, 2, 3, 6, 7, 8].map((n) => backoffCeiling(n, policy))).toEqual([100, 200, 400, 800, 6_400, 10_000, 10_000]);
    expect(backoffCeiling(5_000, policy)).toBe(10_000);
    expect(backoffCeiling(-3, policy)).toBe(100);
  });

  it('draws each delay uniformly from [0, ceiling], from the injected random source', () => {
    expect(backoffDelay(3, fixed(0), policy)).toBe(0);
    expect(backoffDelay(3, fixed(0.5), policy)).toBe(400);
    expect(backoffDelay(3, fixed(0.999_999_9), policy)).toBe(800);
    const r = seededRandom('backoff');
    const delays = Array.from({ length: 5_000 }, () => backoffDelay(2, r, policy));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThanOrEqual(400);
    // Spread over the whole window (not clustered at the ceiling like "equal jitter").
    const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
    expect(mean).toBeGreaterThan(180);
    expect(mean).toBeLessThan(220);
    expect(delays.filter((d) => d < 100).length).toBeGreaterThan(1_000);
  });

  it('replays exactly from a seed, and a schedule counts failures until reset', () => {
    const a = new BackoffSchedule(seededRandom(7), policy);
    const b = new BackoffSchedule(seededRandom(7), policy);
    const seqA = Array.from({ length: 10 }, () => a.next());
    expect(Array.from({ length: 10 }, () => b.next())).toEqual(seqA);
    expect(a.failures).toBe(10);
    seqA.forEach((d, i) => expect(d).toBeLessThanOrEqual(backoffCeiling(i, policy)));
    a.reset();
    expect(a.failures).toBe(0);
    expect(a.next()).toBeLessThanOrEqual(100);
  });
});
