import type { Clock } from '../common/clock.ts';
import type { Store } from '../store/store.ts';
import { sequenceExperiments } from './experiments.ts';
import { declareWinner, sequencesAwaitingWinner } from './sql/winners.ts';

/**
 * The automatic winner: for every experiment whose settings ask for one (`auto_winner: true`) and
 * that has none yet, the verdict of now (verdict.ts: significant under the always-valid test, the
 * minimum sample reached, no ratio mismatch) is recorded as the winner. From then on new enrollments
 * all get the winning variant; enrollments already in the experiment keep their arm
 * (assignment.ts armFor). The API role runs it periodically (app.ts): definitions are the API's to
 * write (ops/mtls/db-grants.ts). The test is always valid, so checking it every round is as sound as
 * checking it once.
 */
export async function settleWinners(deps: { store: Store; clock: Clock }): Promise<Array<{ stepId: string; variantId: string }>> {
  const declared: Array<{ stepId: string; variantId: string }> = [];
  const now = deps.clock.now();
  for (const { workspaceId, sequenceId } of await sequencesAwaitingWinner(deps.store.db)) {
    for (const x of await sequenceExperiments(deps.store.db, workspaceId, sequenceId, now)) {
      if (!x.settings.autoWinner || x.declared || x.winner === null) continue;
      const arm = x.arms.find((a) => a.variantId === x.winner)!;
      // The control wins on its challengers' comparisons: the largest p-value among them is its evidence.
      const pValue = arm.comparison ? arm.comparison.pValue : Math.max(...x.arms.filter((a) => a.comparison).map((a) => a.comparison!.pValue));
      if (await declareWinner(deps.store.db, { sequenceId, stepId: x.stepId, variantId: arm.variantId, at: new Date(now), pValue, reason: x.reason })) {
        declared.push({ stepId: x.stepId, variantId: arm.variantId });
      }
    }
  }
  return declared;
}
