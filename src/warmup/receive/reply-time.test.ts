import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { replyTime } from './reply-time.ts';

const MIN = 60_000;
const T = Date.UTC(2026, 11, 4, 17, 30); // a Friday, 17:30 UTC
/** Mon–Fri 09:00–17:00 UTC. */
const working = (t: number) => {
  const d = new Date(t);
  return d.getUTCDay() >= 1 && d.getUTCDay() <= 5 && d.getUTCHours() >= 9 && d.getUTCHours() < 17;
};

describe('replyTime', () => {
  it('answers the drawn share, within working hours, after the delay', () => {
    const random = seededRandom(9);
    const timing = { share: 0.3, minDelayMs: 20 * MIN, maxDelayMs: 180 * MIN, working };
    const monday9 = Date.UTC(2026, 11, 7, 9, 0);
    let replies = 0;
    for (let i = 0; i < 1000; i++) {
      const at = replyTime(T, timing, random);
      if (at === null) continue;
      replies++;
      // Friday evening: every reply waits for Monday morning, a few minutes in.
      expect(working(at)).toBe(true);
      expect(at).toBeGreaterThanOrEqual(monday9);
      expect(at).toBeLessThan(monday9 + 10 * MIN);
    }
    expect(replies).toBeGreaterThan(240);
    expect(replies).toBeLessThan(360);
    const tuesday10 = Date.UTC(2026, 11, 8, 10, 0);
    const at = replyTime(tuesday10, { ...timing, share: 1 }, random)!;
    expect(at - tuesday10).toBeGreaterThanOrEqual(20 * MIN);
    expect(at - tuesday10).toBeLessThan(180 * MIN);
  });

  it('gives no reply when the window never opens within a week', () => {
    expect(replyTime(T, { share: 1, minDelayMs: MIN, maxDelayMs: 2 * MIN, working: () => false }, seededRandom(1))).toBeNull();
  });
});
