import { useState, type FormEvent } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { ConnectionReport, Mailbox } from '../types.ts';
import { Badge, Empty, ErrorNote, Field, Meter, PageHeader } from '../ui/parts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';

const healthTone = { ok: 'ok', warning: 'warn', paused: 'bad', error: 'bad' } as const;

export function Mailboxes({ workspaceId }: ScreenProps) {
  const list = useLoad(() => api<{ mailboxes: Mailbox[] }>('GET', ws(workspaceId, 'mailboxes')), [workspaceId]);
  usePoll(list.reload, 15_000);
  const [adding, setAdding] = useState(false);
  const [reports, setReports] = useState<Record<string, ConnectionReport | string>>({});
  const test = async (id: string) => {
    setReports((r) => ({ ...r, [id]: 'Testing…' }));
    try {
      const rep = await api<ConnectionReport>('POST', ws(workspaceId, `mailboxes/${id}/test`));
      setReports((r) => ({ ...r, [id]: rep }));
    } catch (e) {
      setReports((r) => ({ ...r, [id]: errorMessage(e) }));
    }
  };
  const [error, setError] = useState<string>();
  const setPaused = async (m: Mailbox, pause: boolean) => {
    setError(undefined);
    try {
      await api('POST', ws(workspaceId, `mailboxes/${m.id}/${pause ? 'pause' : 'resume'}`), pause ? {} : undefined);
      list.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const mailboxes = list.data?.mailboxes ?? [];
  return (
    <>
      <PageHeader title="Mailboxes">
        <button type="button" className="btn btn-primary" onClick={() => setAdding(!adding)} aria-expanded={adding}>
          {adding ? 'Close' : 'Add mailbox'}
        </button>
      </PageHeader>
      {adding && (
        <AddMailbox
          workspaceId={workspaceId}
          onAdded={() => {
            setAdding(false);
            list.reload();
          }}
        />
      )}
      <ErrorNote error={list.error ?? error} />
      {!list.loading && mailboxes.length === 0 && <Empty>No mailbox yet. Add the mailbox your sequences send from.</Empty>}
      {mailboxes.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Mailbox</th>
              <th scope="col">Health</th>
              <th scope="col">Sent today</th>
              <th scope="col">Ramp</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {mailboxes.map((m) => {
              const rep = reports[m.id];
              return (
                <tr key={m.id}>
                  <td>
                    <div className="strong">{m.email}</div>
                    <div className="muted small">
                      {m.displayName ?? ''} {m.provider === 'smtp_imap' ? 'SMTP / IMAP' : m.provider === 'gmail' ? 'Google' : 'Microsoft'}
                    </div>
                  </td>
                  <td>
                    <Badge tone={healthTone[m.health]}>{m.health}</Badge>
                    {m.healthReason && <div className="small muted">{m.healthReason}</div>}
                    {m.syncError && <div className="small text-bad">Sync: {m.syncError}</div>}
                  </td>
                  <td style={{ minWidth: 160 }}>
                    <Meter value={m.sentToday} max={m.todayCap} label={`Sent today of today's cap for ${m.email}`} />
                  </td>
                  <td>{m.ramp ? `day ${m.ramp.day} of ${m.ramp.days}` : <span className="muted">full cap ({m.dailyCap}/day)</span>}</td>
                  <td className="actions">
                    <div className="row">
                      <button type="button" className="btn" onClick={() => test(m.id)}>
                        Test connection
                      </button>
                      {m.health === 'paused' || m.health === 'error' ? (
                        <button type="button" className="btn" onClick={() => setPaused(m, false)}>
                          Resume
                        </button>
                      ) : (
                        <button type="button" className="btn btn-quiet" onClick={() => setPaused(m, true)}>
                          Pause
                        </button>
                      )}
                    </div>
                    {rep && (
                      <div className="small" role="status">
                        {typeof rep === 'string'
                          ? rep
                          : rep.checks.map((c) => (
                              <div key={c.protocol} className={c.ok ? 'text-ok' : 'text-bad'}>
                                {c.protocol}: {c.ok ? 'OK' : c.message}
                              </div>
                            ))}
                      </div>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

interface EndpointDraft {
  host: string;
  port: string;
  security: 'tls' | 'starttls' | 'none';
}

function AddMailbox({ workspaceId, onAdded }: { workspaceId: string; onAdded: () => void }) {
  const [f, setF] = useState({ email: '', displayName: '', username: '', password: '', dailyCap: '30', timeZone: '', allowSelfSigned: false, rampUp: true });
  const [smtp, setSmtp] = useState<EndpointDraft>({ host: '', port: '587', security: 'starttls' });
  const [imap, setImap] = useState<EndpointDraft>({ host: '', port: '993', security: 'tls' });
  const [hours, setHours] = useState({ workDays: [1, 2, 3, 4, 5], start: '08:40', end: '17:20', humanTiming: true });
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const ep = (d: EndpointDraft) => ({ host: d.host, port: Number(d.port), security: d.security, allowSelfSigned: f.allowSelfSigned });
      await api('POST', ws(workspaceId, 'mailboxes'), {
        email: f.email,
        ...(f.displayName ? { displayName: f.displayName } : {}),
        ...(f.username ? { username: f.username } : {}),
        ...(f.timeZone ? { timeZone: f.timeZone } : {}),
        password: f.password,
        dailyCap: Number(f.dailyCap),
        rampUp: f.rampUp,
        smtp: ep(smtp),
        imap: ep(imap),
        workingHours: hours,
      });
      onAdded();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const text = (k: 'email' | 'displayName' | 'username' | 'password' | 'dailyCap' | 'timeZone') => (e: React.ChangeEvent<HTMLInputElement>) => setF({ ...f, [k]: e.target.value });
  return (
    <form className="card stack" onSubmit={submit} aria-label="Add an SMTP/IMAP mailbox">
      <h2>Connect an SMTP / IMAP mailbox</h2>
      <div className="grid-2">
        <Field label="Email address">
          <input type="email" required value={f.email} onChange={text('email')} autoFocus />
        </Field>
        <Field label="Display name" hint="The name recipients see.">
          <input value={f.displayName} onChange={text('displayName')} />
        </Field>
        <Field label="Username" hint="Leave empty to use the email address.">
          <input value={f.username} onChange={text('username')} autoComplete="off" />
        </Field>
        <Field label="Password or app password" hint="Stored encrypted; never shown again.">
          <input type="password" required value={f.password} onChange={text('password')} autoComplete="new-password" />
        </Field>
      </div>
      <EndpointFields legend="Sending (SMTP)" value={smtp} onChange={setSmtp} defaults={{ tls: '465', starttls: '587', none: '25' }} />
      <EndpointFields legend="Receiving (IMAP)" value={imap} onChange={setImap} defaults={{ tls: '993', starttls: '143', none: '143' }} />
      <div className="grid-2">
        <Field label="Daily cap" hint="Most emails a day once ramped up.">
          <input type="number" min={0} max={10000} required value={f.dailyCap} onChange={text('dailyCap')} />
        </Field>
        <Field label="Time zone" hint="For leads without one; e.g. Europe/Paris.">
          <input value={f.timeZone} onChange={text('timeZone')} />
        </Field>
      </div>
      <fieldset className="stack">
        <legend>Working hours</legend>
        <div className="row" role="group" aria-label="Working days">
          {WEEKDAYS.map((d, i) => (
            <label key={d} className="check">
              <input
                type="checkbox"
                checked={hours.workDays.includes(i + 1)}
                onChange={(e) => setHours({ ...hours, workDays: e.target.checked ? [...hours.workDays, i + 1].sort() : hours.workDays.filter((x) => x !== i + 1) })}
              />
              {d}
            </label>
          ))}
        </div>
        <div className="grid-2">
          <Field label="Sends from">
            <input type="time" required value={hours.start} onChange={(e) => setHours({ ...hours, start: e.target.value })} />
          </Field>
          <Field label="Sends until">
            <input type="time" required value={hours.end} onChange={(e) => setHours({ ...hours, end: e.target.value })} />
          </Field>
        </div>
        <label className="check">
          <input type="checkbox" checked={hours.humanTiming} onChange={(e) => setHours({ ...hours, humanTiming: e.target.checked })} /> Human-like timing (a varying day, a lunch break, a few minutes before
          each send)
        </label>
      </fieldset>
      <label className="check">
        <input type="checkbox" checked={f.rampUp} onChange={(e) => setF({ ...f, rampUp: e.target.checked })} /> Ramp up slowly (recommended for a new mailbox)
      </label>
      <label className="check">
        <input type="checkbox" checked={f.allowSelfSigned} onChange={(e) => setF({ ...f, allowSelfSigned: e.target.checked })} /> Accept self-signed certificates
      </label>
      <ErrorNote error={error} />
      <div>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Connecting…' : 'Connect mailbox'}
        </button>
      </div>
    </form>
  );
}

function EndpointFields({ legend, value, onChange, defaults }: { legend: string; value: EndpointDraft; onChange: (v: EndpointDraft) => void; defaults: Record<EndpointDraft['security'], string> }) {
  return (
    <fieldset className="grid-3">
      <legend>{legend}</legend>
      <Field label={`${legend} host`}>
        <input required value={value.host} onChange={(e) => onChange({ ...value, host: e.target.value })} />
      </Field>
      <Field label={`${legend} port`}>
        <input type="number" min={1} max={65535} required value={value.port} onChange={(e) => onChange({ ...value, port: e.target.value })} />
      </Field>
      <Field label={`${legend} security`}>
        <select
          value={value.security}
          onChange={(e) => {
            const security = e.target.value as EndpointDraft['security'];
            onChange({ ...value, security, port: defaults[security] });
          }}
        >
          <option value="tls">TLS</option>
          <option value="starttls">STARTTLS</option>
          <option value="none">None (local only)</option>
        </select>
      </Field>
    </fieldset>
  );
}
