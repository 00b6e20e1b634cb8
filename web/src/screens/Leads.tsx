import { useEffect, useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import { navigate } from '../router.ts';
import type { ScreenProps } from '../Shell.tsx';
import { LeadPage } from './LeadPage.tsx';
import type { ImportReport, Lead } from '../types.ts';
import { Empty, ErrorNote, Field, PageHeader } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

const TARGETS = ['email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'region', 'time_zone'] as const;

export function Leads({ workspaceId, sub }: ScreenProps) {
  if (sub) return <LeadPage workspaceId={workspaceId} leadId={sub} />;
  return <LeadList workspaceId={workspaceId} />;
}

function LeadList({ workspaceId }: { workspaceId: string }) {
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const path = (cursor: string | null) => ws(workspaceId, `leads?search=${encodeURIComponent(query)}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  const list = useLoad(() => api<LeadPage>('GET', path(null)), [workspaceId, query]);
  // Pages after the first, fetched by cursor on demand; a new first page starts over.
  const [later, setLater] = useState<{ leads: Lead[]; nextCursor: string | null; error?: string; busy?: boolean }>();
  useEffect(() => setLater(undefined), [list.data]);
  const [importing, setImporting] = useState(false);
  const leads = [...(list.data?.leads ?? []), ...(later?.leads ?? [])];
  const nextCursor = later ? later.nextCursor : (list.data?.nextCursor ?? null);
  const more = async () => {
    if (!nextCursor) return;
    setLater({ leads: later?.leads ?? [], nextCursor, busy: true });
    try {
      const p = await api<LeadPage>('GET', path(nextCursor));
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
      {importing && <CsvImport workspaceId={workspaceId} onDone={list.reload} />}
      <form
        className="toolbar"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(search);
        }}
      >
        <label className="sr-only" htmlFor="lead-search">
          Search leads
        </label>
        <input id="lead-search" type="search" placeholder="Search by email, name or company" value={search} onChange={(e) => setSearch(e.target.value)} />
        <button type="submit" className="btn">
          Search
        </button>
        <span className="muted small">{list.data ? countText(list.data) : ''}</span>
      </form>
      <ErrorNote error={list.error} />
      {!list.loading && leads.length === 0 && <Empty>{query ? 'No lead matches.' : 'No leads yet. Import a CSV to start.'}</Empty>}
      {leads.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Email</th>
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

/** GET /leads: total counts the matches on the first page, up to a cap past which it is "at least". */
interface LeadPage {
  leads: Lead[];
  nextCursor: string | null;
  total: number | null;
  totalExact: boolean;
}

function countText(p: LeadPage): string {
  if (p.total === null) return '';
  const n = p.total.toLocaleString('en');
  return p.totalExact ? `${n} lead${p.total === 1 ? '' : 's'}` : `more than ${n} leads`;
}

/** Mapping guesses mirror the server's header synonyms loosely; the server has the last word. */
function guess(header: string): string {
  const h = header.toLowerCase().replace(/[^a-z]/g, '');
  if (h.includes('email') || h === 'mail') return 'email';
  if (h === 'firstname' || h === 'first' || h === 'givenname') return 'first_name';
  if (h === 'lastname' || h === 'last' || h === 'surname' || h === 'familyname') return 'last_name';
  if (h.includes('company') || h === 'organization' || h === 'organisation') return 'company';
  if (h === 'title' || h === 'jobtitle' || h === 'position') return 'title';
  if (h.includes('phone')) return 'phone';
  if (h === 'country') return 'country';
  if (h === 'region' || h === 'state') return 'region';
  if (h === 'timezone' || h === 'tz') return 'time_zone';
  return 'custom.' + header.trim().toLowerCase().replace(/\s+/g, '_');
}

function headersOf(csv: string): string[] {
  const first = csv.split(/\r?\n/, 1)[0] ?? '';
  const delim = [',', ';', '\t'].sort((a, b) => first.split(b).length - first.split(a).length)[0]!;
  return first.split(delim).map((h) => h.trim().replace(/^"|"$/g, ''));
}

function CsvImport({ workspaceId, onDone }: { workspaceId: string; onDone: () => void }) {
  const [csv, setCsv] = useState('');
  const [fileName, setFileName] = useState('');
  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [onDuplicate, setOnDuplicate] = useState<'skip' | 'update'>('skip');
  const [report, setReport] = useState<ImportReport>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const headers = csv ? headersOf(csv) : [];
  const read = async (file: File | undefined) => {
    if (!file) return;
    const text = await file.text();
    setCsv(text);
    setFileName(file.name);
    setReport(undefined);
    setMapping(Object.fromEntries(headersOf(text).map((h) => [h, guess(h)])));
  };
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await api<ImportReport>('POST', ws(workspaceId, 'leads/import'), { csv, mapping, onDuplicate });
      setReport(r);
      onDone();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card stack" aria-label="Import leads from CSV">
      <h2>Import leads from a CSV file</h2>
      <Field label="CSV file" hint="UTF-8 or Latin-1, comma, semicolon or tab separated; the first row names the columns.">
        <input type="file" accept=".csv,text/csv" onChange={(e) => void read(e.target.files?.[0])} />
      </Field>
      {headers.length > 0 && (
        <>
          <h3>Columns in {fileName}</h3>
          <table className="table table-compact">
            <thead>
              <tr>
                <th scope="col">Column</th>
                <th scope="col">Goes to</th>
              </tr>
            </thead>
            <tbody>
              {headers.map((h) => {
                const v = mapping[h] ?? '-';
                const custom = v.startsWith('custom.');
                return (
                  <tr key={h}>
                    <td>{h}</td>
                    <td>
                      <label className="sr-only" htmlFor={`map-${h}`}>
                        Field for column {h}
                      </label>
                      <select id={`map-${h}`} value={custom ? 'custom' : v} onChange={(e) => setMapping({ ...mapping, [h]: e.target.value === 'custom' ? 'custom.' + h.trim().toLowerCase().replace(/\s+/g, '_') : e.target.value })}>
                        {TARGETS.map((t) => (
                          <option key={t} value={t}>
                            {t.replace('_', ' ')}
                          </option>
                        ))}
                        <option value="custom">custom field ({custom ? v.slice(7) : h.toLowerCase()})</option>
                        <option value="-">leave out</option>
                      </select>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <Field label="When an email is already a lead">
            <select value={onDuplicate} onChange={(e) => setOnDuplicate(e.target.value as 'skip' | 'update')}>
              <option value="skip">Reject the row (report it)</option>
              <option value="update">Update the lead's fields</option>
            </select>
          </Field>
          <div>
            <button type="button" className="btn btn-primary" disabled={busy} onClick={run}>
              {busy ? 'Importing…' : `Import ${fileName}`}
            </button>
          </div>
          {busy && <progress aria-label="Import in progress" />}
        </>
      )}
      <ErrorNote error={error} />
      {report && <ImportSummary r={report} />}
    </section>
  );
}

function ImportSummary({ r }: { r: ImportReport }) {
  return (
    <div role="status" className="stack">
      <p className="note note-ok">
        {r.rowsRead} rows read: {r.imported} imported, {r.updated} updated, {r.unchanged} unchanged, {r.rejected} rejected ({(r.durationMs / 1000).toFixed(1)} s).
      </p>
      {r.rejected > 0 && (
        <>
          <h3>Rejected rows</h3>
          <ul className="small">
            {Object.entries(r.rejectsByReason).map(([reason, n]) => (
              <li key={reason}>
                {reason.replace(/_/g, ' ')}: {n}
              </li>
            ))}
          </ul>
          <table className="table table-compact">
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Reason</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {r.issues.map((i, n) => (
                <tr key={n}>
                  <td>{i.line}</td>
                  <td>{i.reason}</td>
                  <td>{i.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
