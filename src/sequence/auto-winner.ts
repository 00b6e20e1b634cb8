import type { Clock } from '../common/clock.ts';
import type { Store } from '../store/store.ts';
import { sequenceExperiments } from '../experiments/experiments.ts';
import { declareArmWinner, declareWinner, sequencesAwaitingWinner } from '../experiments/sql/winners.ts';
import { sequenceLevelExperiments } from './experiment-report.ts';

/**
 * The automatic winner: for every experiment (a step's variants, or a sequence experiment's arms)
 * whose settings ask for one (`auto_winner: true`) and that has none yet, the verdict of now (verdict.ts: significant under the always-valid test, the
 * minimum sample reached, no ratio mismatch) is recorded as the winner. From then on new enrollments
 * all get the winning variant; enrollments already in the experiment keep their arm
 * (assignment.ts armFor; for a sequence experiment's arms, whose due times were planned with them,
 * sequence/arm-view.ts joinExperiments). The API role runs it periodically (app.ts): definitions are the API's to
 * write (ops/mtls/db-grants.ts). The test is always valid, so checking it every round is as sound as
 * checking it once.
 */
export async function settleWinners(deps: { store: Store; clock: Clock }): Promise<Array<{ stepId: string; variantId: string } | { experimentKey: string; armKey: string }>> {
  const declared: Array<{ stepId: string; variantId: string } | { experimentKey: string; armKey: string }> = [];
  const now = deps.clock.now();
  for (const { workspaceId, sequenceId } of await sequencesAwaitingWinner(deps.store.db)) {
    for (const x of await sequenceExperiments(deps.store.db, workspaceId, sequenceId, now)) {
      if (!x.settings.autoWinner || x.declared || x.winner === null) continue;
      const arm = x.arms.find((a) => a.variantId === x.winner)!;
      if (await declareWinner(deps.store.db, { sequenceId, stepId: x.stepId, variantId: arm.variantId, at: new Date(now), pValue: evidence(arm, x.arms), reason: x.reason })) {
        declared.push({ stepId: x.stepId, variantId: arm.variantId });
      }
    }
    for (const x of await sequenceLevelExperiments(deps.store.db, workspaceId, sequenceId, now)) {
      if (!x.settings.autoWinner || x.declared || x.winner === null) continue;
      const arm = x.arms.find((a) => a.key === x.winner)!;
      if (await declareArmWinner(deps.store.db, { sequenceId, experimentKey: x.key, armKey: arm.key, at: new Date(now), pValue: evidence(arm, x.arms), reason: x.reason })) {
        declared.push({ experimentKey: x.key, armKey: arm.key });
      }
    }
  }
  return declared;
}

type Compared = { comparison: { pValue: number } | null };

/** The winner's p-value; the control wins on its challengers' comparisons: the largest p-value among them is its evidence. */
function evidence(arm: Compared, arms: readonly Compared[]): number {
  return arm.comparison ? arm.comparison.pValue : Math.max(...arms.filter((a) => a.comparison).map((a) => a.comparison!.pValue));
}
