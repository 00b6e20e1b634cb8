import { cloneElement, useId, type ReactElement, type ReactNode } from 'react';

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      <div className="page-actions">{children}</div>
    </header>
  );
}

export function ErrorNote({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p className="note note-error" role="alert">
      {error}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** A form's main button: while busy it says what is under way and cannot be pressed again. */
export function SubmitButton({ busy, busyText, disabled, children }: { busy: boolean; busyText: string; disabled?: boolean; children: ReactNode }) {
  return (
    <button type="submit" className="btn btn-primary" disabled={busy || disabled}>
      {busy ? busyText : children}
    </button>
  );
}

/** A table's column headings and a last column for each row's buttons, named for screen readers only. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
        <th scope="col">
          <span className="sr-only">Actions</span>
        </th>
      </tr>
    </thead>
  );
}

/**
 * A labelled control with an optional hint. The hint is the control's description, not part of its
 * name: a screen reader says "Display name, edit text" and then the hint.
 */
export function Field({ label, hint, error, children }: { label: string; hint?: string | undefined; error?: string | undefined; children: ReactElement<{ id?: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }> }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  // The server's word on this field (e.g. a validation problem), read with the field by a screen reader.
  const describedBy = [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      {cloneElement(children, { id, ...(describedBy ? { 'aria-describedby': describedBy } : {}), ...(error ? { 'aria-invalid': true } : {}) })}
      {hint && (
        <span className="field-hint" id={hintId}>
          {hint}
        </span>
      )}
      {error && (
        <span className="field-error text-bad" id={errorId}>
          {error}
        </span>
      )}
    </div>
  );
}

/** A bar from 0 to max; the label says the numbers, so the bar is never the only carrier. */
export function Meter({ value, max, label }: { value: number; max: number; label: string }) {
  const pct = max > 0 ? Math.min(100, Math.round((value / max) * 100)) : 0;
  return (
    <div className="meter" role="meter" aria-valuemin={0} aria-valuemax={max} aria-valuenow={value} aria-label={label}>
      <div className="meter-fill" style={{ width: `${pct}%` }} />
      <span className="meter-text">
        {value} / {max}
      </span>
    </div>
  );
}

export function Badge({ tone, children }: { tone: 'ok' | 'warn' | 'bad' | 'info' | 'muted'; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * A duration in the unit a person reads it in: "320 ms", "1.2 s", "19 min", "2.5 h", "3 days"
 * (never "1162.8 s").
 */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${(ms / 3_600_000).toFixed(1).replace(/\.0$/, '')} h`;
  const days = ms / 86_400_000;
  return `${days.toFixed(1).replace(/\.0$/, '')} days`;
}

/**
 * The end of a settings form: its error, what was saved, and the save button for an owner or an
 * admin; a member, who reads the form disabled, is told who changes it instead.
 */
export function SettingsFormEnd({ error, saved, canEdit, children }: { error: string | undefined; saved: string | undefined; canEdit: boolean; children: ReactNode }) {
  return (
    <>
      <ErrorNote error={error} />
      {saved && (
        <p className="note note-ok" role="status">
          {saved}
        </p>
      )}
      {canEdit ? <div>{children}</div> : <p className="muted small">Only an owner or an admin changes these.</p>}
    </>
  );
}
