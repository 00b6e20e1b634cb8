/**
 * The experiment verdict's error rates, measured on simulated experiments with known true reply
 * rates (src/experiments/simulate.ts): the false positive rate when someone looks every day at
 * equal arms, and the power at stated effects, with the median day a winner was declared.
 *   npm run bench -- experiments-power [--trials=2000] [--seed=cadenza]
 * The figures quoted in docs/experiments.md come from this command with its defaults; a short form
 * runs in the test suite (src/experiments/simulate.test.ts).
 */
import { estimate, timingArmRate, type Scenario, type TimingScenario } from '../src/experiments/simulate.ts';
import { DEFAULT_TAU } from '../src/experiments/stats/msprt.ts';
import { DEFAULT_ALPHA, DEFAULT_MIN_SAMPLE_PER_ARM } from '../src/experiments/verdict.ts';
import { flag, intFlag } from './lib/args.ts';

interface Case {
  key: string;
  label: string;
  scenario: Scenario | TimingScenario;
  /** A/A: every decision is a false positive. */
  null: boolean;
}

export default async function experimentsPower(args: string[]): Promise<Record<string, unknown>> {
  const trials = intFlag(args, 'trials', 2000);
  const seed = flag(args, 'seed') ?? 'cadenza';
  const common = { alpha: DEFAULT_ALPHA, tau: DEFAULT_TAU, minSamplePerArm: DEFAULT_MIN_SAMPLE_PER_ARM, replyWindowDays: 14, days: 60 };
  const cases: Case[] = [
    { key: 'aa_5pct', label: 'A/A 5 % vs 5 %, 100/day', null: true, scenario: { ...common, rates: [0.05, 0.05], weights: [1, 1], enrollmentsPerDay: 100 } },
    { key: 'aa_2pct', label: 'A/A 2 % vs 2 %, 100/day', null: true, scenario: { ...common, rates: [0.02, 0.02], weights: [1, 1], enrollmentsPerDay: 100 } },
    { key: 'aa_10pct_w13', label: 'A/A 10 % vs 10 %, weights 1:3, 100/day', null: true, scenario: { ...common, rates: [0.1, 0.1], weights: [1, 3], enrollmentsPerDay: 100 } },
    { key: 'aaa_5pct', label: 'A/A/A 5 % ×3, 150/day', null: true, scenario: { ...common, rates: [0.05, 0.05, 0.05], weights: [1, 1, 1], enrollmentsPerDay: 150 } },
    { key: 'ab_5v8_100', label: '5 % vs 8 %, 100/day', null: false, scenario: { ...common, rates: [0.05, 0.08], weights: [1, 1], enrollmentsPerDay: 100 } },
    { key: 'ab_5v8_40', label: '5 % vs 8 %, 40/day', null: false, scenario: { ...common, rates: [0.05, 0.08], weights: [1, 1], enrollmentsPerDay: 40 } },
    { key: 'ab_5v6p5_100', label: '5 % vs 6.5 %, 100/day', null: false, scenario: { ...common, rates: [0.05, 0.065], weights: [1, 1], enrollmentsPerDay: 100 } },
    { key: 'ab_2v4_100', label: '2 % vs 4 %, 100/day', null: false, scenario: { ...common, rates: [0.02, 0.04], weights: [1, 1], enrollmentsPerDay: 100 } },
  ];
  // Timing arms (arm-view.ts): 3 business days then 08-10 against 6 then 14-16, truth stated by send hour.
  const timing = { ...common, earlyRate: 0.02, replyLagDays: 3, enrollmentsPerDay: 100, arms: [{ weight: 1, delayDays: 3, hours: [8, 10] as [number, number] }, { weight: 1, delayDays: 6, hours: [14, 16] as [number, number] }] };
  const hourly = (morning: number, afternoon: number) => Array.from({ length: 24 }, (_, h) => (h >= 8 && h < 10 ? morning : h >= 14 && h < 16 ? afternoon : 0.045));
  cases.push(
    { key: 'timing_aa', label: 'timing A/A: 4 % at every hour, 100/day', null: true, scenario: { ...timing, replyByHour: hourly(0.04, 0.04) } },
    { key: 'timing_6v3', label: 'timing: 6 % at 8-10 vs 3 % at 14-16', null: false, scenario: { ...timing, replyByHour: hourly(0.06, 0.03) } },
    { key: 'timing_5v4', label: 'timing: 5 % at 8-10 vs 4 % at 14-16', null: false, scenario: { ...timing, replyByHour: hourly(0.05, 0.04) } },
  );
  console.log(`${trials} simulated experiments per case, seed ${JSON.stringify(seed)}: α ${common.alpha}, τ ${common.tau}, minimum ${common.minSamplePerArm} closed exposures per arm,`);
  console.log(`${common.days} days of sending, ${common.replyWindowDays}-day reply window, one look per day until the last window closes\n`);
  const figures: Record<string, unknown> = { trials, alpha: common.alpha, tau: common.tau, min_sample_per_arm: common.minSamplePerArm };
  for (const c of cases) {
    const t0 = process.hrtime.bigint();
    const e = estimate(c.scenario, trials, `${seed}:${c.key}`);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const rates = 'rates' in c.scenario ? c.scenario.rates : c.scenario.arms.map((a) => timingArmRate(c.scenario as TimingScenario, a));
    const best = rates.indexOf(Math.max(...rates));
    const rate = c.null ? e.decided : e.winnerShare[best]!;
    // A binomial standard error, so a reader sees how far each figure can be trusted.
    const se = Math.sqrt((rate * (1 - rate)) / trials);
    const what = c.null ? 'false positive rate' : 'power (right winner)';
    const wrong = c.null ? '' : `, wrong winner ${(100 * (e.decided - rate)).toFixed(2)} %`;
    console.log(
      `${c.label.padEnd(40)} (true rates ${rates.map((r) => `${(100 * r).toFixed(2)} %`).join(' vs ')}) ${what} ${(100 * rate).toFixed(2)} % ± ${(100 * se).toFixed(2)}${wrong}, median day of decision ${e.medianDay ?? '-'}, ratio-check alarms ${(100 * e.srmAlarms).toFixed(2)} % (${seconds.toFixed(1)} s)`,
    );
    figures[c.null ? `${c.key}_false_positive_pct` : `${c.key}_power_pct`] = Math.round(rate * 10000) / 100;
    if (!c.null) figures[`${c.key}_median_day`] = e.medianDay;
    figures[`${c.key}_srm_alarm_pct`] = Math.round(e.srmAlarms * 10000) / 100;
  }
  return figures;
}
