import { z } from 'zod';
import { DEFAULT_TAU } from './stats/msprt.ts';
import { DEFAULT_ALPHA, DEFAULT_MIN_SAMPLE_PER_ARM } from './verdict.ts';

/**
 * An experiment's settings: the experiment is an email step with more than one variant, and its
 * settings sit with the step (`experiment:` in the definition file, `config.experiment` in the
 * store). Every field has a default, so a step with variants is an experiment without any.
 */

export const OUTCOMES = ['replied', 'positive', 'meetings'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface ExperimentSettings {
  /** Days after each send during which its outcome counts. */
  replyWindowDays: number;
  /** Which outcome the test judges the arms on (all three are reported). */
  outcome: Outcome;
  alpha: number;
  /** Closed exposures every arm needs before a winner can be declared. */
  minSamplePerArm: number;
  /** The mSPRT mixture's standard deviation, in rate units (stats/msprt.ts). */
  tau: number;
  /** Shift new enrollments to the winner once one is declared. */
  autoWinner: boolean;
}

export const DEFAULT_REPLY_WINDOW_DAYS = 14;

export const defaultSettings: ExperimentSettings = {
  replyWindowDays: DEFAULT_REPLY_WINDOW_DAYS,
  outcome: 'replied',
  alpha: DEFAULT_ALPHA,
  minSamplePerArm: DEFAULT_MIN_SAMPLE_PER_ARM,
  tau: DEFAULT_TAU,
  autoWinner: false,
};

/** The definition file's form (snake_case, like the rest of the file). */
export const experimentSchema = z
  .object({
    // The messages are what the editor shows next to the field (plain words, not the validator's).
    reply_window_days: z.number().int('the reply window is a whole number of days').min(1, 'the reply window is 1 to 90 days').max(90, 'the reply window is 1 to 90 days').optional(),
    outcome: z.enum(OUTCOMES, 'the outcome is replied, positive or meetings').optional(),
    alpha: z.number().min(0.001, 'alpha (the false positive rate) is between 0.001 and 0.2; 0.05 is usual').max(0.2, 'alpha (the false positive rate) is between 0.001 and 0.2; 0.05 is usual').optional(),
    min_sample_per_arm: z.number().int('the minimum sample is a whole number of sends').min(50, 'each arm needs at least 50 closed sends before a winner').max(1_000_000, 'the minimum sample is at most 1,000,000 sends per arm').optional(),
    tau: z.number().min(0.001, 'tau is between 0.001 and 0.5; 0.03 is usual').max(0.5, 'tau is between 0.001 and 0.5; 0.03 is usual').optional(),
    auto_winner: z.boolean().optional(),
  })
  .strict();

export type ExperimentDocument = z.infer<typeof experimentSchema>;

const fileKeys = { replyWindowDays: 'reply_window_days', outcome: 'outcome', alpha: 'alpha', minSamplePerArm: 'min_sample_per_arm', tau: 'tau', autoWinner: 'auto_winner' } as const;

/** The settings a file states, in the model's names (only those stated, for the step's config). */
export function fromDocument(doc: ExperimentDocument): Partial<ExperimentSettings> {
  const out: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(fileKeys)) if (doc[f] !== undefined) out[k] = doc[f];
  return out as Partial<ExperimentSettings>;
}

export function toDocument(s: Partial<ExperimentSettings>): ExperimentDocument {
  const out: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(fileKeys)) if (s[k as keyof ExperimentSettings] !== undefined) out[f] = s[k as keyof ExperimentSettings];
  return out as ExperimentDocument;
}

/** A step's stored settings over the defaults. */
export function settingsOf(stored: Partial<ExperimentSettings> | undefined): ExperimentSettings {
  return { ...defaultSettings, ...(stored ?? {}) };
}
