import { useState, type FormEvent } from 'react';
import { webhookEvents, type WebhookEvent } from '../../../src/api/webhooks/views.ts';
import type { WebhookDelivery as Delivery, WebhookEndpoint as Endpoint } from '../types.ts';
import { api, call, errorMessage, ws } from '../api.ts';
import { CopyField } from '../ui/CopyField.tsx';
import { Badge, Empty, ErrorNote, Field, SubmitButton, TableHead, when } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { useLoad } from '../ui/use-load.ts';
import { CsvButton } from '../ui/CsvButton.tsx';

/**
 * Webhooks out (admins): endpoints, a test event, the delivery log, and the signing secret, which
 * the server stores sealed and shows once, when made or rotated (docs/api.md "Webhooks").
 */
export function Webhooks({ workspaceId }: { workspaceId: string }) {
  const list = useLoad(() => api<{ webhooks: Endpoint[] }>('GET', ws(workspaceId, 'webhooks')), [workspaceId]);
  const [f, setF] = useState<{ url: string; description: string; events: WebhookEvent[] }>({ url: '', description: '', events: ['reply', 'bounce', 'unsubscribe'] });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [secret, setSecret] = useState<{ url: string; secret: string; note: string }>();
  const [log, setLog] = useState<{ id: string; deliveries: Delivery[] }>();
  const { ask, dialog } = useConfirm();
  const act = async (fn: () => Promise<void>) => {
    setError(undefined);
    try {
      await fn();
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    await act(async () => {
      const made = await call('POST /api/workspaces/:workspaceId/webhooks', ws(workspaceId, 'webhooks'), { url: f.url, events: f.events, ...(f.description ? { description: f.description } : {}) });
      setSecret({ url: made.url, secret: made.secret, note: 'Your receiver checks the Cadenza-Signature header with it' });
      setF({ ...f, url: '', description: '' });
      list.reload();
    });
    setBusy(false);
  };
  const rotate = (e: Endpoint, keepPreviousHours: number) =>
    act(async () => {
      const r = await call('POST /api/workspaces/:workspaceId/webhooks/:webhookId/rotate-secret', ws(workspaceId, `webhooks/${e.id}/rotate-secret?keepPreviousHours=${keepPreviousHours}`));
      setSecret({ url: r.url, secret: r.secret, note: r.previousSecretExpiresAt ? `The old secret also signs until ${when(r.previousSecretExpiresAt)}` : 'The old secret no longer signs' });
    });
  const replaceNow = async (e: Endpoint) => {
    if (await ask({ title: `Replace the secret of ${e.url} now?`, body: 'The old secret stops signing at once: events fail its check until the receiver has the new one.', action: 'Replace secret now' })) await rotate(e, 0);
  };
  const remove = async (e: Endpoint) => {
    if (!(await ask({ title: `Delete ${e.url}?`, body: 'Cadenza stops sending it events, and its delivery log is deleted with it.', action: 'Delete webhook' }))) return;
    await act(async () => (await api('DELETE', ws(workspaceId, `webhooks/${e.id}`)), list.reload()));
  };
  const showLog = (e: Endpoint) =>
    act(async () => {
      if (log?.id === e.id) return setLog(undefined);
      setLog({ id: e.id, deliveries: (await api<{ deliveries: Delivery[] }>('GET', ws(workspaceId, `webhooks/${e.id}/deliveries?limit=20`))).deliveries });
    });
  const endpoints = list.data?.webhooks ?? [];
  return (
    <section className="card stack" aria-labelledby="settings-webhooks">
      <h2 id="settings-webhooks">Webhooks</h2>
      {dialog}
      <form className="stack" onSubmit={submit}>
        <div className="row" style={{ alignItems: 'flex-end' }}>
          <Field label="Endpoint URL" hint="https; signed with Cadenza-Signature">
            <input type="url" required value={f.url} onChange={(e) => setF({ ...f, url: e.target.value })} className="input-wide" />
          </Field>
          <Field label="Description">
            <input value={f.description} maxLength={200} onChange={(e) => setF({ ...f, description: e.target.value })} />
          </Field>
        </div>
        <fieldset className="row">
          <legend>Events</legend>
          {webhookEvents.map((ev) => (
            <label key={ev} className="small">
              <input type="checkbox" checked={f.events.includes(ev)} onChange={(e) => setF({ ...f, events: e.target.checked ? [...f.events, ev] : f.events.filter((x) => x !== ev) })} /> {ev}
            </label>
          ))}
        </fieldset>
        <div>
          <SubmitButton busy={busy} busyText="Adding…" disabled={f.events.length === 0}>
            Add webhook
          </SubmitButton>
        </div>
      </form>
      <ErrorNote error={error ?? list.error} />
      {secret && <ShownOnce {...secret} onDone={() => setSecret(undefined)} />}
      {endpoints.length === 0 ? (
        <Empty>No webhooks yet.</Empty>
      ) : (
        <>
          <table className="table">
            <TableHead columns={['Endpoint', 'Events']} />
            <tbody>
              {endpoints.map((e) => (
                <tr key={e.id}>
                  <td>
                    <div className="strong">{e.url}</div>
                    <div className="muted small">
                      {e.description ? `${e.description} · ` : ''}added {when(e.createdAt)}
                    </div>
                    {log?.id === e.id && <DeliveryLog deliveries={log.deliveries} />}
                  </td>
                  <td className="small">{e.events.join(', ')}</td>
                  <td>
                    <div className="row">
                      <button type="button" className="btn btn-quiet" onClick={() => void act(async () => void (await api('POST', ws(workspaceId, `webhooks/${e.id}/test`))))} aria-label={`Send test event to ${e.url}`}>
                        Send test
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => void showLog(e)} aria-expanded={log?.id === e.id} aria-label={`Deliveries to ${e.url}`}>
                        Deliveries
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => void rotate(e, 24)} aria-label={`Rotate secret of ${e.url} (the old one signs for 24 more hours)`}>
                        Rotate secret
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => void replaceNow(e)} aria-label={`Leaked: replace now the secret of ${e.url}`}>
                        Leaked: replace now
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => void remove(e)} aria-label={`Delete ${e.url}`}>
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CsvButton
            what="the webhooks"
            filename="webhooks.csv"
            header={['Endpoint', 'Description', 'Events', 'Added at']}
            rows={endpoints.map((e) => [e.url, e.description, e.events.join(' '), e.createdAt])}
          />
        </>
      )}
    </section>
  );
}

