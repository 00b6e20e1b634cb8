/**
 * The experiments of a sequence as stored: its live email steps with their variants (archived ones
 * too: their exposures stay in the results) and each step's experiment settings.
 */
import type { Db } from '../../store/store.ts';
import type { ExperimentSettings } from '../settings.ts';
import { winnersOf } from './winners.ts';

export interface StoredExperiment {
  stepId: string;
  stepKey: string;
  stepPosition: number;
  settings: Partial<ExperimentSettings> | undefined;
  variants: Array<{ id: string; key: string; weight: number; archived: boolean }>;
  /** The winner declared for it (auto-winner.ts), if any. */
  declared: { variantId: string; at: string; pValue: number; reason: string } | null;
}

// -- name: experiments-of-sequence
export async function storedExperiments(db: Db, workspaceId: string, sequenceId: string): Promise<StoredExperiment[]> {
  const steps = await db
    .selectFrom('step as st')
    .innerJoin('sequence as s', 's.id', 'st.sequence_id')
    .select(['st.id', 'st.key', 'st.position', 'st.config'])
    .where('s.workspace_id', '=', workspaceId)
    .where('s.id', '=', sequenceId)
    .where('st.kind', '=', 'email')
    .where('st.archived_at', 'is', null)
    .orderBy('st.position')
    .execute();
  if (steps.length === 0) return [];
  const variants = await db
    .selectFrom('variant')
    .select(['id', 'step_id', 'key', 'weight', 'archived_at'])
    .where('step_id', 'in', steps.map((s) => s.id))
    .orderBy('key')
    .execute();
  const winners = await winnersOf(db, steps.map((s) => s.id));
  return steps.map((s) => ({
    stepId: s.id,
    stepKey: s.key,
    stepPosition: s.position,
    settings: ((s.config ?? {}) as { experiment?: Partial<ExperimentSettings> }).experiment,
    variants: variants.filter((v) => v.step_id === s.id).map((v) => ({ id: v.id, key: v.key, weight: v.weight, archived: v.archived_at !== null })),
    declared: declaredOf(winners.find((w) => w.step_id === s.id)),
  }));
}

function declaredOf(w: Awaited<ReturnType<typeof winnersOf>>[number] | undefined): StoredExperiment['declared'] {
  return w ? { variantId: w.variant_id, at: new Date(w.declared_at).toISOString(), pValue: Number(w.p_value), reason: w.reason } : null;
}
