import { useEffect, useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import { navigate } from '../router.ts';
import type { Blocked, BulkMoveResult, Enrollment as EnrollmentRow, SequenceDetail, SequenceSummary } from '../types.ts';
import { Badge, Empty, ErrorNote, Field, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

/** Why an enrollment is stuck and what to do, the technical detail behind a disclosure. */
export function BlockedNote({ b }: { b: Blocked }) {
  return (
    <div className="small" data-testid="blocked">
      <div className="text-bad">{b.reason}</div>
      <div>What to do: {b.action}</div>
      {b.detail && (
        <details className="muted">
          <summary>Details</summary>
          <code>{b.detail}</code>
        </details>
      )}
    </div>
  );
}

export const stateTone = (s: string) => (s === 'active' ? 'info' : s === 'replied' ? 'ok' : s === 'moved' || s === 'paused' ? 'warn' : 'muted');

/**
 * Where to move to: another sequence of the workspace (only active ones take leads, as enroll) and,
 * optionally, the step to start at. Nothing happens until the person confirms.
 */
function MovePicker({ workspaceId, fromSequenceId, count, onConfirm, onCancel }: { workspaceId: string; fromSequenceId: string; count: number; onConfirm: (sequenceId: string, startAtStep: string | undefined) => Promise<void>; onCancel: () => void }) {
  const seqs = useLoad(() => api<{ sequences: SequenceSummary[] }>('GET', ws(workspaceId, 'sequences')), [workspaceId]);
  const targets = (seqs.data?.sequences ?? []).filter((s) => s.id !== fromSequenceId && s.status !== 'archived');
  const [target, setTarget] = useState('');
  const [steps, setSteps] = useState<string[]>([]);
  const [start, setStart] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  useEffect(() => {
    setSteps([]);
    setStart('');
    if (!target) return;
    api<SequenceDetail>('GET', ws(workspaceId, `sequences/${target}`))
      .then((d) => setSteps(d.steps.map((s) => s.key)))
      .catch((e: unknown) => setError(errorMessage(e)));
  }, [workspaceId, target]);
  const chosen = targets.find((s) => s.id === target);
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm(target, start || undefined);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="stack move-picker">
      <div className="row">
        <Field label="Move to sequence">
          <select value={target} onChange={(e) => setTarget(e.target.value)}>
            <option value="">Choose a sequence…</option>
            {targets.map((s) => (
              <option key={s.id} value={s.id} disabled={s.status !== 'active'}>
                {s.name}
                {s.status !== 'active' ? ` (${s.status})` : ''}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Start at step" hint="The steps before it are skipped.">
          <select value={start} onChange={(e) => setStart(e.target.value)} disabled={steps.length === 0}>
            <option value="">First step</option>
            {steps.slice(1).map((k, i) => (
              <option key={k} value={k}>
                Step {i + 2} ({k})
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNote error={error ?? seqs.error} />
      {chosen && (
        <p className="muted small">
          {count === 1 ? 'The enrollment stops here' : `${count} enrollments stop here`} (pending sends and tasks are cancelled) and {count === 1 ? 'the lead starts' : 'their leads start'} “{chosen.name}”.
        </p>
      )}
      <div className="row">
        <button type="button" className="btn btn-primary" disabled={!chosen || busy} onClick={confirm}>
          {busy ? 'Moving…' : count === 1 ? 'Confirm move' : `Confirm move of ${count}`}
        </button>
        <button type="button" className="btn btn-quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** The lead page's control: one live enrollment to another sequence. */
export function MoveEnrollment({ workspaceId, enrollmentId, sequenceId, onMoved }: { workspaceId: string; enrollmentId: string; sequenceId: string; onMoved: () => void }) {
  const [open, setOpen] = useState(false);
  if (!open) {
    return (
      <button type="button" className="btn btn-quiet" onClick={() => setOpen(true)}>
        Move to sequence…
      </button>
    );
  }
  return (
    <MovePicker
      workspaceId={workspaceId}
      fromSequenceId={sequenceId}
      count={1}
      onCancel={() => setOpen(false)}
      onConfirm={async (target, startAtStep) => {
        await call('POST /api/workspaces/:workspaceId/enrollments/:enrollmentId/move', ws(workspaceId, `enrollments/${enrollmentId}/move`), { sequenceId: target, ...(startAtStep ? { startAtStep } : {}) });
        setOpen(false);
        onMoved();
      }}
    />
  );
}

/** A sequence's enrollments, newest first, by state; selected rows can be moved to another sequence at once. */
export function SequenceEnrollments({ workspaceId, sequenceId, refresh = 0 }: { workspaceId: string; sequenceId: string; refresh?: number }) {
  const [state, setState] = useState('active');
  const [pages, setPages] = useState<{ items: EnrollmentRow[]; next: string | null }>({ items: [], next: null });
  const [cursor, setCursor] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [moving, setMoving] = useState(false);
  const [result, setResult] = useState<BulkMoveResult>();
  const page = useLoad(
    () => api<{ items: EnrollmentRow[]; nextCursor: string | null }>('GET', ws(workspaceId, `enrollments?sequenceId=${sequenceId}&limit=50${state ? `&state=${state}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)),
    [workspaceId, sequenceId, state, cursor, refresh],
  );
  // Enrolled from elsewhere on the page ("Enroll all leads"): the list starts again from its first page.
  useEffect(() => {
    if (refresh) setCursor(null);
  }, [refresh]);
  useEffect(() => {
    if (!page.data) return;
    const d = page.data;
    setPages((p) => ({ items: cursor ? [...p.items, ...d.items.filter((x) => !p.items.some((y) => y.id === x.id))] : d.items, next: d.nextCursor }));
  }, [page.data, cursor]);
  const restart = (s = state) => {
    setSelected(new Set());
    setCursor(null);
    setState(s);
    page.reload();
  };
  const movable = pages.items.filter((e) => e.state === 'active' || e.state === 'paused');
  const allChosen = movable.length > 0 && movable.every((e) => selected.has(e.id));
  const toggle = (id: string) => setSelected((s) => (s.has(id) ? new Set([...s].filter((x) => x !== id)) : new Set([...s, id])));
  return (
    <section className="card stack" aria-label="Enrollments">
      <div className="step-head">
        <h2>Enrollments</h2>
        <Field label="State">
          <select value={state} onChange={(e) => restart(e.target.value)}>
            <option value="">All</option>
            {['active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'moved', 'failed'].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNote error={page.error} />
      {!page.loading && pages.items.length === 0 && <Empty>No enrollment {state ? `in state ${state}` : 'yet'}.</Empty>}
      {pages.items.length > 0 && (
        <table className="table table-compact">
          <thead>
            <tr>
              <th scope="col">
                <input type="checkbox" aria-label="Select every movable enrollment shown" checked={allChosen} disabled={movable.length === 0} onChange={() => setSelected(allChosen ? new Set() : new Set(movable.map((e) => e.id)))} />
              </th>
              <th scope="col">Lead</th>
              <th scope="col">State</th>
              <th scope="col">Next step</th>
              <th scope="col">Due</th>
            </tr>
          </thead>
          <tbody>
            {pages.items.map((e) => {
              const live = e.state === 'active' || e.state === 'paused';
              return (
                <tr key={e.id}>
                  <td>
                    <input type="checkbox" aria-label={`Select ${e.leadEmail}`} checked={selected.has(e.id)} disabled={!live} onChange={() => toggle(e.id)} />
                  </td>
                  <td>
                    <a href={`/leads/${e.leadId}`} onClick={(ev) => (ev.preventDefault(), navigate(`/leads/${e.leadId}`))}>
                      {e.leadEmail}
                    </a>
                  </td>
                  <td>
                    <Badge tone={stateTone(e.state)}>{e.state}</Badge>
                    {e.stateReason && <span className="muted small"> {e.stateReason}</span>}
                  </td>
                  <td>{e.nextStepKey ?? '—'}</td>
                  <td className="small">{e.blocked ? <BlockedNote b={e.blocked} /> : e.dueAt ? when(e.dueAt) : e.waitingFor === 'send' ? 'Sending now' : e.waitingFor === 'task' ? 'Waiting for its task' : '—'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {pages.next && (
        <div>
          <button type="button" className="btn btn-quiet" onClick={() => setCursor(pages.next)}>
            Show more
          </button>
        </div>
      )}
      {selected.size > 0 && !moving && (
        <div className="row">
          <span>{selected.size} selected</span>
          <button type="button" className="btn" onClick={() => (setMoving(true), setResult(undefined))}>
            Move selected to sequence…
          </button>
        </div>
      )}
      {moving && (
        <MovePicker
          workspaceId={workspaceId}
          fromSequenceId={sequenceId}
          count={selected.size}
          onCancel={() => setMoving(false)}
          onConfirm={async (target, startAtStep) => {
            setResult(await call('POST /api/workspaces/:workspaceId/enrollments/move', ws(workspaceId, 'enrollments/move'), { enrollmentIds: [...selected].slice(0, 1000), sequenceId: target, ...(startAtStep ? { startAtStep } : {}) }));
            setMoving(false);
            restart();
          }}
        />
      )}
      {result && (
        <div role="status">
          <p className="note note-ok">
            {result.moved} moved{result.skipped ? `, ${result.skipped} skipped` : ''}.
          </p>
          {result.skipped > 0 && (
            <ul className="small">
              {result.results
                .filter((r) => r.outcome === 'skipped')
                .slice(0, 50)
                .map((r) => (
                  <li key={r.enrollmentId}>
                    {pages.items.find((e) => e.id === r.enrollmentId)?.leadEmail ?? r.enrollmentId}: {(r.reason ?? '').replace(/_/g, ' ')}
                    {r.detail ? ` (${r.detail})` : ''}
                  </li>
                ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
