import { useEffect, useState } from 'react';
import { api, call, errorMessage, ws, type Me } from '../api.ts';
import { navigate } from '../router.ts';
import type { ScreenProps } from '../Shell.tsx';
import { importToShow, LeadImport, type LeadImportJob } from './LeadImport.tsx';
import { LeadPage } from './LeadPage.tsx';
import type { Lead, LeadsPage, SequenceSummary } from '../types.ts';
import { BulkActions, deleteList, filterWords, NewList, segmentOf, type FilterMenus } from './LeadLists.tsx';

type LeadRow = LeadsPage['leads'][number];
import { Empty, ErrorNote, PageHeader } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { useLoad } from '../ui/use-load.ts';

export function Leads({ workspaceId, sub }: ScreenProps) {
  if (sub) return <LeadPage workspaceId={workspaceId} leadId={sub} />;
  return <LeadList workspaceId={workspaceId} />;
}

/** The yes-or-no filters: the menu's key, its name, and its two answers. */
const YES_NO = [
  ['enrolled', 'Enrolled', 'Enrolled', 'Not enrolled'],
  ['replied', 'Replied', 'Replied', 'Not replied'],
] as const;

const NO_FILTERS: FilterMenus = { country: '', tag: '', sequenceId: '', state: '', enrolled: '', replied: '', verdict: '' };

