import type { ReactNode } from 'react';
import { call, ws } from '../api.ts';
import type { Experiment, SequenceExperiment } from '../api-types.gen.ts';
import { Badge, ErrorNote } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

/**
 * A sequence's experiments on its screen: a step's A/B variants, and the experiments declared on the
 * sequence (arms over several steps or over timing: delay, send hours, order), each arm with what it
 * fixes, its closed exposures, outcome and rate with its interval, the always-valid comparison with
 * the control, and the verdict in words (the statistics are the server's, docs/experiments.md; this
 * only shows them).
 */
export function ExperimentsPanel({ workspaceId, sequenceId }: { workspaceId: string; sequenceId: string }) {
  const got = useLoad(() => call('GET /api/workspaces/:workspaceId/sequences/:sequenceId/experiments', ws(workspaceId, `sequences/${sequenceId}/experiments`)), [workspaceId, sequenceId]);
  const experiments = got.data?.experiments ?? [];
  const sequenceLevel = got.data?.sequenceExperiments ?? [];
  if (!got.error && experiments.length === 0 && sequenceLevel.length === 0) return null;
  return (
    <section className="card stack" aria-label="Experiments">
      <h2>Experiments</h2>
      <ErrorNote error={got.error} />
      {sequenceLevel.map((x) => (
        <SequenceExperimentTable key={x.key} x={x} />
      ))}
      {experiments.map((x) => (
        <ExperimentTable key={x.stepId} x={x} />
      ))}
    </section>
  );
}

const pct = (v: number | null) => (v === null ? '–' : `${(v * 100).toFixed(1)}%`);

/** What both kinds of experiment share: the settings, the verdict's fields, and per arm its figures. */
type Figures = Pick<Experiment, 'settings' | 'minSampleReached' | 'srm'>;
type ArmFigures = Pick<Experiment['arms'][number], 'weight' | 'exposures' | 'closed' | 'outcomes' | 'rates' | 'comparison'>;
interface ArmRow {
  id: string;
  /** The arm's name cell: its key and what it is. */
  label: ReactNode;
  figures: ArmFigures;
}

const outcomeWords = { replied: 'replies', positive: 'positive replies', meetings: 'meetings' } as const;

function ExperimentTable({ x }: { x: Experiment }) {
  const rows = x.arms.map((a) => ({
    id: a.variantId,
    label: (
      <>
        {a.variantKey}
        {a.archived && <span className="muted small"> (removed)</span>} <span className="muted small">weight {a.weight}</span>
      </>
    ),
    figures: a,
  }));
  const winner = x.arms.find((a) => a.variantId === x.winner)?.variantKey;
  return (
    <div className="stack" aria-label={`Experiment on step ${x.stepKey}`}>
      <h3>
        Step {x.stepKey} <Verdict x={x} winner={winner} />
      </h3>
      <Settings x={x} exposure="each send" unit="sends" />
      <ArmsTable x={x} rows={rows} head="Variant" control={x.arms[0]?.variantKey} />
      <SrmNote x={x} />
      {x.declared && (
        <p className="note note-ok" role="status">
          Winner declared {new Date(x.declared.at).toLocaleDateString()}: every new enrollment gets {x.arms.find((a) => a.variantId === x.declared!.variantId)?.variantKey}; those enrolled before keep their variant ({x.arms.reduce((n, a) => n + a.afterWinner, 0)} sent since, not counted above).
        </p>
      )}
    </div>
  );
}

/** One arm's choices in words: "intro: variant b · last: 2 business days, 08:00-10:00 · order follow → ring". */
function choicesOf(a: SequenceExperiment['arms'][number]): string {
  const parts = a.choices.map((c) => `${c.step}: ${[c.variant !== undefined ? `variant ${c.variant}` : '', c.delay ? `after ${c.delay}` : '', c.sendHours ? `sent ${c.sendHours}` : ''].filter(Boolean).join(', ')}`);
  if (a.order) parts.push(`order ${a.order.join(' → ')}`);
  return parts.length ? parts.join(' · ') : 'the sequence as written';
}

function SequenceExperimentTable({ x }: { x: SequenceExperiment }) {
  const rows = x.arms.map((a) => ({
    id: a.key,
    label: (
      <>
        {a.key} <span className="muted small">weight {a.weight}</span>
        <div className="muted small">{choicesOf(a)}</div>
      </>
    ),
    figures: a,
  }));
  return (
    <div className="stack" aria-label={`Experiment ${x.key}`}>
      <h3>
        {x.kind === 'timing' ? 'Timing' : 'Content'} experiment {x.key} <span className="muted small">on {x.steps.join(', ')}</span> <Verdict x={x} winner={x.winner ?? undefined} />
      </h3>
      <Settings x={x} exposure={x.kind === 'timing' ? 'the moment the arms part (the timed step planned)' : 'the first send of a step it fixes'} unit="exposures" />
      <ArmsTable x={x} rows={rows} head="Arm" control={x.arms[0]?.key} />
      <SrmNote x={x} />
      {x.declared ? (
        <p className="note note-ok" role="status">
          Winner declared {new Date(x.declared.at).toLocaleDateString()}: every new enrollment runs arm {x.declared.arm}; those enrolled before keep their arm ({x.arms.reduce((n, a) => n + a.afterWinner, 0)} enrolled since, not counted above).
        </p>
      ) : (
        x.winner &&
        !x.settings.autoWinner && <p className="muted small">To apply the winner, give the other arms weight 0 in the definition, or set auto_winner on the experiment.</p>
      )}
    </div>
  );
}

function Settings({ x, exposure, unit }: { x: Figures; exposure: string; unit: string }) {
  return (
    <p className="muted small">
      Judged on {outcomeWords[x.settings.outcome]} within {x.settings.replyWindowDays} days of {exposure}; a {unit.replace(/s$/, '')} counts once its window has closed. At least {x.settings.minSamplePerArm} closed {unit} per arm
      before any winner ({x.minSampleReached ? 'reached' : 'not reached yet'}); the p-value stays valid however often you look (mSPRT, α {x.settings.alpha}).
    </p>
  );
}

function ArmsTable({ x, rows, head, control }: { x: Figures; rows: ArmRow[]; head: string; control: string | undefined }) {
  const outcome = x.settings.outcome;
  const word = outcomeWords[outcome];
  return (
    <table className="table table-compact">
      <thead>
        <tr>
          <th scope="col">{head}</th>
          <th scope="col">Exposed (closed)</th>
          <th scope="col">{word[0]!.toUpperCase() + word.slice(1)}</th>
          <th scope="col">Rate ({Math.round((1 - x.settings.alpha) * 100)}% interval)</th>
          <th scope="col">Against {control}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(({ id, label, figures: a }) => {
          const r = a.rates[outcome];
          return (
            <tr key={id}>
              <td>{label}</td>
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
  );
}

function SrmNote({ x }: { x: Figures }) {
  if (!x.srm.mismatch) return null;
  return (
    <p className="note note-warn" role="alert">
      Sample ratio mismatch: the exposures do not fit the weights (p {x.srm.pValue.toExponential(1)}). Check that every arm sends before trusting any rate.
    </p>
  );
}

function Verdict({ x, winner }: { x: Figures; winner: string | undefined }) {
  if (winner) return <Badge tone="ok">{winner} wins</Badge>;
  if (x.srm.mismatch) return <Badge tone="bad">check sending</Badge>;
  return <Badge tone="muted">{x.minSampleReached ? 'no winner yet' : 'collecting'}</Badge>;
}