/** The secret, shown once: the server keeps it sealed and never returns it again. */
function ShownOnce({ url, secret, note, onDone }: { url: string; secret: string; note: string; onDone: () => void }) {
  return (
    <div className="note stack" role="status">
      <p style={{ margin: 0 }}>
        Copy the signing secret for {url} now: it is stored encrypted and will not be shown again. {note}.
      </p>
      <CopyField label={`Signing secret for ${url}`} value={secret} copyLabel="Copy secret">
        <button type="button" className="btn btn-quiet" onClick={onDone} style={{ alignSelf: 'flex-end' }}>
          Done
        </button>
      </CopyField>
    </div>
  );
}

function DeliveryLog({ deliveries }: { deliveries: Delivery[] }) {
  if (deliveries.length === 0) return <p className="muted small">No deliveries yet.</p>;
  return (
    <ul className="small" style={{ margin: '0.5em 0 0', paddingLeft: '1.2em' }}>
      {deliveries.map((d) => (
        <li key={d.id}>
          {when(d.createdAt)} {d.eventType} <Badge tone={d.state === 'delivered' ? 'ok' : d.state === 'failed' ? 'bad' : 'warn'}>{d.state}</Badge> {d.attempts} attempt{d.attempts === 1 ? '' : 's'}
          {d.responseCode !== null ? `, HTTP ${d.responseCode}` : ''}
          {d.lastError && d.state !== 'delivered' ? `: ${d.lastError}` : ''}
        </li>
      ))}
    </ul>
  );
}
