/**
 * CSV import of leads as a job: a preview of the first rows read in the browser (64 KB, never the
 * whole file) for the mapping, then the file streamed to POST …/leads/imports while the job's
 * progress is polled. The job lives on the server: leaving the Leads screen and coming back shows
 * it (the recent imports), and its rejects report is a download.
 */
import { useEffect, useRef, useState } from 'react';
import { api, apiUpload, errorMessage, ws } from '../api.ts';
import type { LeadImport as LeadImportJob, SequenceSummary } from '../types.ts';

export type { LeadImportJob };
import { duration, ErrorNote, Field, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

const TARGETS = ['email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'region', 'time_zone'] as const;
const PREVIEW_BYTES = 64 * 1024;
const PREVIEW_ROWS = 3;
const POLL_MS = 700;

/** Uploads this tab is sending: navigating away from Leads keeps them going; closing the tab would not. */
const uploading = new Set<string>();
function warnOnUnload(e: BeforeUnloadEvent) {
  if (uploading.size > 0) e.preventDefault();
}

/** The import this tab started last: followed again when the user comes back, until its outcome has been shown. */
let followed: { workspaceId: string; id: string; seen: boolean } | undefined;

/** True when the Leads screen should open the import panel: this tab's import has not shown its outcome yet. */
/** What each import warning means, in words (src/leads/reasons.ts warningReasons). */
const WARNING_TEXT: Record<string, (n: number) => string> = {
  invalid_time_zone: (n) => `${n} with a time zone Cadenza does not recognise (not an IANA zone such as Europe/Paris): imported without it, so their emails follow the mailbox's time zone. Fix the column and import again with "update" to set it.`,
};

export function importToShow(workspaceId: string): boolean {
  return followed !== undefined && followed.workspaceId === workspaceId && !followed.seen;
}

/** Mapping guesses mirror the server's header synonyms loosely; the server has the last word. */
function guess(header: string): string {
  const h = header.toLowerCase().replace(/[^a-z]/g, '');
  if (h.includes('email') || h === 'mail') return 'email';
  if (h === 'firstname' || h === 'first' || h === 'givenname') return 'first_name';
  if (h === 'lastname' || h === 'last' || h === 'surname' || h === 'familyname') return 'last_name';
  if (h.includes('company') || h === 'organization' || h === 'organisation' || h === 'account') return 'company';
  if (h === 'title' || h === 'jobtitle' || h === 'position') return 'title';
  if (h.includes('phone')) return 'phone';
  if (h === 'country') return 'country';
  if (h === 'region' || h === 'state') return 'region';
  if (h === 'timezone' || h === 'tz') return 'time_zone';
  return customName(header);
}

const customName = (h: string) => 'custom.' + h.trim().toLowerCase().replace(/\s+/g, '_');

type EncodingChoice = 'auto' | 'utf-8' | 'windows-1252';

/** A v4 UUID; crypto.randomUUID exists only in secure contexts, and a LAN install may be plain http. */
function newUuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** What 'auto' will pick on the server: a BOM, else UTF-8 when the first 64 KB are valid UTF-8. */
function detectEncoding(bytes: Uint8Array): 'utf-8' | 'windows-1252' | 'utf-16' {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return 'utf-16';
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return 'utf-8';
  } catch {
    return 'windows-1252';
  }
}

/** The header and the first rows, quotes honoured; the delimiter sniffed as the server does (most frequent of , ; tab |). */
function previewRows(text: string): { headers: string[]; rows: string[][] } {
  const firstLine = text.split(/\r?\n/, 1)[0] ?? '';
  const sep = /^sep=(.)$/i.exec(firstLine);
  if (sep) text = text.slice(firstLine.length).replace(/^\r?\n/, '');
  const delim = sep ? sep[1]! : [',', ';', '\t', '|'].reduce((best, d) => (firstLine.split(d).length > firstLine.split(best).length ? d : best), ',');
  const records: string[][] = [];
  let field = '';
  let rec: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length && records.length <= PREVIEW_ROWS; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === delim) rec.push(field), (field = '');
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      rec.push(field);
      if (rec.some((f) => f.trim() !== '')) records.push(rec);
      rec = [];
      field = '';
    } else field += c;
  }
  const [headers = [], ...rows] = records;
  return { headers: headers.map((h) => h.trim()), rows };
}

interface Preview {
  file: File;
  bytes: Uint8Array;
  headers: string[];
  rows: string[][];
  detected: ReturnType<typeof detectEncoding>;
}

