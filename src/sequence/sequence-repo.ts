import { parseWindow, type SendWindow } from '../calendar/index.ts';
import { defaultStopRules, type BranchArm, type CallRetry, type SequenceArm, type SequenceDef, type SequenceExperiment, type StepDef, type StopRules } from './model.ts';
import type { Db, Tx } from '../store/store.ts';
import type { ExperimentWinnerRow, SequenceExperimentWinnerRow, SequenceRow, StepRow, VariantRow } from '../store/schema.ts';
import { cadenzaError } from '../common/errors.ts';
import { armWindow, type ExperimentDefinition } from './definition-experiments.ts';

/** Sequence settings kept in `sequence.settings`. */
export interface SequenceSettings {
  skipHolidays?: boolean;
  jitterMinutes?: number;
  /** Read by the sender (sending/send-context.ts): an open pixel / click redirects in the HTML part. */
  trackOpens?: boolean;
  trackClicks?: boolean;
  /** The sequence's experiments as the definition states them, by step and variant key (definition-experiments.ts). */
  experiments?: ExperimentDefinition[];
}

export function toSequenceDef(row: SequenceRow, steps: StepRow[], variants: VariantRow[] = [], winners: ExperimentWinnerRow[] = [], armWinners: SequenceExperimentWinnerRow[] = []): SequenceDef {
  const settings = (row.settings ?? {}) as SequenceSettings;
  // An arm step names its branch by key (a key is a step's identity for life); the engine by id.
  const idByKey = new Map(steps.map((s) => [s.key, s.id]));
  const window = parseWindow(row.send_window as Parameters<typeof parseWindow>[0]);
  const live = (stepId: string) => variants.filter((v) => v.step_id === stepId && v.archived_at === null);
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    window,
    skipHolidays: settings.skipHolidays ?? true,
    jitterMinutes: settings.jitterMinutes ?? 45,
    stopRules: { ...defaultStopRules, ...((row.stop_rules ?? {}) as Partial<StopRules>) },
    ...(settings.experiments?.length ? { experiments: settings.experiments.map((x) => toSequenceExperiment(x, steps, variants, window, armWinners.find((w) => w.experiment_key === x.key))) } : {}),
    steps: steps
      .slice()
      .sort((a, b) => a.position - b.position)
      .map((s): StepDef => {
        const cfg = (s.config ?? {}) as { waitForTask?: boolean; title?: string; retry?: CallRetry; arms?: BranchArm[]; arm?: { branch: string; key: string } };
        const branchId = cfg.arm ? idByKey.get(cfg.arm.branch) : undefined;
        return {
          id: s.id,
          key: s.key,
          position: s.position,
          kind: s.kind,
          delay: { amount: s.delay_amount, unit: s.delay_unit },
          archived: s.archived_at !== null,
          ...(cfg.waitForTask !== undefined ? { waitForTask: cfg.waitForTask } : {}),
          ...(cfg.title !== undefined ? { title: cfg.title } : {}),
          ...(s.kind === 'call' && cfg.retry ? { retry: cfg.retry } : {}),
          variants: live(s.id).map((v) => ({ id: v.id, weight: v.weight })),
          ...(s.kind === 'email' && live(s.id).some((v) => !v.subject?.trim()) ? { inThread: true } : {}),
          ...winnerOf(winners, s.id),
          ...(s.kind === 'branch' ? { arms: cfg.arms ?? [] } : {}),
          ...(cfg.arm && branchId ? { arm: { branchId, key: cfg.arm.key } } : {}),
        };
      }),
  };
}

/**
 * A stored experiment in the engine's terms: steps and variants by id. A choice on a step or variant
 * that is no longer live is dropped (the step runs as the sequence says); an order keeps its live steps.
 */
