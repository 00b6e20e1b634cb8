import { describe, expect, it } from 'vitest';
import { describeSlowRounds, type Round } from './slow-rounds.ts';

describe('slow rounds', () => {
  const round = (at: number, a: number, b: number): Round => ({ at, ms: new Map([['a', a], ['b', b]]) });

  it('names the rounds over 1.5 times the median with their slowest requests and the pauses inside them', () => {
    const rounds = [round(0, 10, 10), round(1_000, 12, 8), round(2_000, 300, 250), round(3_000, 11, 9), round(4_000, 10, 9)];
    const lines = describeSlowRounds(rounds, [{ at: 2_100, ms: 180, kind: 'major' }, { at: 3_500, ms: 30, kind: 'minor' }]);
    expect(lines).toEqual([
      'round 3 at 1970-01-01T00:00:02.000Z: 550 ms (median round 20 ms); slowest a 300, b 250; GC pauses major 180 ms',
    ]);
  });

  it('says so when no pause fell in a slow round, and names none when every round is alike', () => {
    expect(describeSlowRounds([round(0, 10, 10), round(1_000, 90, 10), round(2_000, 10, 10)], [])).toEqual([
      'round 2 at 1970-01-01T00:00:01.000Z: 100 ms (median round 20 ms); slowest a 90, b 10; no GC pause over 20 ms',
    ]);
    expect(describeSlowRounds([round(0, 10, 10), round(1_000, 11, 10)], [])).toEqual([]);
  });
});
