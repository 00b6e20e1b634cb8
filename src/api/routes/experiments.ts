import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { sequenceExperiments } from '../../experiments/experiments.ts';
import { OUTCOMES } from '../../experiments/settings.ts';
import { figuresWindow } from '../../ops/figures.ts';
import { findSequenceId } from '../../sequence/sql/sequences.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * A sequence's experiments (email steps with more than one variant): the statistics are defined in
 * src/experiments/ and stated in docs/experiments.md; exposures and outcomes in ops/figures.ts.
 */
const interval = z.object({ rate: z.number().nullable(), low: z.number(), high: z.number() });
const perOutcome = <T extends z.ZodType>(t: T) => z.object(Object.fromEntries(OUTCOMES.map((o) => [o, t])) as Record<(typeof OUTCOMES)[number], T>);

const experiment = z
  .object({
    stepId: z.uuid(),
    stepKey: z.string(),
    settings: z.object({
      replyWindowDays: z.number().int(),
      outcome: z.enum(OUTCOMES).describe('The outcome the test judges on; all three are reported'),
      alpha: z.number(),
      minSamplePerArm: z.number().int(),
      tau: z.number().describe('Standard deviation of the mSPRT normal mixture, in rate units'),
      autoWinner: z.boolean(),
    }),
    arms: z.array(
      z.object({
        variantId: z.uuid(),
        variantKey: z.string(),
        weight: z.number().int(),
        archived: z.boolean(),
        exposures: z.number().int().describe('Sends of this arm so far (the arm its send request carried)'),
        afterWinner: z.number().int().describe('Sends to enrollments made after the declared winner: they got it by decision and are not in the figures here'),
        closed: z.number().int().describe('Sends whose reply window has closed: the denominator of the rates'),
        outcomes: perOutcome(z.number().int()).describe('Closed sends with the outcome inside their window'),
        rates: perOutcome(interval).describe('Rate per closed send with its Wilson interval at level 1 − α'),
        comparison: z
          .object({ difference: z.number(), low: z.number(), high: z.number(), pValue: z.number(), significant: z.boolean() })
          .nullable()
          .describe('Against the control (the first arm): rate difference, its always-valid confidence sequence and the mSPRT always-valid p-value; null for the control'),
      }),
    ),
    minSampleReached: z.boolean(),
    comparisonAlpha: z.number().describe('α divided among the comparisons with the control'),
    srm: z.object({ chiSquare: z.number(), pValue: z.number(), mismatch: z.boolean() }).describe('Sample-ratio check of the exposures against the weights (alarm at p < 0.001)'),
    winner: z.uuid().nullable().describe('The winning variant by the data now, if any'),
    reason: z.string(),
    declared: z
      .object({ variantId: z.uuid(), at: z.string(), pValue: z.number(), reason: z.string() })
      .nullable()
      .describe('The automatic winner recorded (settings.autoWinner): every enrollment from `at` on gets it; earlier ones keep their arm'),
  })
  .meta({ id: 'Experiment' });

export const experimentRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/sequences/:sequenceId/experiments',
    summary: "A sequence's A/B experiments: per arm its exposures, outcomes inside the reply window, rates with intervals, and the always-valid sequential test against the control (mSPRT), the minimum sample, the sample-ratio check and the winner if any",
    tags: ['analytics'],
    access: { workspace: 'member' },
    params: workspaceParams({ sequenceId: z.uuid() }),
    response: z.object({ asOf: z.string(), experiments: z.array(experiment) }),
    handler: async ({ ctx, ws, params }) => {
      if (!(await findSequenceId(ctx.store.db, ws.workspaceId, params.sequenceId))) throw cadenzaError('NOT_FOUND', 'no such sequence');
      // One clock with the other figures: the later of now and the latest journal entry (ops/figures.ts).
      const { asOf } = await figuresWindow(ctx.store.db, ws.workspaceId, ctx.clock.now(), 1);
      const experiments = await sequenceExperiments(ctx.store.db, ws.workspaceId, params.sequenceId, asOf);
      return { asOf: new Date(asOf).toISOString(), experiments };
    },
  }),
];