function LeadList({ workspaceId }: { workspaceId: string }) {
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  // Filters (GET …/leads country, sequenceId, state): the menus apply at once, the country with the search.
  const [country, setCountry] = useState('');
  const [filters, setFilters] = useState<FilterMenus>(NO_FILTERS);
  // A list or segment shown instead of every lead ('' for all); the filters narrow a static list.
  const [listId, setListId] = useState('');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [creating, setCreating] = useState(false);
  const [reviewError, setReviewError] = useState<string>();
  const { ask, dialog } = useConfirm();
  const sequences = useLoad(() => api<{ sequences: SequenceSummary[] }>('GET', ws(workspaceId, 'sequences')), [workspaceId]);
  const lists = useLoad(() => call('GET /api/workspaces/:workspaceId/lead-lists', ws(workspaceId, 'lead-lists')), [workspaceId]);
  const tags = useLoad(() => call('GET /api/workspaces/:workspaceId/lead-tags', ws(workspaceId, 'lead-tags')), [workspaceId]);
  const me = useLoad(() => api<Me>('GET', '/api/auth/me'), []);
  const role = me.data?.workspaces.find((w) => w.id === workspaceId)?.role;
  const allLists = lists.data?.lists ?? [];
  const shownList = allLists.find((l) => l.id === listId);
  const filterQs = Object.entries({ ...filters, listId })
    .filter(([, v]) => v)
    .map(([k, v]) => `&${k}=${encodeURIComponent(v)}`)
    .join('');
  const path = (cursor: string | null) => ws(workspaceId, `leads?search=${encodeURIComponent(query)}${filterQs}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  const list = useLoad(() => api<LeadsPage>('GET', path(null)), [workspaceId, query, filterQs]);
  // A new query starts a new selection: rows picked and no longer shown are not acted on unseen.
  useEffect(() => setSelected(new Set()), [workspaceId, query, filterQs]);
  /** After a bulk action: the leads, the lists' sizes and the tags read again. */
  const reloadAll = () => {
    list.reload();
    lists.reload();
    tags.reload();
  };
  // Pages after the first, fetched by cursor on demand; a new first page starts over.
  const [later, setLater] = useState<{ leads: LeadRow[]; nextCursor: string | null; error?: string; busy?: boolean }>();
  useEffect(() => setLater(undefined), [list.data]);
  const [importing, setImporting] = useState(() => importToShow(workspaceId));
  // An import still running (started before the user left this screen, here or elsewhere) opens the import panel.
  useEffect(() => {
    api<{ imports: LeadImportJob[] }>('GET', ws(workspaceId, 'leads/imports'))
      .then((r) => r.imports.some((j) => j.status === 'running') && setImporting(true))
      .catch(() => undefined);
  }, [workspaceId]);
  const leads = [...(list.data?.leads ?? []), ...(later?.leads ?? [])];
  const nextCursor = later ? later.nextCursor : (list.data?.nextCursor ?? null);
  /** A risky lead approved (it may be enrolled) or rejected (never enrolled): the list is read again. */
  const review = async (leadId: string, decision: 'approve' | 'reject') => {
    setReviewError(undefined);
    try {
      await api('POST', ws(workspaceId, 'leads/review'), { leadIds: [leadId], decision });
      list.reload();
    } catch (e) {
      setReviewError(errorMessage(e));
    }
  };
  const more = async () => {
    if (!nextCursor) return;
    setLater({ leads: later?.leads ?? [], nextCursor, busy: true });
    try {
      const p = await api<LeadsPage>('GET', path(nextCursor));
      setLater({ leads: [...(later?.leads ?? []), ...p.leads], nextCursor: p.nextCursor });
    } catch (e) {
      setLater({ leads: later?.leads ?? [], nextCursor, error: errorMessage(e) });
    }
  };
  return (
    <>
      <PageHeader title="Leads">
        <button type="button" className="btn" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          {creating ? 'Close' : 'New list or segment'}
        </button>
        <button type="button" className="btn btn-primary" onClick={() => setImporting(!importing)} aria-expanded={importing}>
          {importing ? 'Close import' : 'Import CSV'}
        </button>
      </PageHeader>
      {importing && <LeadImport workspaceId={workspaceId} onDone={list.reload} />}
      {creating && (
        <NewList
          workspaceId={workspaceId}
          filter={segmentOf(filters, query)}
          sequences={sequences.data?.sequences ?? []}
          lists={allLists}
          onCreated={(l) => {
            setCreating(false);
            lists.reload();
            // The list is shown by itself: a segment holds the filters now, a new static list starts empty.
            setFilters(NO_FILTERS);
            setCountry('');
            setSearch('');
            setQuery('');
            setListId(l.id);
          }}
        />
      )}
      <form
        className="toolbar"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(search);
          setFilters({ ...filters, country: country.trim() });
        }}
      >
        <label className="sr-only" htmlFor="lead-search">
          Search leads
        </label>
        <input id="lead-search" type="search" placeholder="Search by email, name or company" value={search} onChange={(e) => setSearch(e.target.value)} />
        <label className="sr-only" htmlFor="lead-country">
          Country (two letters)
        </label>
        <input id="lead-country" className="toolbar-country" placeholder="Country" maxLength={2} value={country} onChange={(e) => setCountry(e.target.value)} />
        <button type="submit" className="btn">
          Search
        </button>
        <label className="sr-only" htmlFor="lead-sequence">
          Sequence
        </label>
        <select id="lead-sequence" value={filters.sequenceId} onChange={(e) => setFilters({ ...filters, sequenceId: e.target.value })}>
          <option value="">Any sequence</option>
          {(sequences.data?.sequences ?? []).map((q) => (
            <option key={q.id} value={q.id}>
              {q.name}
            </option>
          ))}
        </select>
        <label className="sr-only" htmlFor="lead-state">
          Enrollment state
        </label>
        <select id="lead-state" value={filters.state} onChange={(e) => setFilters({ ...filters, state: e.target.value })}>
          <option value="">Any state</option>
          <option value="none">Not enrolled</option>
          {['active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'moved'].map((st) => (
            <option key={st} value={st}>
              {st[0]!.toUpperCase() + st.slice(1)}
            </option>
          ))}
        </select>
        <label className="sr-only" htmlFor="lead-verdict">
          Address check
        </label>
        <select id="lead-verdict" value={filters.verdict} onChange={(e) => setFilters({ ...filters, verdict: e.target.value })}>
          <option value="">Any address check</option>
          <option value="review">To review</option>
          <option value="valid">Valid</option>
          <option value="risky">Risky</option>
          <option value="invalid">Invalid</option>
          <option value="unchecked">Not checked</option>
        </select>
        {YES_NO.map(([key, label, yes, no]) => (
          <select key={key} aria-label={label} value={filters[key]} onChange={(e) => setFilters({ ...filters, [key]: e.target.value })}>
            <option value="">{`${yes} or not`}</option>
            <option value="true">{yes}</option>
            <option value="false">{no}</option>
          </select>
        ))}
        <label className="sr-only" htmlFor="lead-tag">
          Tag
        </label>
        <select id="lead-tag" value={filters.tag} onChange={(e) => setFilters({ ...filters, tag: e.target.value })}>
          <option value="">Any tag</option>
          {(tags.data?.tags ?? []).map((t) => (
            <option key={t.tag} value={t.tag}>
              {t.tag} ({t.leads})
            </option>
          ))}
        </select>
        <label className="sr-only" htmlFor="lead-list">
          List or segment
        </label>
        <select id="lead-list" value={listId} onChange={(e) => setListId(e.target.value)}>
          <option value="">All leads</option>
          {(['static', 'segment'] as const).map((kind) => (
            <optgroup key={kind} label={kind === 'static' ? 'Lists' : 'Segments'}>
              {allLists
                .filter((l) => l.kind === kind)
                .map((l) => (
                  <option key={l.id} value={l.id}>
                    {l.name} ({l.leadsExact ? l.leads : `${l.leads}+`})
                  </option>
                ))}
            </optgroup>
          ))}
        </select>
        <span className="muted small">{list.data ? countText(list.data) : ''}</span>
        {filters.verdict === 'review' && (
          <a className="small" href={`/api/workspaces/${workspaceId}/leads/review/export`} download>
            Export to CSV
          </a>
        )}
      </form>
      {dialog}
      {shownList && (
        <div className="row">
          <span>
            <span className="strong">{shownList.name}</span>
            <span className="muted">
              {' '}
              — {shownList.kind === 'segment' && shownList.filter ? `segment: ${filterWords(shownList.filter, sequences.data?.sequences ?? [], allLists)}` : 'static list'}
            </span>
          </span>
          <button
            type="button"
            className="btn btn-quiet"
            onClick={async () => {
              const kind = shownList.kind === 'segment' ? 'segment' : 'list';
              const body = kind === 'segment' ? 'Its leads stay; only the saved filter goes.' : 'Its leads stay in the workspace; only the list goes.';
              if (!(await ask({ title: `Delete the ${kind} ${shownList.name}?`, body, action: `Delete ${kind}` }))) return;
              const err = await deleteList(workspaceId, shownList.id);
              setReviewError(err);
              if (!err) {
                setListId('');
                lists.reload();
              }
            }}
          >
            Delete {shownList.kind === 'segment' ? 'segment' : 'list'}
          </button>
        </div>
      )}
      <ErrorNote error={list.error ?? lists.error} />
      <ErrorNote error={reviewError} />
      {(selected.size > 0 || listId || filterQs) && leads.length > 0 && (
        <BulkActions
          workspaceId={workspaceId}
          target={selected.size > 0 ? { leadIds: [...selected] } : listId && !Object.values(filters).some(Boolean) && !query ? { listId } : { filter: { ...segmentOf(filters, query), ...(shownList?.kind === 'static' ? { listId } : {}), ...(shownList?.kind === 'segment' && shownList.filter ? shownList.filter : {}) } }}
          what={selected.size > 0 ? `${selected.size} selected lead${selected.size === 1 ? '' : 's'}` : shownList && !Object.values(filters).some(Boolean) && !query ? `every lead in ${shownList.name}` : 'every lead matching the filters'}
          lists={allLists}
          sequences={sequences.data?.sequences ?? []}
          admin={role === 'owner' || role === 'admin'}
          onDone={reloadAll}
        />
      )}
      {!list.loading && leads.length === 0 && <Empty>{query || filterQs ? 'No lead matches.' : 'No leads yet. Import a CSV to start.'}</Empty>}
      {leads.length > 0 && (
        <table className="table table-cards" aria-label="Leads">
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every lead shown"
                  checked={leads.length > 0 && leads.every((l) => selected.has(l.id))}
                  onChange={(e) => setSelected(e.target.checked ? new Set(leads.map((l) => l.id)) : new Set())}
                />
              </th>
              <th scope="col">Email</th>
              {/* Beside the email, so a phone sees the verdict without scrolling the table. */}
              <th scope="col">Address</th>
              <th scope="col">Name</th>
              <th scope="col">Company</th>
              <th scope="col">Title</th>
              <th scope="col">Country</th>
              <th scope="col">Time zone</th>
              <th scope="col">Tags</th>
            </tr>
          </thead>
          <tbody>
            {leads.map((l) => (
              <tr key={l.id}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${l.email}`}
                    checked={selected.has(l.id)}
                    onChange={(e) => {
                      const next = new Set(selected);
                      if (e.target.checked) next.add(l.id);
                      else next.delete(l.id);
                      setSelected(next);
                    }}
                  />
                </td>
                <td className="strong" data-label="Email">
                  <a href={`/leads/${l.id}`} onClick={(e) => (e.preventDefault(), navigate(`/leads/${l.id}`))}>
                    {l.email}
                  </a>
                </td>
                <td data-label="Address">
                  <Hygiene lead={l} onReview={(d) => void review(l.id, d)} />
                </td>
                <td data-label="Name">{[l.firstName, l.lastName].filter(Boolean).join(' ')}</td>
                <td data-label="Company">{l.company}</td>
                <td data-label="Title">{l.title}</td>
                <td data-label="Country">{l.country}</td>
                <td data-label="Time zone">{l.timeZone}</td>
                <td data-label="Tags">
                  {l.tags.map((t) => (
                    <span key={t} className="badge badge-info tag">
                      {t}
                    </span>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ErrorNote error={later?.error} />
      {nextCursor && (
        <div>
          <button type="button" className="btn" disabled={later?.busy} onClick={() => void more()}>
            {later?.busy ? 'Loading…' : 'Show more leads'}
          </button>
        </div>
      )}
    </>
  );
}

const VERDICT_BADGE = { valid: 'badge-ok', risky: 'badge-warn', invalid: 'badge-bad' } as const;

/** The address check's verdict, its reasons (in short; each in full on hover), and the review of a risky lead. */
function Hygiene({ lead, onReview }: { lead: Lead; onReview: (d: 'approve' | 'reject') => void }) {
  const h = lead.hygiene;
  if (!h) return <span className="badge badge-muted">not checked</span>;
  const why = h.reasons.map((r) => r.message).join('; ');
  const label = h.verdict === 'risky' ? (h.review === 'approved' ? 'approved' : h.review === 'rejected' ? 'rejected' : 'to review') : h.verdict;
  return (
    <span className="hygiene">
      <span className={`badge ${h.review === 'rejected' ? 'badge-bad' : VERDICT_BADGE[h.verdict]}`} title={why || undefined}>
        {label}
      </span>
      {h.reasons.length > 0 && <span className="muted small">{h.reasons.map((r) => r.code.replace(/_/g, ' ')).join(', ')}</span>}
      {h.verdict === 'risky' && h.review === null && (
        <>
          {' '}
          <button type="button" className="btn btn-quiet" aria-label={`Approve ${lead.email}`} onClick={() => onReview('approve')}>
            Approve
          </button>
          <button type="button" className="btn btn-quiet" aria-label={`Reject ${lead.email}`} onClick={() => onReview('reject')}>
            Reject
          </button>
        </>
      )}
    </span>
  );
}

function countText(p: LeadsPage): string {
  if (p.total === null) return '';
  const n = p.total.toLocaleString('en');
  return p.totalExact ? `${n} lead${p.total === 1 ? '' : 's'}` : `more than ${n} leads`;
}
