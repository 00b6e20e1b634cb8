import { describe, expect, it } from 'vitest';
import { runEvery } from './periodic.ts';
import { SimClock } from '../sim/sim-clock.ts';

describe('runEvery', () => {
  it('runs now, then after each run ends; a failure is reported and the next run still comes; stop waits and ends it', async () => {
    const clock = new SimClock(0);
    const runs: number[] = [];
    const errors: unknown[] = [];
    const p = runEvery(
      clock,
      1000,
      async () => {
        runs.push(clock.now());
        if (runs.length === 2) throw new Error('boom');
      },
      (e) => errors.push(e),
    );
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([0]);
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      await new Promise((r) => setImmediate(r));
    }
    expect(runs).toEqual([0, 1000, 2000, 3000]);
    expect(errors).toHaveLength(1);
    await p.stop();
    clock.advance(5000);
    expect(runs).toHaveLength(4);
  });
});
