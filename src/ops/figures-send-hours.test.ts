import { describe, expect, it } from 'vitest';
import { bestHours, byHour, MIN_SENDS_PER_HOUR } from './figures-send-hours.ts';

describe('best send hours', () => {
  it('says nothing until two hours have enough sends, and shows the count', () => {
    const one = byHour([{ weekday: 1, hour: 9, sends: MIN_SENDS_PER_HOUR, replies: 5 }, { weekday: 2, hour: 14, sends: MIN_SENDS_PER_HOUR - 1, replies: 9 }]);
    const b = bestHours(one);
    expect(b).toMatchObject({ enough: false, hours: [] });
    expect(b.text).toBe(`Not enough sends to say which hours do best: ${2 * MIN_SENDS_PER_HOUR - 1} sends in the period, and an hour is compared only with ${MIN_SENDS_PER_HOUR} or more (1 hour has that many).`);
  });

  it('ranks the hours with enough sends by reply rate, more sends first on a tie, an hour with few sends never', () => {
    const hours = byHour([
      { weekday: 1, hour: 9, sends: 20, replies: 2 },
      { weekday: 3, hour: 9, sends: 20, replies: 2 },
      { weekday: 1, hour: 14, sends: 20, replies: 4 },
      { weekday: 1, hour: 16, sends: 30, replies: 3 },
      { weekday: 1, hour: 3, sends: 2, replies: 2 },
      { weekday: 1, hour: 11, sends: 25, replies: 0 },
    ]);
    expect(hours[9]).toEqual({ hour: 9, sends: 40, replies: 4, replyRate: 0.1 });
    const b = bestHours(hours);
    expect(b.hours.map((h) => h.hour)).toEqual([14, 9, 16]);
    expect(b.text).toMatch(/^Best hours in the prospect's time, by reply rate: 14:00–15:00 \(20\.0% of 20 sends\), 9:00–10:00 \(10\.0% of 40 sends\), 16:00–17:00 \(10\.0% of 30 sends\)\. Compared over the 4 hours/);
  });
});
