import { describe, expect, it } from 'vitest';
import { longestGap, longestGapBetween } from './commit-watch.ts';

describe('longestGap (the write stall the etcd rounds report)', () => {
  it('counts from the last commit before the fault, not from the fault', () => {
    expect(longestGap([1_000, 9_000, 9_500], 2_000, 10_000)).toEqual({ gapMs: 8_000, endsAt: 9_000, lastBefore: 1_000 });
  });

  it('runs on to the end of the window when no commit came after the fault', () => {
    expect(longestGap([1_000, 1_500], 2_000, 30_000)).toEqual({ gapMs: 28_500, endsAt: null, lastBefore: 1_500 });
  });

  it('takes the longest of several gaps and leaves commits past the window out', () => {
    expect(longestGap([0, 1_000, 4_000, 4_200, 9_200, 50_000], 500, 10_000)).toEqual({ gapMs: 5_000, endsAt: 9_200, lastBefore: 0 });
  });

  it('starts at the window when nothing was committed before it', () => {
    expect(longestGap([3_000], 1_000, 3_500)).toEqual({ gapMs: 2_000, endsAt: 3_000, lastBefore: null });
  });
});

describe('longestGapBetween (Cadenza\'s pace before a fault)', () => {
  it('counts only gaps between commits inside the window', () => {
    expect(longestGapBetween([0, 5_000, 6_000, 8_500, 9_000, 20_000], 4_000, 10_000)).toBe(2_500);
  });

  it('is 0 with fewer than two commits in the window', () => {
    expect(longestGapBetween([0, 5_000], 4_000, 10_000)).toBe(0);
  });
});
