import { describe, expect, it } from 'vitest';
import { estimate, timingArmRate, type Scenario, type TimingScenario } from './simulate.ts';
import { experimentVerdict } from './verdict.ts';

/**
 * The short form of `npm run bench -- experiments-power` (bench/experiments-power.ts, the figures
 * in docs/experiments.md): seeded, so each figure is one fixed number, checked against what the
 * verdict promises.
 */
const base: Omit<Scenario, 'rates'> = { weights: [1, 1], enrollmentsPerDay: 100, days: 60, replyWindowDays: 14, alpha: 0.05, minSamplePerArm: 200 };

describe('experiment verdict under daily peeking (simulated, known rates)', () => {
  it('A/A at 5 %: a winner is declared in at most α of experiments though someone looks every day', () => {
    const e = estimate({ ...base, rates: [0.05, 0.05] }, 300, 'aa-5');
    expect(e.decided).toBeLessThanOrEqual(0.05);
  });

  it('three equal arms: the Bonferroni split keeps the whole experiment at α', () => {
    const e = estimate({ ...base, weights: [1, 1, 1], rates: [0.05, 0.05, 0.05] }, 200, 'aaa-5');
    expect(e.decided).toBeLessThanOrEqual(0.05);
  });

  it('5 % against 8 % over 60 days of 100 enrollments: the better arm wins in at least 90 %, the worse never', () => {
    const e = estimate({ ...base, rates: [0.05, 0.08] }, 200, 'ab-5-8');
    expect(e.winnerShare[1]).toBeGreaterThanOrEqual(0.9);
    expect(e.winnerShare[0]).toBe(0);
  });
});

/** 3 business days and 08-10 against 6 and 14-16; rates by send hour (the bench's timing cases). */
const timing: Omit<TimingScenario, 'replyByHour'> = {
  arms: [
    { weight: 1, delayDays: 3, hours: [8, 10] },
    { weight: 1, delayDays: 6, hours: [14, 16] },
  ],
  earlyRate: 0.02,
  replyLagDays: 3,
  enrollmentsPerDay: 100,
  days: 60,
  replyWindowDays: 14,
  alpha: 0.05,
  minSamplePerArm: 200,
};
const flat = Array.from({ length: 24 }, () => 0.04);
const morningBetter = Array.from({ length: 24 }, (_, h) => (h >= 8 && h < 10 ? 0.06 : h >= 14 && h < 16 ? 0.03 : 0.045));

describe('timing arms under daily peeking (simulated, known rates by send hour)', () => {
  it('the same rate at every hour: arms that differ only in delay and hours declare a winner in at most α', () => {
    const s = { ...timing, replyByHour: flat };
    expect(timingArmRate(s, s.arms[0]!)).toBeCloseTo(timingArmRate(s, s.arms[1]!), 10);
    expect(estimate(s, 300, 'timing-aa').decided).toBeLessThanOrEqual(0.05);
  });

  it('replies likelier at 08-10 than at 14-16 (7.9 % against 4.9 % by arm): the morning arm wins in at least 90 %, the other never', () => {
    const s = { ...timing, replyByHour: morningBetter };
    expect(timingArmRate(s, s.arms[0]!)).toBeCloseTo(0.0788, 4);
    const e = estimate(s, 200, 'timing-ab');
    expect(e.winnerShare[0]).toBeGreaterThanOrEqual(0.9);
    expect(e.winnerShare[1]).toBe(0);
  });
});

describe('experiment verdict', () => {
  const look = (na: number, xa: number, nb: number, xb: number) => [
    { n: na, x: xa },
    { n: nb, x: xb },
  ];

  it('shows no winner before the minimum sample, however large the gap', () => {
    const v = experimentVerdict([look(150, 0, 150, 40)], [150, 150], [1, 1], { alpha: 0.05, minSamplePerArm: 200 });
    expect(v.minSampleReached).toBe(false);
    expect(v.winner).toBeNull();
    expect(v.reason).toMatch(/minimum sample/);
  });

  it('declares a clear winner once the sample is reached', () => {
    const v = experimentVerdict([look(1000, 50, 1000, 120)], [1000, 1000], [1, 1], { alpha: 0.05, minSamplePerArm: 200 });
    expect(v.winner).toBe(1);
    expect(v.arms[1]!.comparison!.low).toBeGreaterThan(0);
  });

  it('withholds the winner on a sample ratio mismatch', () => {
    const v = experimentVerdict([look(1000, 50, 1000, 120)], [1000, 1300], [1, 1], { alpha: 0.05, minSamplePerArm: 200 });
    expect(v.srm.mismatch).toBe(true);
    expect(v.winner).toBeNull();
  });

  it('crowns the control when every challenger is worse', () => {
    const v = experimentVerdict([look(1000, 120, 1000, 50)], [1000, 1000], [1, 1], { alpha: 0.05, minSamplePerArm: 200 });
    expect(v.winner).toBe(0);
  });
});
