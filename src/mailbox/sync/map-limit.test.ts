import { describe, expect, it } from 'vitest';
import { mapLimit } from './map-limit.ts';

describe('mapLimit', () => {
  it('keeps order, never exceeds the limit, and rejects only after started calls settle', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0], 3, async (ms) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, ms));
      inFlight--;
      return ms * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0]);
    expect(peak).toBe(3);
    expect(await mapLimit([], 4, async () => 1)).toEqual([]);

    const settled: number[] = [];
    const err = await mapLimit([1, 2, 3, 4], 2, async (x) => {
      await new Promise((r) => setTimeout(r, x * 5));
      if (x === 1) throw new Error('one');
      settled.push(x);
      return x;
    }).catch((e) => e);
    expect(err.message).toBe('one');
    expect(inFlight).toBe(0);
    expect(settled).toEqual([2]); // started before the failure; 3 and 4 never started
  });
});
