import { useState } from 'react';
import { call } from '../api.ts';
import { ErrorNote, Field, PageHeader, SubmitButton } from '../ui/parts.tsx';
import { useSubmit } from '../ui/use-submit.ts';

/** POST /api/workspaces: another team or brand, with its own mailboxes, leads and sequences; the creator owns it. */
export function NewWorkspace({ onCreated }: { onCreated: (workspaceId: string) => void }) {
  const [f, setF] = useState({ name: '', timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone });
  const { busy, error, submit } = useSubmit(
    async () => {
      const w = await call('POST /api/workspaces', '/api/workspaces', f);
      onCreated(w.id);
    },
    { staysBusy: true },
  );
  return (
    <>
      <PageHeader title="New workspace" />
      <form className="card stack" onSubmit={submit} style={{ maxWidth: '32rem' }}>
        <p className="muted" style={{ margin: 0 }}>
          A workspace has its own mailboxes, leads, sequences and people. You will be its owner, and can invite others from its settings.
        </p>
        <Field label="Workspace name" hint="A team, a brand or a client.">
          <input required value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} autoFocus />
        </Field>
        <Field label="Time zone" hint="Reports and the default send day; e.g. Europe/Paris.">
          <input required value={f.timeZone} onChange={(e) => setF({ ...f, timeZone: e.target.value })} />
        </Field>
        <ErrorNote error={error} />
        <div>
          <SubmitButton busy={busy} busyText="Creating…">
            Create workspace
          </SubmitButton>
        </div>
      </form>
    </>
  );
}
