import type { ExposureRow } from '../ops/figures.ts';
import { settingsOf, type ExperimentSettings, type Outcome } from './settings.ts';
import type { StoredExperiment } from './sql/arms.ts';
import type { ArmCounts } from './stats/msprt.ts';
import { wilson, type RateInterval } from './stats/wilson.ts';
import { experimentVerdict, type Verdict } from './verdict.ts';

/**
 * An experiment's report, as the API serves it: pure, from the stored experiment and its exposure
 * rows (ops/figures.ts experimentExposures). The looks the sequential test folds over are the ends
 * of the UTC days on which windows closed, then now: the p-value is a function of the data and not
 * of when anyone opened the screen, and it is valid whenever they do.
 */

export interface ArmReport {
  variantId: string;
  variantKey: string;
  weight: number;
  archived: boolean;
  /** Every send of the arm so far to enrollments in the experiment. */
  exposures: number;
  /** Sends to enrollments made after the declared winner (all to the winner; outside the experiment). */
  afterWinner: number;
  /** Sends whose reply window has closed: the rates' denominator. */
  closed: number;
  outcomes: Record<Outcome, number>;
  rates: Record<Outcome, RateInterval>;
  /** Against the control, on the experiment's outcome (null for the control). */
  comparison: { difference: number; low: number; high: number; pValue: number; significant: boolean } | null;
}

export interface ExperimentReport {
  stepId: string;
  stepKey: string;
  settings: ExperimentSettings;
  arms: ArmReport[];
  minSampleReached: boolean;
  comparisonAlpha: number;
  srm: Verdict['srm'];
  /** The arm the data declare the winner now, if any. */
  winner: string | null;
  /** The winner recorded for new enrollments (auto-winner.ts), if one was. */
  declared: StoredExperiment['declared'];
  reason: string;
}

/** A step is an experiment when it has two or more arms: live variants, or archived ones that were sent. */
export function experimentReport(exp: StoredExperiment, rows: readonly ExposureRow[]): ExperimentReport | null {
  const settings = settingsOf(exp.settings);
  const all = rows.filter((r) => r.stepId === exp.stepId);
  // Enrollments after a declared winner were sent it by decision: they would skew the rates and the ratio check.
  const mine = all.filter((r) => !r.afterWinner);
  const sent = new Set(all.map((r) => r.variantId));
  const arms = exp.variants.filter((v) => !v.archived || sent.has(v.id));
  if (arms.length < 2) return null;
  const index = new Map(arms.map((a, i) => [a.id, i]));
  const days = [...new Set(mine.map((r) => r.closedDay).filter((d): d is string => d !== null))].sort();
  const zero = () => ({ n: 0, replied: 0, positive: 0, meetings: 0 });
  const perDay = days.map(() => arms.map(zero));
  const exposures = arms.map(() => 0);
  for (const r of mine) {
    const i = index.get(r.variantId);
    if (i === undefined) continue;
    exposures[i]! += r.exposures;
    if (r.closedDay === null) continue;
    const c = perDay[days.indexOf(r.closedDay)]![i]!;
    c.n += r.exposures;
    c.replied += r.replied;
    c.positive += r.positive;
    c.meetings += r.meetings;
  }
  const cumulative: Array<ReturnType<typeof zero>[]> = [];
  let running = arms.map(zero);
  for (const day of perDay) {
    running = running.map((c, i) => ({ n: c.n + day[i]!.n, replied: c.replied + day[i]!.replied, positive: c.positive + day[i]!.positive, meetings: c.meetings + day[i]!.meetings }));
    cumulative.push(running);
  }
  const looks: ArmCounts[][] = cumulative.map((look) => look.map((c) => ({ n: c.n, x: c[settings.outcome] })));
  // Weights of archived arms are 0: they take no new enrollments.
  const weights = arms.map((a) => (a.archived ? 0 : a.weight));
  const v = experimentVerdict(looks, exposures, weights, settings);
  const level = 1 - settings.alpha;
  return {
    stepId: exp.stepId,
    stepKey: exp.stepKey,
    settings,
    arms: arms.map((a, i) => {
      const c = running[i]!;
      const cmp = v.arms[i]!.comparison;
      return {
        variantId: a.id,
        variantKey: a.key,
        weight: a.weight,
        archived: a.archived,
        exposures: exposures[i]!,
        afterWinner: all.filter((r) => r.afterWinner && r.variantId === a.id).reduce((n, r) => n + r.exposures, 0),
        closed: c.n,
        outcomes: { replied: c.replied, positive: c.positive, meetings: c.meetings },
        rates: { replied: wilson(c.replied, c.n, level), positive: wilson(c.positive, c.n, level), meetings: wilson(c.meetings, c.n, level) },
        comparison: cmp ? { difference: cmp.difference, low: cmp.low, high: cmp.high, pValue: cmp.pValue, significant: cmp.significant } : null,
      };
    }),
    minSampleReached: v.minSampleReached,
    comparisonAlpha: v.comparisonAlpha,
    srm: v.srm,
    winner: v.winner === null ? null : arms[v.winner]!.id,
    reason: v.reason,
    declared: exp.declared,
  };
}
