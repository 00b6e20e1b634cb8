import { useEffect, useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import { navigate } from '../router.ts';
import type { ScreenProps } from '../Shell.tsx';
import { importToShow, LeadImport, type LeadImportJob } from './LeadImport.tsx';
import { LeadPage } from './LeadPage.tsx';
import type { Lead, LeadsPage, SequenceSummary } from '../types.ts';
import { Empty, ErrorNote, PageHeader } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

export function Leads({ workspaceId, sub }: ScreenProps) {
  if (sub) return <LeadPage workspaceId={workspaceId} leadId={sub} />;
  return <LeadList workspaceId={workspaceId} />;
}

function LeadList({ workspaceId }: { workspaceId: string }) {
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  // Filters (GET …/leads country, sequenceId, state): the menus apply at once, the country with the search.
  const [country, setCountry] = useState('');
  const [filters, setFilters] = useState({ country: '', sequenceId: '', state: '', verdict: '' });
  const [reviewError, setReviewError] = useState<string>();
  const sequences = useLoad(() => api<{ sequences: SequenceSummary[] }>('GET', ws(workspaceId, 'sequences')), [workspaceId]);
  const filterQs = Object.entries(filters)
    .filter(([, v]) => v)
    .map(([k, v]) => `&${k}=${encodeURIComponent(v)}`)
    .join('');
  const path = (cursor: string | null) => ws(workspaceId, `leads?search=${encodeURIComponent(query)}${filterQs}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  const list = useLoad(() => api<LeadsPage>('GET', path(null)), [workspaceId, query, filterQs]);
  // Pages after the first, fetched by cursor on demand; a new first page starts over.
  const [later, setLater] = useState<{ leads: Lead[]; nextCursor: string | null; error?: string; busy?: boolean }>();
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
        <button type="button" className="btn btn-primary" onClick={() => setImporting(!importing)} aria-expanded={importing}>
          {importing ? 'Close import' : 'Import CSV'}
        </button>
      </PageHeader>
      {importing && <LeadImport workspaceId={workspaceId} onDone={list.reload} />}
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
        <span className="muted small">{list.data ? countText(list.data) : ''}</span>
        {filters.verdict === 'review' && (
          <a className="small" href={`/api/workspaces/${workspaceId}/leads/review/export`} download>
            Export to CSV
          </a>
        )}
      </form>
      <ErrorNote error={list.error} />
      <ErrorNote error={reviewError} />
      {!list.loading && leads.length === 0 && <Empty>{query || filterQs ? 'No lead matches.' : 'No leads yet. Import a CSV to start.'}</Empty>}
      {leads.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Email</th>
              {/* Beside the email, so a phone sees the verdict without scrolling the table. */}
              <th scope="col">Address</th>
              <th scope="col">Name</th>
              <th scope="col">Company</th>
              <th scope="col">Title</th>
              <th scope="col">Country</th>
              <th scope="col">Time zone</th>
            </tr>
          </thead>
          <tbody>
            {leads.map((l) => (
              <tr key={l.id}>
                <td className="strong">
                  <a href={`/leads/${l.id}`} onClick={(e) => (e.preventDefault(), navigate(`/leads/${l.id}`))}>
                    {l.email}
                  </a>
                </td>
                <td>
                  <Hygiene lead={l} onReview={(d) => void review(l.id, d)} />
                </td>
                <td>{[l.firstName, l.lastName].filter(Boolean).join(' ')}</td>
                <td>{l.company}</td>
                <td>{l.title}</td>
                <td>{l.country}</td>
                <td>{l.timeZone}</td>
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
