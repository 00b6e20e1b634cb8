import { call, ws } from '../api.ts';
import type { Experiment } from '../api-types.gen.ts';
import { Badge, ErrorNote } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

/**
 * A sequence's A/B experiments on its screen: each arm's closed sends, outcome and rate with its
 * interval, the always-valid comparison with the control, and the verdict in words (the statistics
 * are the server's, docs/experiments.md; this only shows them).
 */
export function ExperimentsPanel({ workspaceId, sequenceId }: { workspaceId: string; sequenceId: string }) {
  const got = useLoad(() => call('GET /api/workspaces/:workspaceId/sequences/:sequenceId/experiments', ws(workspaceId, `sequences/${sequenceId}/experiments`)), [workspaceId, sequenceId]);
  const experiments = got.data?.experiments ?? [];
  if (!got.error && experiments.length === 0) return null;
  return (
    <section className="card stack" aria-label="Experiments">
      <h2>Experiments</h2>
      <ErrorNote error={got.error} />
      {experiments.map((x) => (
        <ExperimentTable key={x.stepId} x={x} />
      ))}
    </section>
  );
}

const pct = (v: number | null) => (v === null ? '–' : `${(v * 100).toFixed(1)}%`);

function ExperimentTable({ x }: { x: Experiment }) {
  const outcome = x.settings.outcome;
  const outcomeWord = { replied: 'replies', positive: 'positive replies', meetings: 'meetings' }[outcome];
  return (
    <div className="stack" aria-label={`Experiment on step ${x.stepKey}`}>
      <h3>
        Step {x.stepKey} <Verdict x={x} />
      </h3>
      <p className="muted small">
        Judged on {outcomeWord} within {x.settings.replyWindowDays} days of each send; a send counts once its window has closed. At least {x.settings.minSamplePerArm} closed sends per arm
        before any winner ({x.minSampleReached ? 'reached' : 'not reached yet'}); the p-value stays valid however often you look (mSPRT, α {x.settings.alpha}).
      </p>
      <table className="table table-compact">
        <thead>
          <tr>
            <th scope="col">Variant</th>
            <th scope="col">Sent (closed)</th>
            <th scope="col">{outcomeWord[0]!.toUpperCase() + outcomeWord.slice(1)}</th>
            <th scope="col">Rate ({Math.round((1 - x.settings.alpha) * 100)}% interval)</th>
            <th scope="col">Against {x.arms[0]?.variantKey}</th>
          </tr>
        </thead>
        <tbody>
          {x.arms.map((a) => {
            const r = a.rates[outcome];
            return (
              <tr key={a.variantId}>
                <td>
                  {a.variantKey}
                  {a.archived && <span className="muted small"> (removed)</span>} <span className="muted small">weight {a.weight}</span>
                </td>
                <td>
                  {a.exposures} ({a.closed})
                </td>
                <td>{a.outcomes[outcome]}</td>
                <td>
                  {pct(r.rate)} <span className="muted small">{`${pct(r.low)} – ${pct(r.high)}`}</span>
                </td>
                <td>
                  {a.comparison ? (
                    <>
                      {a.comparison.difference >= 0 ? '+' : ''}
                      {(a.comparison.difference * 100).toFixed(1)} pts <span className="muted small">p {a.comparison.pValue < 0.001 ? '< 0.001' : a.comparison.pValue.toFixed(3)}</span>
                    </>
                  ) : (
                    <span className="muted">control</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {x.srm.mismatch && (
        <p className="note note-warn" role="alert">
          Sample ratio mismatch: the sends do not fit the weights (p {x.srm.pValue.toExponential(1)}). Check that every variant sends before trusting any rate.
        </p>
      )}
      {x.declared && (
        <p className="note note-ok" role="status">
          Winner declared {new Date(x.declared.at).toLocaleDateString()}: every new enrollment gets {x.arms.find((a) => a.variantId === x.declared!.variantId)?.variantKey}; those enrolled before keep their variant ({x.arms.reduce((n, a) => n + a.afterWinner, 0)} sent since, not counted above).
        </p>
      )}
    </div>
  );
}

function Verdict({ x }: { x: Experiment }) {
  const winner = x.arms.find((a) => a.variantId === x.winner);
  if (winner) return <Badge tone="ok">{winner.variantKey} wins</Badge>;
  if (x.srm.mismatch) return <Badge tone="bad">check sending</Badge>;
  return <Badge tone="muted">{x.minSampleReached ? 'no winner yet' : 'collecting'}</Badge>;
}
