import { useState } from 'react';
import { apiUpload, call, ws } from '../api.ts';
import { Empty, ErrorNote, Field, PageHeader, SubmitButton, TableHead } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { useLoad } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';
import type { ScreenProps } from '../Shell.tsx';
import { inkOn } from '../ui/ink.ts';

/**
 * The agency's clients (docs/web.md "Agency"): each client workspace with its usage over a period
 * (CSV too), a new client, each client's branding with a live preview, and "Open" to switch into
 * it. The server decides who reaches what (docs/security.md "Agencies"); this screen only asks.
 */
const day = (d: Date) => d.toISOString().slice(0, 10);

export function Agency({ workspaceId, onSwitch }: ScreenProps & { onSwitch?: (id: string) => void }) {
  const [from, setFrom] = useState(() => day(new Date(Date.now() - 29 * 86_400_000)));
  const [to, setTo] = useState(() => day(new Date()));
  const [editing, setEditing] = useState<string | null>(null);
  const list = useLoad(() => call('GET /api/workspaces/:workspaceId/agency/clients', ws(workspaceId, `agency/clients?from=${from}&to=${to}`)), [workspaceId, from, to]);
  const [name, setName] = useState('');
  const create = useSubmit(async () => {
    await call('POST /api/workspaces/:workspaceId/agency/clients', ws(workspaceId, 'agency/clients'), { name: name.trim() });
    setName('');
    list.reload();
  });
  if (list.data?.isClient) {
    return (
      <section className="stack">
        <PageHeader title="Agency" />
        <Empty>This workspace is a client of an agency; its clients are managed from the agency's workspace.</Empty>
      </section>
    );
  }
  return (
    <section className="stack agency">
      <PageHeader title="Agency" />
      <form className="row" onSubmit={create.submit}>
        <Field label="New client" hint="A workspace under this agency; its people are invited from its own settings.">
          <input required value={name} maxLength={200} onChange={(e) => setName(e.target.value)} placeholder="Northwind" />
        </Field>
        <SubmitButton busy={create.busy} busyText="Creating…">
          Create client
        </SubmitButton>
      </form>
      <ErrorNote error={create.error} />
      <div className="row">
        <Field label="From">
          <input type="date" value={from} max={to} onChange={(e) => e.target.value && setFrom(e.target.value)} />
        </Field>
        <Field label="To">
          <input type="date" value={to} min={from} onChange={(e) => e.target.value && setTo(e.target.value)} />
        </Field>
        <a className="btn" href={ws(workspaceId, `agency/usage.csv?from=${from}&to=${to}`)} download>
          Export CSV
        </a>
      </div>
      <ErrorNote error={list.error} />
      {list.data && list.data.clients.length === 0 && <Empty>No clients yet: create the first above.</Empty>}
      {list.data && list.data.clients.length > 0 && (
        <div className="table-wrap">
          <table className="table agency-clients">
            <caption className="sr-only">Clients and their usage from {list.data.from} to {list.data.to}</caption>
            <TableHead columns={['Client', 'Sends', 'Replies', 'Mailboxes', 'Leads', 'Seats', 'Actions']} />
            <tbody>
              {list.data.clients.map((c) => (
                <tr key={c.id}>
                  <td data-label="Client">
                    <span className="agency-swatch" style={{ background: c.primaryColor ?? undefined }} aria-hidden="true" /> {c.displayName ?? c.name}
                  </td>
                  <td data-label="Sends">{c.usage.sends}</td>
                  <td data-label="Replies">{c.usage.replies}</td>
                  <td data-label="Mailboxes">{c.usage.mailboxes}</td>
                  <td data-label="Leads">{c.usage.leads}</td>
                  <td data-label="Seats">{c.usage.seats}</td>
                  <td data-label="Actions" className="row">
                    <button type="button" className="btn btn-quiet" aria-expanded={editing === c.id} onClick={() => setEditing(editing === c.id ? null : c.id)}>
                      Branding<span className="sr-only"> of {c.name}</span>
                    </button>
                    <button type="button" className="btn" onClick={() => onSwitch?.(c.id)}>
                      Open<span className="sr-only"> {c.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && <BrandingForm key={editing} clientId={editing} onSaved={list.reload} />}
    </section>
  );
}

/** A client's branding with a live preview of the app's header in its colours. */
function BrandingForm({ clientId, onSaved }: { clientId: string; onSaved: () => void }) {
  const current = useLoad(() => call('GET /api/workspaces/:workspaceId/branding', ws(clientId, 'branding')), [clientId]);
  const b = current.data?.branding;
  const [f, setF] = useState<{ displayName: string; primaryColor: string; accentColor: string } | null>(null);
  const form = f ?? (b ? { displayName: b.displayName, primaryColor: b.primaryColor, accentColor: b.accentColor } : null);
  const [logo, setLogo] = useState<File | null>(null);
  const save = useSubmit(async () => {
    if (!form) return;
    await call('PUT /api/workspaces/:workspaceId/branding', ws(clientId, 'branding'), form);
    if (logo) await apiUpload(ws(clientId, 'branding/logo'), logo, 'application/octet-stream');
    setLogo(null);
    current.reload();
    onSaved();
  });
  const { ask, dialog } = useConfirm();
  const removeLogo = useSubmit(async () => {
    await call('DELETE /api/workspaces/:workspaceId/branding/logo', ws(clientId, 'branding/logo'));
    current.reload();
    onSaved();
  });
  const [host, setHost] = useState('');
  const domain = useSubmit(async () => {
    await call('PUT /api/workspaces/:workspaceId/branding/domain', ws(clientId, 'branding/domain'), { host: host.trim() });
    current.reload();
  });
  if (!form) return <ErrorNote error={current.error} />;
  const set = (k: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) => setF({ ...form, [k]: e.target.value });
  return (
    <section className="card stack agency-branding" aria-labelledby="branding-title">
      <h2 id="branding-title">Branding of {b?.displayName}</h2>
      <div className="agency-branding-grid">
        <form className="stack" onSubmit={save.submit}>
          {dialog}
          <Field label="Display name">
            <input required maxLength={100} value={form.displayName} onChange={set('displayName')} />
          </Field>
          <Field label="Primary colour">
            <input type="color" value={form.primaryColor} onChange={set('primaryColor')} />
          </Field>
          <Field label="Accent colour">
            <input type="color" value={form.accentColor} onChange={set('accentColor')} />
          </Field>
          <Field label="Logo" hint="PNG, JPEG or WebP, at most 256 KB.">
            <input type="file" accept="image/png,image/jpeg,image/webp" onChange={(e) => setLogo(e.target.files?.[0] ?? null)} />
          </Field>
          {b?.logoUrl && (
            <button
              type="button"
              className="btn"
              disabled={removeLogo.busy}
              onClick={async (e) => {
                if (await ask({ title: `Remove the logo of ${form?.displayName ?? 'this client'}?`, body: "The client's sign-in page and app show its name alone until a new logo is uploaded.", action: 'Remove logo' })) await removeLogo.submit(e);
              }}
            >
              {removeLogo.busy ? 'Removing…' : 'Remove logo'}
            </button>
          )}
          <ErrorNote error={removeLogo.error} />
          <SubmitButton busy={save.busy} busyText="Saving…">
            Save branding
          </SubmitButton>
          <ErrorNote error={save.error} />
        </form>
        <div className="agency-preview" aria-label="Preview" role="img">
          <div className="agency-preview-bar" style={{ background: form.primaryColor, color: inkOn(form.primaryColor) }}>
            {b?.logoUrl && <img src={ws(clientId, `branding/logo?v=${b.logoUrl.split('v=')[1] ?? ''}`)} alt="" height={24} />}
            <strong>{form.displayName}</strong>
          </div>
          <div className="agency-preview-body">
            <span className="agency-preview-button" style={{ background: form.accentColor, color: inkOn(form.accentColor) }}>
              Reports
            </span>
          </div>
        </div>
      </div>
      <form className="row" onSubmit={domain.submit}>
        <Field label="Client's own domain" hint={current.data?.domainsEnabled ? 'A CNAME to this server; the app is served there under this branding once its certificate is issued.' : 'Custom domains are off on this server.'}>
          <input value={host} onChange={(e) => setHost(e.target.value)} placeholder={current.data?.domain?.host ?? 'app.client.example.com'} maxLength={253} autoCapitalize="off" spellCheck={false} />
        </Field>
        <SubmitButton busy={domain.busy} busyText="Saving…" disabled={!current.data?.domainsEnabled}>
          Set domain
        </SubmitButton>
      </form>
      {current.data?.domain && (
        <p className="muted">
          {current.data.domain.host}: {current.data.domain.state.replace('_', ' ')}
          {current.data.domain.reason ? ` (${current.data.domain.reason})` : ''}; CNAME to {current.data.domain.cnameTarget}
        </p>
      )}
      <ErrorNote error={domain.error} />
    </section>
  );
}