async function readPreview(file: File, encoding: EncodingChoice): Promise<Preview> {
  const bytes = new Uint8Array(await file.slice(0, PREVIEW_BYTES).arrayBuffer());
  const detected = detectEncoding(bytes);
  const decodeAs = encoding !== 'auto' ? encoding : detected === 'utf-16' ? 'utf-16le' : detected;
  const text = new TextDecoder(bytes[0] === 0xfe ? 'utf-16be' : decodeAs).decode(bytes, { stream: true }).replace(/^\ufeff/, '');
  return { file, bytes, detected, ...previewRows(text) };
}

export function LeadImport({ workspaceId, onDone }: { workspaceId: string; onDone: () => void }) {
  const [preview, setPreview] = useState<Preview>();
  const [encoding, setEncoding] = useState<EncodingChoice>('auto');
  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [onDuplicate, setOnDuplicate] = useState<'skip' | 'update'>('skip');
  const [enrollInto, setEnrollInto] = useState('');
  const sequences = useLoad(() => api<{ sequences: SequenceSummary[] }>('GET', ws(workspaceId, 'sequences')), [workspaceId]);
  const activeSequences = (sequences.data?.sequences ?? []).filter((q) => q.status === 'active');
  const [error, setError] = useState<string>();
  const [recent, setRecent] = useState<LeadImportJob[]>([]);
  /** The import this panel follows: started here, or a running one found on opening. */
  const [activeId, setActiveId] = useState<string | undefined>(() => (followed?.workspaceId === workspaceId ? followed.id : undefined));
  const [active, setActive] = useState<LeadImportJob>();
  const onDoneRef = useRef(onDone);
  onDoneRef.current = onDone;

  const loadRecent = async () => {
    try {
      const r = await api<{ imports: LeadImportJob[] }>('GET', ws(workspaceId, 'leads/imports'));
      setRecent(r.imports);
      return r.imports;
    } catch (e) {
      setError(errorMessage(e));
      return [];
    }
  };

  // On opening: follow an import still running (started before the user left the screen).
  useEffect(() => {
    void loadRecent().then((list) => {
      const running = list.find((j) => j.status === 'running');
      if (running) setActiveId((cur) => cur ?? running.id);
    });
    window.addEventListener('beforeunload', warnOnUnload);
    return () => window.removeEventListener('beforeunload', warnOnUnload);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [workspaceId]);

  // Polls the followed import until it ends.
  useEffect(() => {
    if (!activeId) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The upload creates the job: until its first bytes arrive the id is unknown, so the job is
    // looked for in the recent list (always 200) until it shows, then polled by id.
    let known = false;
    const tick = async () => {
      try {
        const j = known
          ? await api<LeadImportJob>('GET', ws(workspaceId, `leads/imports/${activeId}`))
          : (await api<{ imports: LeadImportJob[] }>('GET', ws(workspaceId, 'leads/imports'))).imports.find((x) => x.id === activeId);
        if (!live) return;
        if (j) {
          known = true;
          setActive(j);
          if (j.status !== 'running') {
            if (followed?.id === j.id) followed.seen = true;
            void loadRecent();
            onDoneRef.current();
            return;
          }
        }
      } catch (e) {
        setError(errorMessage(e));
      }
      if (live) timer = setTimeout(() => void tick(), POLL_MS);
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [activeId, workspaceId]);

  const choose = async (file: File | undefined, enc = encoding) => {
    if (!file) return;
    setError(undefined);
    const p = await readPreview(file, enc);
    setPreview(p);
    setMapping(Object.fromEntries(p.headers.map((h) => [h, guess(h)])));
  };

  const start = async () => {
    if (!preview) return;
    setError(undefined);
    const importId = newUuid();
    const q = new URLSearchParams({ importId, onDuplicate, encoding, fileName: preview.file.name, mapping: JSON.stringify(mapping) });
    if (enrollInto) q.set('enrollSequenceId', enrollInto);
    setActive(undefined);
    setActiveId(importId);
    followed = { workspaceId, id: importId, seen: false };
    uploading.add(importId);
    try {
      const done = await apiUpload<LeadImportJob>(ws(workspaceId, `leads/imports?${q.toString()}`), preview.file, 'text/csv');
      setActive(done);
      setPreview(undefined);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      uploading.delete(importId);
      void loadRecent();
    }
  };

  const cancel = async (id: string) => {
    try {
      setActive(await api<LeadImportJob>('POST', ws(workspaceId, `leads/imports/${id}/cancel`)));
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const busy = active?.status === 'running' || (activeId !== undefined && uploading.has(activeId));
  return (
    <section className="card stack" aria-label="Import leads from CSV">
      <h2>Import leads from a CSV file</h2>
      <Field label="CSV file" hint="Up to 100 MB (about 500,000 leads). Comma, semicolon or tab separated; the first row names the columns.">
        <input type="file" accept=".csv,text/csv" disabled={busy} onChange={(e) => void choose(e.target.files?.[0])} />
      </Field>
      {preview && preview.headers.length > 0 && !busy && (
        <>
          <Field label="Encoding" hint={preview.detected === 'utf-16' ? 'The file says UTF-16 (byte-order mark); that wins.' : `Looks like ${preview.detected === 'utf-8' ? 'UTF-8' : 'Windows-1252 (Excel "CSV")'}.`}>
            <select
              value={encoding}
              onChange={(e) => {
                const enc = e.target.value as EncodingChoice;
                setEncoding(enc);
                void choose(preview.file, enc);
              }}
            >
              <option value="auto">Detect</option>
              <option value="utf-8">UTF-8</option>
              <option value="windows-1252">Windows-1252 / Latin-1 (Excel "CSV")</option>
            </select>
          </Field>
          <h3>Columns in {preview.file.name}</h3>
          <table className="table table-compact">
            <thead>
              <tr>
                <th scope="col">Column</th>
                <th scope="col">First rows</th>
                <th scope="col">Goes to</th>
              </tr>
            </thead>
            <tbody>
              {preview.headers.map((h, col) => {
                const v = mapping[h] ?? '-';
                const custom = v.startsWith('custom.');
                return (
                  <tr key={h}>
                    <td>{h}</td>
                    <td className="muted small">{preview.rows.map((r) => r[col] ?? '').filter(Boolean).join(' · ')}</td>
                    <td>
                      <label className="sr-only" htmlFor={`map-${h}`}>
                        Field for column {h}
                      </label>
                      <select id={`map-${h}`} value={custom ? 'custom' : v} onChange={(e) => setMapping({ ...mapping, [h]: e.target.value === 'custom' ? customName(h) : e.target.value })}>
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
          <Field
            label="Then enroll into sequence"
            hint="The leads imported or updated are enrolled as each batch is written; rejected rows, suppressed addresses and leads already in the sequence are not."
          >
            <select value={enrollInto} onChange={(e) => setEnrollInto(e.target.value)}>
              <option value="">Don't enroll</option>
              {activeSequences.map((q) => (
                <option key={q.id} value={q.id}>
                  {q.name}
                </option>
              ))}
            </select>
          </Field>
          <div>
            <button type="button" className="btn btn-primary" onClick={() => void start()}>
              Import {preview.file.name}
            </button>
          </div>
        </>
      )}
      {activeId && <ImportProgress workspaceId={workspaceId} job={active} onCancel={() => void cancel(activeId)} />}
      <ErrorNote error={error} />
      {recent.length > 0 && <RecentImports workspaceId={workspaceId} jobs={recent} />}
    </section>
  );
}

function rejectsHref(workspaceId: string, id: string): string {
  return ws(workspaceId, `leads/imports/${id}/rejects.csv`);
}

function ImportProgress({ workspaceId, job, onCancel }: { workspaceId: string; job: LeadImportJob | undefined; onCancel: () => void }) {
  if (!job) return <p className="muted">Starting the upload…</p>;
  const running = job.status === 'running';
  return (
    <div role="status" className="stack">
      {running ? (
        <>
          <progress aria-label="Import progress" max={100} value={job.percent ?? undefined} style={{ width: '100%' }} />
          <p className="small">
            {job.percent !== null ? `${job.percent.toFixed(0)}% · ` : ''}
            {job.rowsRead.toLocaleString('en')} rows · {job.rowsPerSecond !== null ? `${job.rowsPerSecond.toLocaleString('en')} rows/s · ` : ''}
            {job.rejected.toLocaleString('en')} rejected so far
            {job.enrollSequenceId ? ` · ${job.enrolled.toLocaleString('en')} enrolled, ${job.enrollSkipped.toLocaleString('en')} not enrolled` : ''}
          </p>
          <div>
            <button type="button" className="btn" onClick={onCancel}>
              Cancel import
            </button>
          </div>
        </>
      ) : (
        <p className={job.status === 'done' ? 'note note-ok' : 'note note-error'}>
          {job.status === 'failed' ? `Import failed: ${job.error ?? 'unknown error'}. ` : job.status === 'cancelled' ? 'Import cancelled. ' : ''}
          {job.rowsRead} rows read: {job.inserted} imported, {job.updated} updated, {job.unchanged} unchanged, {job.rejected} rejected
          {job.finishedAt ? ` (${duration(new Date(job.finishedAt).getTime() - new Date(job.createdAt).getTime())})` : ''}.
          {job.enrollSequenceId ? ` ${job.enrolled} enrolled in the sequence, ${job.enrollSkipped} not enrolled.` : ''}
        </p>
      )}
      {job.hygiene.valid + job.hygiene.risky + job.hygiene.invalid > 0 && (
        <p className="small" aria-label="Address check">
          Address check: <span className="badge badge-ok">{job.hygiene.valid.toLocaleString('en')} valid</span>{' '}
          <span className="badge badge-warn">{job.hygiene.risky.toLocaleString('en')} to review</span>{' '}
          <span className="badge badge-bad">{job.hygiene.invalid.toLocaleString('en')} invalid</span>
          {job.hygiene.invalid > 0 ? ' · invalid addresses are never enrolled' : ''}
        </p>
      )}
      {job.warnings > 0 && (
        <div className="note note-warn" role="status">
          <p>
            {job.warnings.toLocaleString('en')} {job.warnings === 1 ? 'lead was' : 'leads were'} imported with a value left out:
          </p>
          <ul className="small" aria-label="Imported with a value left out">
            {Object.entries(job.warningsByReason).map(([reason, n]) => (
              <li key={reason}>{WARNING_TEXT[reason] ? WARNING_TEXT[reason](n) : `${n}: ${reason.replace(/_/g, ' ')} (imported without it)`}</li>
            ))}
          </ul>
        </div>
      )}
      {job.phonesFlagged > 0 && (
        <div className="note note-warn" role="status">
          <p>
            {job.phonesFlagged.toLocaleString('en')} {job.phonesFlagged === 1 ? 'lead was' : 'leads were'} imported with a phone number flagged as wrong or unlikely (kept as written, with the reason on the lead):
          </p>
          <ul className="small" aria-label="Phone numbers flagged">
            {Object.entries(job.phonesFlaggedByReason).map(([reason, n]) => (
              <li key={reason}>
                {reason.replace(/_/g, ' ')}: {n}
              </li>
            ))}
          </ul>
        </div>
      )}
      {job.enrollSkipped > 0 && (
        <ul className="small" aria-label="Why leads were not enrolled">
          {Object.entries(job.enrollSkippedByReason).map(([reason, n]) => (
            <li key={reason}>
              not enrolled, {reason.replace(/_/g, ' ')}: {n}
            </li>
          ))}
        </ul>
      )}
      {job.rejected > 0 && (
        <>
          <ul className="small">
            {Object.entries(job.rejectsByReason).map(([reason, n]) => (
              <li key={reason}>
                {reason.replace(/_/g, ' ')}: {n}
              </li>
            ))}
          </ul>
          <p>
            <a href={rejectsHref(workspaceId, job.id)} download>
              Download the rejected rows (CSV)
            </a>
          </p>
        </>
      )}
    </div>
  );
}

function RecentImports({ workspaceId, jobs }: { workspaceId: string; jobs: LeadImportJob[] }) {
  return (
    <>
      <h3>Recent imports</h3>
      <table className="table table-compact">
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Started</th>
            <th scope="col">Status</th>
            <th scope="col">Rows</th>
            <th scope="col">Imported</th>
            <th scope="col">Updated</th>
            <th scope="col">Rejected</th>
            <th scope="col">Enrolled</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((j) => (
            <tr key={j.id}>
              <td>{j.fileName ?? '(no name)'}</td>
              <td>{when(j.createdAt)}</td>
              <td title={j.error ?? undefined}>{j.status === 'running' && j.percent !== null ? `running ${j.percent.toFixed(0)}%` : j.status}</td>
              <td>{j.rowsRead.toLocaleString('en')}</td>
              <td>{j.inserted.toLocaleString('en')}</td>
              <td>{(j.updated + j.unchanged).toLocaleString('en')}</td>
              <td>{j.rejected > 0 ? <a href={rejectsHref(workspaceId, j.id)} download>{j.rejected.toLocaleString('en')}</a> : 0}</td>
              <td>{j.enrollSequenceId ? j.enrolled.toLocaleString('en') : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
