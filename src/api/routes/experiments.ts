import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { sequenceExperiments } from '../../experiments/experiments.ts';
import { fixedStepKeys, sequenceLevelExperiments } from '../../sequence/experiment-report.ts';
import { OUTCOMES } from '../../experiments/settings.ts';
import { figuresWindow } from '../../ops/figures.ts';
import { findSequenceId } from '../../sequence/sql/sequences.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * A sequence's experiments (email steps with more than one variant, and experiments declared on the
 * sequence over several steps or their timing): the statistics are defined in
 * src/experiments/ and stated in docs/experiments.md; exposures and outcomes in ops/figures.ts.
 */
const interval = z.object({ rate: z.number().nullable(), low: z.number(), high: z.number() });
const perOutcome = <T extends z.ZodType>(t: T) => z.object(Object.fromEntries(OUTCOMES.map((o) => [o, t])) as Record<(typeof OUTCOMES)[number], T>);

/** An arm's figures, the same for a step's variants and a sequence experiment's arms. */
const armStats = {
  weight: z.number().int(),
  exposures: z.number().int().describe('Enrollments exposed to this arm so far (the arm actually applied)'),
  closed: z.number().int().describe('Exposures whose reply window has closed: the denominator of the rates'),
  outcomes: perOutcome(z.number().int()).describe('Closed exposures with the outcome inside their window'),
  rates: perOutcome(interval).describe('Rate per closed exposure with its Wilson interval at level 1 − α'),
  comparison: z
    .object({ difference: z.number(), low: z.number(), high: z.number(), pValue: z.number(), significant: z.boolean() })
    .nullable()
    .describe('Against the control (the first arm): rate difference, its always-valid confidence sequence and the mSPRT always-valid p-value; null for the control'),
};

/** The verdict's fields, the same for both kinds of experiment. */
const verdictFields = {
  minSampleReached: z.boolean(),
  comparisonAlpha: z.number().describe('α divided among the comparisons with the control'),
  srm: z.object({ chiSquare: z.number(), pValue: z.number(), mismatch: z.boolean() }).describe('Sample-ratio check of the exposures against the weights (alarm at p < 0.001)'),
  reason: z.string(),
};

const settings = z.object({
  replyWindowDays: z.number().int(),
  outcome: z.enum(OUTCOMES).describe('The outcome the test judges on; all three are reported'),
  alpha: z.number(),
  minSamplePerArm: z.number().int(),
  tau: z.number().describe('Standard deviation of the mSPRT normal mixture, in rate units'),
  autoWinner: z.boolean(),
});

const experiment = z
  .object({
    stepId: z.uuid(),
    stepKey: z.string(),
    settings,
    arms: z.array(
      z.object({
        variantId: z.uuid(),
        variantKey: z.string(),
        archived: z.boolean(),
        afterWinner: z.number().int().describe('Sends to enrollments made after the declared winner: they got it by decision and are not in the figures here'),
        ...armStats,
      }),
    ),
    ...verdictFields,
    winner: z.uuid().nullable().describe('The winning variant by the data now, if any'),
    declared: z
      .object({ variantId: z.uuid(), at: z.string(), pValue: z.number(), reason: z.string() })
      .nullable()
      .describe('The automatic winner recorded (settings.autoWinner): every enrollment from `at` on gets it; earlier ones keep their arm'),
  })
  .meta({ id: 'Experiment' });

const sequenceExperiment = z
  .object({
    key: z.string(),
    kind: z.enum(['timing', 'content']).describe("'timing': an arm sets a delay, send hours or an order; 'content': variants on several steps"),
    steps: z.array(z.string()).describe('The step keys the experiment touches, in the sequence order'),
    settings,
    arms: z.array(
      z.object({
        key: z.string(),
        choices: z
          .array(z.object({ step: z.string(), variant: z.string().optional(), delay: z.string().optional(), sendHours: z.string().optional() }))
          .describe('What the arm fixes, step by step'),
        order: z.array(z.string()).nullable().describe('The step keys in the order this arm runs them; null: the sequence order'),
        afterWinner: z.number().int().describe('Enrollments made after the declared winner: they got it by decision and are not in the figures here'),
        ...armStats,
      }),
    ),
    ...verdictFields,
    winner: z.string().nullable().describe('The winning arm (key) by the data now, if any'),
    declared: z
      .object({ arm: z.string(), at: z.string(), pValue: z.number(), reason: z.string() })
      .nullable()
      .describe('The automatic winner recorded (settings.autoWinner): every enrollment from `at` on gets it; earlier ones keep their arm'),
  })
  .meta({ id: 'SequenceExperiment' });

export const experimentRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/sequences/:sequenceId/experiments',
    summary: "A sequence's A/B experiments: per arm its exposures, outcomes inside the reply window, rates with intervals, and the always-valid sequential test against the control (mSPRT), the minimum sample, the sample-ratio check and the winner if any",
    tags: ['analytics'],
    access: { workspace: 'member' },
    params: workspaceParams({ sequenceId: z.uuid() }),
    response: z.object({ asOf: z.string(), experiments: z.array(experiment), sequenceExperiments: z.array(sequenceExperiment).describe('Experiments declared on the sequence: arms over several steps or over timing (docs/experiments.md)') }),
    handler: async ({ ctx, ws, params }) => {
      if (!(await findSequenceId(ctx.store.db, ws.workspaceId, params.sequenceId))) throw cadenzaError('NOT_FOUND', 'no such sequence');
      // One clock with the other figures: the later of now and the latest journal entry (ops/figures.ts).
      const { asOf } = await figuresWindow(ctx.store.db, ws.workspaceId, ctx.clock.now(), 1);
      const experiments = await sequenceExperiments(ctx.store.db, ws.workspaceId, params.sequenceId, asOf, await fixedStepKeys(ctx.store.db, params.sequenceId));
      const sequenceLevel = await sequenceLevelExperiments(ctx.store.db, ws.workspaceId, params.sequenceId, asOf);
      return { asOf: new Date(asOf).toISOString(), experiments, sequenceExperiments: sequenceLevel };
    },
  }),
];
