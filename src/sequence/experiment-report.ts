import { sequenceExperimentExposures, type ExposureRow } from '../ops/figures.ts';
import type { ExperimentDefinition } from './definition-experiments.ts';
import { formatDelay } from './definition-document.ts';
import type { SequenceSettings } from './sequence-repo.ts';
import type { Db } from '../store/store.ts';
import { experimentReport, type ArmReport, type ExperimentReport } from '../experiments/report.ts';
import { settingsOf } from '../experiments/settings.ts';
import { armWinnersOf } from '../experiments/sql/winners.ts';

/**
 * The report of a sequence's own experiments (arms over several steps or over timing; arm-view.ts):
 * the same statistics as a step's variants (report.ts), on exposures counted from the moment the
 * arms part ways (ops/figures.ts sequenceExperimentExposures), and each arm described by what it
 * fixes, for the panel.
 */

export interface ArmChoiceReport {
  step: string;
  variant?: string;
  delay?: string;
  sendHours?: string;
}

export type SequenceArmReport = Omit<ArmReport, 'variantId' | 'variantKey' | 'archived'> & { key: string; choices: ArmChoiceReport[]; order: string[] | null };

/** A sequence experiment's recorded automatic winner (auto-winner.ts). */
export interface DeclaredArm {
  arm: string;
  at: string;
  pValue: number;
  reason: string;
}

export type SequenceExperimentReport = Omit<ExperimentReport, 'stepId' | 'stepKey' | 'arms' | 'declared' | 'winner'> & {
  key: string;
  /** 'timing' when an arm sets a delay, send hours or an order; else 'content' (variants on several steps). */
  kind: 'timing' | 'content';
  /** Step keys the experiment touches, in the sequence's order. */
  steps: string[];
  arms: SequenceArmReport[];
  /** The arm key the data name the winner now, if any. */
  winner: string | null;
  /** The automatic winner recorded (settings.autoWinner): every enrollment from `at` on gets it. */
  declared: DeclaredArm | null;
};

/** The steps (by key) whose variant a sequence experiment fixes: not step experiments of their own. */
export async function fixedStepKeys(db: Db, sequenceId: string): Promise<Set<string>> {
  const seq = await db.selectFrom('sequence').select('settings').where('id', '=', sequenceId).executeTakeFirst();
  return new Set(((seq?.settings ?? {}) as SequenceSettings).experiments?.flatMap((x) => exposureMarks(x).sent) ?? []);
}

/** Which steps' planning (timing) and which steps' sends (variants) open an enrollment's exposure. */
export function exposureMarks(x: ExperimentDefinition): { planned: string[]; sent: string[] } {
  const planned = new Set<string>();
  const sent = new Set<string>();
  for (const a of x.arms) {
    for (const [k, c] of Object.entries(a.steps)) {
      if (c.delay || c.sendHours) planned.add(k);
      if (c.variant !== undefined) sent.add(k);
    }
    for (const k of a.order ?? []) planned.add(k);
  }
  return { planned: [...planned], sent: [...sent] };
}

/** Pure: one experiment's report from its definition and its exposure rows (stepId = the experiment's key, variantId = the arm's key). */
export function sequenceExperimentReport(x: ExperimentDefinition, rows: readonly ExposureRow[], stepOrder: readonly string[], declared: DeclaredArm | null = null): SequenceExperimentReport | null {
  const r = experimentReport(
    {
      stepId: x.key,
      stepKey: x.key,
      stepPosition: 0,
      settings: x.settings,
      variants: x.arms.map((a) => ({ id: a.key, key: a.key, weight: a.weight, archived: false })),
      declared: declared ? { variantId: declared.arm, at: declared.at, pValue: declared.pValue, reason: declared.reason } : null,
    },
    rows,
  );
  if (!r) return null;
  const marks = exposureMarks(x);
  const touched = new Set([...marks.planned, ...marks.sent]);
  const { stepId: _s, stepKey: _k, declared: _d, ...rest } = r;
  return {
    ...rest,
    key: x.key,
    kind: marks.planned.length ? 'timing' : 'content',
    steps: stepOrder.filter((k) => touched.has(k)),
    winner: r.winner,
    declared,
    arms: r.arms.map(({ variantId: _v, variantKey, archived: _a, ...stats }) => {
      const def = x.arms.find((a) => a.key === variantKey)!;
      return {
        key: variantKey,
        ...stats,
        choices: Object.entries(def.steps).map(([step, c]) => ({ step, ...(c.variant !== undefined ? { variant: c.variant } : {}), ...(c.delay ? { delay: formatDelay(c.delay) } : {}), ...(c.sendHours ? { sendHours: c.sendHours } : {}) })),
        order: def.order ?? null,
      };
    }),
  };
}

/** Every sequence experiment of a sequence with its arms, rates and verdict at `now`. */
export async function sequenceLevelExperiments(db: Db, workspaceId: string, sequenceId: string, now: number): Promise<SequenceExperimentReport[]> {
  const row = await db.selectFrom('sequence').select('settings').where('workspace_id', '=', workspaceId).where('id', '=', sequenceId).executeTakeFirst();
  const defs = ((row?.settings ?? {}) as SequenceSettings).experiments ?? [];
  if (defs.length === 0) return [];
  const steps = await db.selectFrom('step').select(['id', 'key', 'archived_at']).where('sequence_id', '=', sequenceId).orderBy('position').execute();
  const idOf = new Map(steps.map((s) => [s.key, s.id]));
  const ids = (keys: string[]) => keys.map((k) => idOf.get(k)).filter((id): id is string => id !== undefined);
  const inputs = defs.map((x) => {
    const m = exposureMarks(x);
    return { key: x.key, days: settingsOf(x.settings).replyWindowDays, planned: ids(m.planned), sent: ids(m.sent) };
  });
  const rows = await sequenceExperimentExposures(db, workspaceId, sequenceId, inputs, new Date(now));
  const order = steps.filter((s) => s.archived_at === null).map((s) => s.key);
  const declared = new Map((await armWinnersOf(db, sequenceId)).map((w) => [w.experiment_key, { arm: w.arm_key, at: new Date(w.declared_at).toISOString(), pValue: Number(w.p_value), reason: w.reason }]));
  return defs.map((x) => sequenceExperimentReport(x, rows.filter((r) => r.stepId === x.key), order, declared.get(x.key) ?? null)).filter((r): r is SequenceExperimentReport => r !== null);
}
