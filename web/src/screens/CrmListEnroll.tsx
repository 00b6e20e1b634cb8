import { useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import type { ApiResponse } from '../types.ts';
import { Badge, ErrorNote, Field, SubmitButton, when } from '../ui/parts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';

type ListEnrollment = ApiResponse<'GET /api/workspaces/:workspaceId/crm/connections/:connectionId/list-enrollments'>['listEnrollments'][number];
type Mode = 'once' | 'continuous';

/**
 * Enroll from a CRM list (docs/crm.md "Enroll from a list"), on a connection's card: the list
 * enrollments made so far with what came of them, and a form that reads the CRM's lists (only when
 * asked: it is a call to the CRM) and enrolls one in a sequence once or continuously.
 */
export function CrmListEnroll({ workspaceId, connectionId, crm }: { workspaceId: string; connectionId: string; crm: string }) {
  const path = `crm/connections/${connectionId}/list-enrollments`;
  const made = useLoad(() => call('GET /api/workspaces/:workspaceId/crm/connections/:connectionId/list-enrollments', ws(workspaceId, path)), [workspaceId, connectionId]);
  // The sync round enrolls the members: what came of it shows on the screen's own refresh.
  usePoll(made.reload, 10_000);
  const [open, setOpen] = useState(false);
  const headingId = `crm-lists-${connectionId}`;
  const rows = made.data?.listEnrollments ?? [];
  return (
    <div className="crm-lists stack" role="group" aria-labelledby={headingId}>
      <h4 id={headingId}>Enroll from a {crm} list</h4>
      <ErrorNote error={made.error} />
      {rows.length > 0 && (
        <ul className="plain small" aria-label={`Lists enrolled from ${crm}`}>
          {rows.map((r) => (
            <li key={r.id}>
              <ListEnrollmentLine r={r} />
            </li>
          ))}
        </ul>
      )}
      {open ? (
        <EnrollForm workspaceId={workspaceId} connectionId={connectionId} crm={crm} onClose={() => setOpen(false)} onEnrolled={made.reload} />
      ) : (
        <div className="row">
          <button type="button" className="btn btn-quiet" onClick={() => setOpen(true)}>
            Enroll a list…
          </button>
        </div>
      )}
    </div>
  );
}

function ListEnrollmentLine({ r }: { r: ListEnrollment }) {
  const tone = r.state === 'active' ? 'ok' : r.state === 'done' ? 'muted' : 'warn';
  return (
    <span>
      <span className="strong">{r.listName}</span> · {r.mode === 'continuous' ? 'new members enrolled as they join' : 'once'} · <Badge tone={tone}>{r.state}</Badge> · {r.enrolled.toLocaleString()} enrolled
      {r.refused > 0 && <>, {r.refused.toLocaleString()} not enrolled (already enrolled, suppressed or no address)</>}
      {r.lastRunAt && <span className="muted"> · last read {when(r.lastRunAt)}</span>}
      {r.lastError && <span className="text-bad"> · {r.lastError}</span>}
    </span>
  );
}

function EnrollForm({ workspaceId, connectionId, crm, onClose, onEnrolled }: { workspaceId: string; connectionId: string; crm: string; onClose: () => void; onEnrolled: () => void }) {
  const lists = useLoad(() => call('GET /api/workspaces/:workspaceId/crm/connections/:connectionId/lists', ws(workspaceId, `crm/connections/${connectionId}/lists`)), [workspaceId, connectionId]);
  const sequences = useLoad(() => call('GET /api/workspaces/:workspaceId/sequences', ws(workspaceId, 'sequences')), [workspaceId]);
  const [listId, setListId] = useState('');
  const [sequenceId, setSequenceId] = useState('');
  const [mode, setMode] = useState<Mode>('once');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const listOptions = lists.data?.lists ?? [];
  const sequenceOptions = (sequences.data?.sequences ?? []).filter((s) => s.status !== 'archived');
  const submit = async () => {
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      const r = await call('POST /api/workspaces/:workspaceId/crm/connections/:connectionId/list-enrollments', ws(workspaceId, `crm/connections/${connectionId}/list-enrollments`), { listId, sequenceId, mode });
      setDone(`${r.listName}: ${mode === 'continuous' ? 'its members are enrolled now and as they join' : 'its members are enrolled now'}.`);
      onEnrolled();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <ErrorNote error={lists.error ? `${crm} did not list its lists: ${lists.error}` : sequences.error} />
      {lists.loading && <p className="muted small">Reading {crm}'s lists…</p>}
      {lists.data && listOptions.length === 0 && <p className="muted small">{crm} has no lists this connection can read.</p>}
      <Field label={`${crm} list`}>
        <select value={listId} onChange={(e) => setListId(e.target.value)} required>
          <option value="">Choose a list</option>
          {listOptions.map((l) => (
            <option key={l.id} value={l.id}>
              {l.name}
              {typeof l.size === 'number' ? ` (${l.size.toLocaleString()})` : ''}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Sequence">
        <select value={sequenceId} onChange={(e) => setSequenceId(e.target.value)} required>
          <option value="">Choose a sequence</option>
          {sequenceOptions.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </Field>
      <fieldset className="row small">
        <legend>When</legend>
        <label className="check">
          <input type="radio" name={`mode-${connectionId}`} checked={mode === 'once'} onChange={() => setMode('once')} /> Once: the members it has now
        </label>
        <label className="check">
          <input type="radio" name={`mode-${connectionId}`} checked={mode === 'continuous'} onChange={() => setMode('continuous')} /> Continuously: new members as they join
        </label>
      </fieldset>
      {done && (
        <p className="note note-ok" role="status">
          {done}
        </p>
      )}
      <ErrorNote error={error} />
      <div className="row">
        <SubmitButton busy={busy} busyText="Enrolling…" disabled={!listId || !sequenceId}>
          Enroll the list
        </SubmitButton>
        <button type="button" className="btn" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