export function toSequenceExperiment(x: ExperimentDefinition, steps: StepRow[], variants: VariantRow[], window: SendWindow, winner?: SequenceExperimentWinnerRow): SequenceExperiment {
  const live = new Map(steps.filter((s) => s.archived_at === null).map((s) => [s.key, s.id]));
  const variantId = (stepId: string, key: string) => variants.find((v) => v.step_id === stepId && v.key === key && v.archived_at === null)?.id;
  return {
    key: x.key,
    arms: x.arms.map((a) => {
      const chosen: SequenceArm['steps'] = {};
      for (const [k, c] of Object.entries(a.steps)) {
        const id = live.get(k);
        if (!id) continue;
        const v = c.variant !== undefined ? variantId(id, c.variant) : undefined;
        const w = c.sendHours ? armWindow(c.sendHours, window) : undefined;
        chosen[id] = { ...(v ? { variantId: v } : {}), ...(c.delay ? { delay: c.delay } : {}), ...(w ? { window: w } : {}) };
      }
      const order = a.order?.map((k) => live.get(k)).filter((id): id is string => id !== undefined);
      return { key: a.key, weight: a.weight, steps: chosen, ...(order && order.length > 1 ? { order } : {}) };
    }),
    ...(winner ? { winner: { armKey: winner.arm_key, since: new Date(winner.declared_at).getTime() } } : {}),
  };
}

function winnerOf(winners: ExperimentWinnerRow[], stepId: string): Pick<StepDef, 'winner'> {
  const w = winners.find((x) => x.step_id === stepId);
  return w ? { winner: { armId: w.variant_id, since: new Date(w.declared_at).getTime() } } : {};
}

/**
 * Sequence definitions by id, cached by version: every edit bumps `sequence.version`, so a cached
 * definition is reused only while it is current (one cheap query checks that).
 */
export class SequenceCache {
  private readonly byId = new Map<string, { version: number; def: SequenceDef }>();

  /**
   * The definition of sequence `id`, from the cache when its version is current. `knownVersion`:
   * the version the caller already read in its own statement (the enrollment service's row lock),
   * which spares the version query; null or absent: it is read here.
   */
  async get(db: Db | Tx, id: string, knownVersion: number | null = null): Promise<SequenceDef> {
    const hit = this.byId.get(id);
    if (hit && knownVersion !== null && hit.version === knownVersion) return hit.def;
    const v = await db.selectFrom('sequence').select('version').where('id', '=', id).executeTakeFirst();
    if (!v) throw cadenzaError('NOT_FOUND', `sequence ${id} not found`, { sequenceId: id });
    if (hit && hit.version === v.version) return hit.def;
    const row = await db.selectFrom('sequence').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const steps = await db.selectFrom('step').selectAll().where('sequence_id', '=', id).execute();
    const variants = steps.length
      ? await db.selectFrom('variant').selectAll().where('step_id', 'in', steps.map((s) => s.id)).execute()
      : [];
    // An experiment's declared winner bumps the sequence's version too (experiments/sql/winners.ts).
    const winners = steps.length ? await db.selectFrom('experiment_winner').selectAll().where('step_id', 'in', steps.map((s) => s.id)).execute() : [];
    const armWinners = ((row.settings ?? {}) as SequenceSettings).experiments?.length ? await db.selectFrom('sequence_experiment_winner').selectAll().where('sequence_id', '=', id).execute() : [];
    const def = toSequenceDef(row, steps, variants, winners, armWinners);
    this.byId.set(id, { version: row.version, def });
    return def;
  }

  /**
   * The definitions of sequences whose current versions the caller has just read (the service reads
   * them with the rows it locks): no query for those cached at that version.
   */
  async current(db: Db | Tx, versions: ReadonlyMap<string, number>): Promise<Map<string, SequenceDef>> {
    const out = new Map<string, SequenceDef>();
    for (const [id, version] of versions) out.set(id, await this.get(db, id, version));
    return out;
  }

  invalidate(id: string): void {
    this.byId.delete(id);
  }
}
