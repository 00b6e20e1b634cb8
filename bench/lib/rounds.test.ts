import { describe, expect, it } from 'vitest';
import { interleavedRounds, showSpread, spread, spreadFigures } from './rounds.ts';

describe('interleavedRounds', () => {
  it('warms up each case, rotates the first case every round, and takes ratios within each round', async () => {
    const calls: string[] = [];
    // A neighbour's burst in round 1 doubles both cases' cost: the per-round ratio does not move.
    const cost = { anchor: [10, 20, 10], route: [15, 30, 15] } as const;
    const r = await interleavedRounds({
      rounds: 3,
      cases: ['anchor', 'route'] as const,
      run: (c, round) => {
        calls.push(`${c}@${round}`);
        return { us: round < 0 ? 999 : cost[c][round]! };
      },
    });
    expect(calls).toEqual(['anchor@-1', 'route@-1', 'anchor@0', 'route@0', 'route@1', 'anchor@1', 'anchor@2', 'route@2']);
    expect(r.values('route', 'us')).toEqual([15, 30, 15]);
    expect(r.spread('anchor', 'us')).toEqual({ median: 10, min: 10, max: 20, n: 3 });
    expect(r.ratio('anchor', 'route', 'us')).toEqual({ median: 2 / 3, min: 2 / 3, max: 2 / 3, n: 3 });
    expect(() => r.values('route', 'missing')).toThrow(/no figure missing/);
  });

  it('summarises and prints a spread', () => {
    expect(spread([3, 1, 2, 10])).toEqual({ median: 2.5, min: 1, max: 10, n: 4 });
    expect(spread([]).n).toBe(0);
    expect(showSpread(spread([1.234, 5, 2]), (x) => x.toFixed(1))).toBe('2.0 (1.2–5.0)');
    expect(spreadFigures('x_us', spread([1.26, 2, 3]), 1)).toEqual({ x_us: 2, x_us_min: 1.3, x_us_max: 3 });
  });
});
