import { useEffect, useRef, useState } from 'react';
import { api, call, errorMessage, ws, type Me } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { ApiBody, ApiResponse, Suppression } from '../types.ts';
import { Badge, Empty, ErrorNote, Field, PageHeader, SubmitButton, TableHead, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';

type Reason = NonNullable<ApiBody<'POST /api/workspaces/:workspaceId/suppressions'>['reason']>;
type ImportResult = ApiResponse<'POST /api/workspaces/:workspaceId/suppressions/import'>;

const REASON_WORDS: Record<Suppression['reason'], string> = {
  manual: 'added by hand',
  unsubscribe: 'unsubscribed',
  complaint: 'complained (spam report)',
  hard_bounce: 'hard bounce',
  erased: 'erased at their request',
};
const ADDABLE: Reason[] = ['manual', 'unsubscribe', 'complaint', 'hard_bounce'];
const PAGE = 50;

/**
 * The suppression list: addresses never mailed from this workspace. Search, add one, import a CSV
 * and export it (admins), and lift one (admins: a dialog asks why, and the reason goes to the audit
 * log with the lift).
 */
export function Suppressions({ workspaceId }: ScreenProps) {
  const me = useLoad(() => api<Me>('GET', '/api/auth/me'), []);
  const role = me.data?.workspaces.find((w) => w.id === workspaceId)?.role;
  const admin = role === 'owner' || role === 'admin';
  const [q, setQ] = useState('');
  const [reason, setReason] = useState<'' | Suppression['reason']>('');
  const [pages, setPages] = useState<Suppression[][]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string>();
  const [note, setNote] = useState<string>();
  const [lifting, setLifting] = useState<string>();
  const query = (after?: string) => {
    const p = new URLSearchParams({ limit: String(PAGE) });
    if (q.trim()) p.set('q', q.trim());
    if (reason) p.set('reason', reason);
    if (after) p.set('after', after);
    return ws(workspaceId, `suppressions?${p}`);
  };
  const first = useLoad(() => call('GET /api/workspaces/:workspaceId/suppressions', query()), [workspaceId, q, reason]);
  useEffect(() => {
    if (!first.data) return;
    setPages([first.data.suppressions]);
    setNext(first.data.nextAfter);
  }, [first.data]);
  const more = async () => {
    if (!next) return;
    try {
      const page = await call('GET /api/workspaces/:workspaceId/suppressions', query(next));
      setPages((p) => [...p, page.suppressions]);
      setNext(page.nextAfter);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const rows = pages.flat();
  const changed = (what: string) => {
    setNote(what);
    first.reload();
  };
  return (
    <>
      <PageHeader title="Suppression list">
        {admin && (
          <a className="btn" href={ws(workspaceId, 'suppressions/export')} download="suppressions.csv">
            Export CSV
          </a>
        )}
      </PageHeader>
      <p className="muted" style={{ margin: 0 }}>
        Nobody on this list is emailed from this workspace: adding an address stops its running enrollments, and an import or enrollment skips it. Unsubscribes, complaints and hard bounces land
        here by themselves.
      </p>
      {note && (
        <p className="note note-ok" role="status">
          {note}
        </p>
      )}
      <div className="suppression-forms">
        <AddOne workspaceId={workspaceId} onAdded={changed} />
        {admin && <ImportCsv workspaceId={workspaceId} onImported={changed} />}
      </div>
      <div className="toolbar" role="search">
        <input type="search" aria-label="Search addresses" placeholder="Search addresses" value={q} onChange={(e) => setQ(e.target.value)} />
        <label className="row">
          <span className="field-label">Reason</span>
          <select value={reason} onChange={(e) => setReason(e.target.value as typeof reason)}>
            <option value="">Any</option>
            {(Object.keys(REASON_WORDS) as Array<Suppression['reason']>).map((r) => (
              <option key={r} value={r}>
                {REASON_WORDS[r]}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={first.error ?? me.error ?? error} />
      {first.data && rows.length === 0 ? (
        <Empty>{q || reason ? 'No suppressed address matches.' : 'No address is suppressed yet.'}</Empty>
      ) : (
        <table className="table table-cards" aria-label="Suppressed addresses">
          <TableHead columns={['Address', 'Why', 'Source', 'Since']} />
          <tbody>
            {rows.map((s) => (
              <tr key={s.email}>
                <td className="strong" data-label="Address" style={{ overflowWrap: 'anywhere' }}>
                  {s.reason === 'erased' ? <span className="muted">an erased person (address deleted)</span> : s.email}
                </td>
                <td data-label="Why">
                  <Badge tone={s.reason === 'manual' ? 'muted' : s.reason === 'erased' ? 'info' : 'warn'}>{REASON_WORDS[s.reason]}</Badge>
                </td>
                <td className="muted small" data-label="Source">{s.source ?? '—'}</td>
                <td data-label="Since">{when(s.createdAt)}</td>
                <td>
                  {admin && s.reason !== 'erased' && (
                    <button type="button" className="btn btn-quiet" onClick={() => setLifting(s.email)} aria-label={`Lift the suppression of ${s.email}`}>
                      Lift
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <div>
          <button type="button" className="btn" onClick={() => void more()}>
            Show more
          </button>
        </div>
      )}
      {lifting && (
        <ConfirmLift
          workspaceId={workspaceId}
          email={lifting}
          onClose={(lifted) => {
            setLifting(undefined);
            if (lifted) changed(`${lifting} may be emailed again. The lift and its reason are in the audit log.`);
          }}
        />
      )}
    </>
  );
}

function AddOne({ workspaceId, onAdded }: { workspaceId: string; onAdded: (what: string) => void }) {
  const [email, setEmail] = useState('');
  const [reason, setReason] = useState<Reason>('manual');
  const { busy, error, submit } = useSubmit(async () => {
    const r = await call('POST /api/workspaces/:workspaceId/suppressions', ws(workspaceId, 'suppressions'), { email, reason });
    setEmail('');
    onAdded(r.added === 0 ? `${r.email} was suppressed already.` : `${r.email} suppressed${r.stopped ? `; ${r.stopped} running enrollment${r.stopped === 1 ? '' : 's'} stopped` : ''}.`);
  });
  return (
    <form className="card stack" onSubmit={(e) => void submit(e)} aria-labelledby="suppress-one">
      <h2 id="suppress-one">Add an address</h2>
      <div className="grid-2">
        <Field label="Email address">
          <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" />
        </Field>
        <Field label="Why">
          <select value={reason} onChange={(e) => setReason(e.target.value as Reason)}>
            {ADDABLE.map((r) => (
              <option key={r} value={r}>
                {REASON_WORDS[r]}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNote error={error} />
      <div>
        <SubmitButton busy={busy} busyText="Adding…">
          Suppress
        </SubmitButton>
      </div>
    </form>
  );
}

function ImportCsv({ workspaceId, onImported }: { workspaceId: string; onImported: (what: string) => void }) {
  const [file, setFile] = useState<File>();
  const [result, setResult] = useState<ImportResult>();
  const input = useRef<HTMLInputElement>(null);
  const { busy, error, submit } = useSubmit(async () => {
    if (!file) throw new Error('Choose a CSV file first.');
    const r = await call('POST /api/workspaces/:workspaceId/suppressions/import', ws(workspaceId, 'suppressions/import'), { csv: await file.text() });
    setResult(r);
    setFile(undefined);
    if (input.current) input.current.value = '';
    onImported(`${file.name}: ${r.read} address${r.read === 1 ? '' : 'es'} read, ${r.added} newly suppressed, ${r.stopped} running enrollment${r.stopped === 1 ? '' : 's'} stopped.`);
  });
  return (
    <form className="card stack" onSubmit={(e) => void submit(e)} aria-labelledby="suppress-import">
      <h2 id="suppress-import">Import a CSV</h2>
      <Field label="CSV file" hint="A column named email (or one address per line); up to 5 MB">
        <input ref={input} type="file" accept=".csv,.txt,text/csv,text/plain" onChange={(e) => setFile(e.target.files?.[0])} />
      </Field>
      <ErrorNote error={error} />
      {result && result.rejected.length > 0 && (
        <div>
          <p className="note note-warn" style={{ marginBottom: 4 }}>
            {result.rejected.length} row{result.rejected.length === 1 ? ' was' : 's were'} not an address:
          </p>
          <ul className="small" aria-label="Rows that were not addresses">
            {result.rejected.slice(0, 20).map((r) => (
              <li key={r.line}>
                Line {r.line}: “{r.value}” ({r.message})
              </li>
            ))}
          </ul>
        </div>
      )}
      <div>
        <SubmitButton busy={busy} busyText="Importing…" disabled={!file}>
          {file ? `Import ${file.name}` : 'Import'}
        </SubmitButton>
      </div>
    </form>
  );
}

/** Asks why before lifting; focus starts on Cancel, so a habitual Enter lifts nothing. */
function ConfirmLift({ workspaceId, email, onClose }: { workspaceId: string; email: string; onClose: (lifted: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const lifted = useRef(false);
  const [why, setWhy] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    await call('DELETE /api/workspaces/:workspaceId/suppressions/:email', ws(workspaceId, `suppressions/${encodeURIComponent(email)}`), { reason: why });
    lifted.current = true;
    dialog.current?.close();
  });
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    cancel.current?.focus();
  }, []);
  return (
    <dialog ref={dialog} className="dialog" aria-labelledby="lift-title" aria-describedby="lift-what" onCancel={(e) => busy && e.preventDefault()} onClose={() => onClose(lifted.current)}>
      <form className="stack" onSubmit={(e) => void submit(e)}>
        <h2 id="lift-title">Lift the suppression of {email}?</h2>
        <p id="lift-what" style={{ margin: 0 }}>
          They may be emailed again: a sequence or an import can enroll them. Enrollments that were stopped stay stopped. The lift and your reason are kept in the audit log.
        </p>
        <Field label="Reason for lifting">
          <textarea required rows={2} maxLength={500} value={why} onChange={(e) => setWhy(e.target.value)} />
        </Field>
        <ErrorNote error={error} />
        <div className="row">
          <button type="submit" className="btn btn-danger" disabled={busy || !why.trim()}>
            {busy ? 'Lifting…' : 'Lift suppression'}
          </button>
          <button ref={cancel} type="button" className="btn" onClick={() => dialog.current?.close()} disabled={busy}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
