import { useEffect, useId, useState, type RefObject } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import type { InboxFilters as Filters, InboxView, Mailbox, Member, SequenceSummary, TeamLabel } from '../types.ts';
import { ErrorNote } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { useLoad } from '../ui/use-load.ts';

/** The classifier's labels and intents people filter by (src/ingest/classify; the list's badges). */
const LABELS = ['human_reply', 'auto_reply', 'bounce', 'unsubscribe_request', 'feedback', 'auto_generated'] as const;
const INTENTS = ['interested', 'meeting', 'not_interested', 'not_now', 'referral', 'question'] as const;

const words = (s: string) => s.replace(/_/g, ' ');

/** The filter set as GET …/inbox's query string (the fields that are set). */
export function filterQuery(f: Filters): string {
  return Object.entries(f)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
}

export interface InboxLookups {
  members: Member[];
  mailboxes: Mailbox[];
  sequences: SequenceSummary[];
  labels: TeamLabel[];
}

/**
 * The list's search box, its filters (label or intent, team label, sequence, mailbox, rep,
 * assignee, unread, needs review) and the caller's saved views: choose one, save the current
 * filters under a name, delete one. The search is sent when typing pauses.
 */
export function InboxFilters({
  workspaceId,
  filters,
  onChange,
  lookups,
  searchRef,
}: {
  workspaceId: string;
  filters: Filters;
  onChange: (f: Filters) => void;
  lookups: InboxLookups;
  searchRef: RefObject<HTMLInputElement | null>;
}) {
  const [text, setText] = useState(filters.q ?? '');
  const [error, setError] = useState<string>();
  const views = useLoad(() => api<{ views: InboxView[] }>('GET', ws(workspaceId, 'inbox/views')), [workspaceId]);
  const [viewId, setViewId] = useState('');
  const ids = { views: useId(), filters: useId() };
  // Typing pauses 300 ms: then the search goes to the server (bounded and indexed there).
  useEffect(() => {
    if ((filters.q ?? '') === text) return;
    const t = setTimeout(() => onChange({ ...filters, q: text || undefined }), 300);
    return () => clearTimeout(t);
  }, [text, filters, onChange]);
  useEffect(() => setText(filters.q ?? ''), [filters.q]);
  const set = (k: keyof Filters, v: string) => onChange({ ...filters, [k]: v === '' ? undefined : v });
  const select = (k: keyof Filters, label: string, options: Array<[string, string]>) => (
    <label className="unibox-filter">
      <span className="sr-only">{label}</span>
      <select value={(filters[k] as string | undefined) ?? ''} onChange={(e) => set(k, e.target.value)} aria-label={label}>
        <option value="">{label}: any</option>
        {options.map(([v, t]) => (
          <option key={v} value={v}>
            {t}
          </option>
        ))}
      </select>
    </label>
  );
  const [naming, setNaming] = useState<string | null>(null);
  const saveView = async () => {
    const name = naming?.trim();
    if (!name) return;
    setError(undefined);
    try {
      const v = await call('POST /api/workspaces/:workspaceId/inbox/views', ws(workspaceId, 'inbox/views'), { name, filters });
      views.reload();
      setViewId(v.id);
      setNaming(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const { ask, dialog } = useConfirm();
  const deleteView = async () => {
    const name = views.data?.views.find((v) => v.id === viewId)?.name;
    if (!viewId || !(await ask({ title: `Delete the view ${name ?? ''}?`, body: 'Its saved filters go; no message changes.', action: 'Delete view' }))) return;
    setError(undefined);
    try {
      await call('DELETE /api/workspaces/:workspaceId/inbox/views/:viewId', ws(workspaceId, `inbox/views/${viewId}`));
      setViewId('');
      views.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const chooseView = (id: string) => {
    setViewId(id);
    const v = views.data?.views.find((x) => x.id === id);
    onChange(v ? { status: filters.status, ...v.filters } : { status: filters.status });
  };
  const who = (m: Member) => m.name ?? m.email;
  return (
    <div className="unibox-tools">
      {dialog}
      <form role="search" className="unibox-search" onSubmit={(e) => (e.preventDefault(), onChange({ ...filters, q: text || undefined }))}>
        <input
          ref={searchRef}
          type="search"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => e.key === 'Escape' && (e.currentTarget.blur(), e.preventDefault())}
          aria-label="Search the inbox"
          aria-keyshortcuts="/"
          placeholder="Search sender, subject, text…  ( / )"
          maxLength={200}
        />
      </form>
      <div className="unibox-filters" role="group" aria-labelledby={ids.filters}>
        <span id={ids.filters} className="sr-only">
          Filters
        </span>
        {select('label', 'Label', LABELS.map((l) => [l, words(l)]))}
        {select('intent', 'Intent', INTENTS.map((l) => [l, words(l)]))}
        {lookups.labels.length > 0 && select('teamLabelId', 'Team label', lookups.labels.map((l) => [l.id, l.name]))}
        {select('sequenceId', 'Sequence', lookups.sequences.map((s) => [s.id, s.name]))}
        {select('mailboxId', 'Mailbox', lookups.mailboxes.map((m) => [m.id, m.email]))}
        {select('repId', 'Rep', lookups.members.map((m) => [m.id, who(m)]))}
        {select('assigneeId', 'Assigned to', lookups.members.map((m) => [m.id, who(m)]))}
        <label className="check small">
          <input type="checkbox" checked={filters.unread === 'true'} onChange={(e) => set('unread', e.target.checked ? 'true' : '')} /> Unread
        </label>
      </div>
      <div className="row small">
        <label htmlFor={ids.views}>View</label>
        <select id={ids.views} value={viewId} onChange={(e) => chooseView(e.target.value)}>
          <option value="">(no saved view)</option>
          {views.data?.views.map((v) => (
            <option key={v.id} value={v.id}>
              {v.name}
            </option>
          ))}
        </select>
        {naming === null ? (
          <button type="button" className="btn btn-quiet" onClick={() => setNaming('')}>
            Save view
          </button>
        ) : (
          <form className="row" onSubmit={(e) => (e.preventDefault(), void saveView())}>
            <input autoFocus value={naming} onChange={(e) => setNaming(e.target.value)} aria-label="Name of the new view" maxLength={60} onKeyDown={(e) => e.key === 'Escape' && (e.preventDefault(), setNaming(null))} />
            <button type="submit" className="btn" disabled={!naming.trim()}>
              Save
            </button>
          </form>
        )}
        {viewId && (
          <button type="button" className="btn btn-quiet" onClick={() => void deleteView()}>
            Delete view
          </button>
        )}
      </div>
      <ErrorNote error={error ?? views.error} />
    </div>
  );
}
