import { useState } from 'react';
import { call, ws } from '../api.ts';
import type { SubjectExport as Export } from '../types.ts';
import { safeFileName, saveFile } from '../ui/download.ts';
import { ErrorNote, Field, SubmitButton } from '../ui/parts.tsx';
import { useSubmit } from '../ui/use-submit.ts';
import { sectionCounts } from './privacy-words.ts';

/**
 * Subject access export (admins): everything the workspace stores about one address, saved as the
 * JSON the API answers (docs/privacy.md). The export is kept in the page so that "Download again"
 * does not ask the server, and write the audit log, a second time.
 */
export function SubjectExport({ workspaceId }: { workspaceId: string }) {
  const [email, setEmail] = useState('');
  const [done, setDone] = useState<{ x: Export; file: Blob; name: string }>();
  const run = useSubmit(async () => {
    setDone(undefined);
    const x = await call('POST /api/workspaces/:workspaceId/privacy/export', ws(workspaceId, 'privacy/export'), { email: email.trim() });
    const file = new Blob([JSON.stringify(x, null, 2)], { type: 'application/json' });
    const name = `cadenza-export-${safeFileName(x.email)}.json`;
    saveFile(file, name);
    setDone({ x, file, name });
  });
  return (
    <form className="stack" onSubmit={run.submit} aria-labelledby="privacy-export">
      <h3 id="privacy-export">Export a person’s data</h3>
      <p className="muted small" style={{ margin: 0 }}>
        Everything this workspace stores about one email address, as one JSON file: lead, enrollments, emails, events, opens and clicks, suppressions and the rest. Never a password or
        key. The export is written to the audit log.
      </p>
      <div className="row" style={{ alignItems: 'flex-end' }}>
        <Field label="Email address to export">
          <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" />
        </Field>
        <SubmitButton busy={run.busy} busyText="Exporting…">
          Export data
        </SubmitButton>
      </div>
      <ErrorNote error={run.error} />
      <div role="status" aria-live="polite">
        {done && <Exported {...done} />}
      </div>
    </form>
  );
}

function Exported({ x, file, name }: { x: Export; file: Blob; name: string }) {
  const counts = Object.fromEntries(Object.entries(x.sections).map(([k, rows]) => [k, rows.length]));
  const rows = Object.values(counts).reduce((a, b) => a + b, 0);
  return (
    <div className="note note-ok stack">
      <p style={{ margin: 0 }}>
        {x.erased
          ? `${x.email} was erased from this workspace: only a keyed hash of the address is left, in the suppression list.`
          : rows === 0
            ? `Nothing is stored about ${x.email} in this workspace.`
            : `Exported ${rows.toLocaleString()} ${rows === 1 ? 'record' : 'records'} about ${x.email}: ${sectionCounts(counts)}.`}{' '}
        Saved as {name}.
      </p>
      <div>
        <button type="button" className="btn" onClick={() => saveFile(file, name)}>
          Download again
        </button>
      </div>
    </div>
  );
}
