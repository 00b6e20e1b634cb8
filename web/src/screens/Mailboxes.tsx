import { useEffect, useRef, useState } from 'react';
import { api, call, ApiError, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import { PacingForm } from './PacingForm.tsx';
import { WarmupPanel } from './WarmupPanel.tsx';
import type { ConnectionReport, Mailbox, MailboxRemoval } from '../types.ts';
import { Badge, Empty, ErrorNote, Field, Meter, PageHeader, SubmitButton, TableHead } from '../ui/parts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';
import { SignatureForm } from './SignatureForm.tsx';
import { useSubmit } from '../ui/use-submit.ts';
import { CsvButton } from '../ui/CsvButton.tsx';

const healthTone = { ok: 'ok', warning: 'warn', paused: 'bad', error: 'bad' } as const;

/** Where the OAuth callback sends the browser back: ?connected=address or ?oauthError=message (src/mailbox/oauth/routes.ts). */
function oauthOutcome(): { connected?: string; error?: string } {
  const q = new URLSearchParams(location.search);
  return { ...(q.get('connected') ? { connected: q.get('connected')! } : {}), ...(q.get('oauthError') ? { error: q.get('oauthError')! } : {}) };
}

/** The OAuth start is a page the browser goes to (the provider's consent page follows), signed in by the session cookie. */
function connectUrl(provider: 'google' | 'microsoft', workspaceId: string): string {
  return `/oauth/${provider}/start?${new URLSearchParams({ workspaceId, mode: 'api' })}`;
}

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
      if (pause) await call('POST /api/workspaces/:workspaceId/mailboxes/:mailboxId/pause', ws(workspaceId, `mailboxes/${m.id}/pause`), {});
      else await call('POST /api/workspaces/:workspaceId/mailboxes/:mailboxId/resume', ws(workspaceId, `mailboxes/${m.id}/resume`));
      list.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const [removing, setRemoving] = useState<Mailbox>();
  const [pacingOf, setPacingOf] = useState<Mailbox>();
  const [signatureOf, setSignatureOf] = useState<Mailbox>();
  const [warmupOf, setWarmupOf] = useState<Mailbox>();
  const [notice, setNotice] = useState<string>();
  const [oauth] = useState(oauthOutcome);
  useEffect(() => {
    // Shown once: a reload should not announce the connection again.
    if (oauth.connected || oauth.error) history.replaceState(null, '', location.pathname);
  }, [oauth]);
  const mailboxes = list.data?.mailboxes ?? [];
  return (
    <>
      <PageHeader title="Mailboxes">
        <a className="btn" href={connectUrl('google', workspaceId)}>
          Connect Google
        </a>
        <a className="btn" href={connectUrl('microsoft', workspaceId)}>
          Connect Microsoft
        </a>
        <button type="button" className="btn btn-primary" onClick={() => setAdding(!adding)} aria-expanded={adding}>
          {adding ? 'Close' : 'Add mailbox'}
        </button>
      </PageHeader>
      {oauth.connected && (
        <p className="note note-ok" role="status">
          Connected {oauth.connected}.
        </p>
      )}
      <ErrorNote error={oauth.error && `The mailbox was not connected: ${oauth.error}`} />
      {notice && (
        <p className="note note-ok" role="status">
          {notice}
        </p>
      )}
      {removing && (
        <RemoveMailbox
          workspaceId={workspaceId}
          mailbox={removing}
          onClose={(done) => {
            setRemoving(undefined);
            if (done) {
              setNotice(done);
              list.reload();
            }
          }}
        />
      )}
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
        <>
          <table className="table">
            <TableHead columns={['Mailbox', 'Health', 'Sent today', 'Cap and ramp']} />
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
                      {m.verification === 'not_verified' && (
                        <>
                          {' '}
                          <Badge tone="warn">not verified</Badge>
                      </>
                    )}
                    {m.healthReason && <div className="small muted">{m.healthReason}</div>}
                    {m.verification === 'not_verified' && <div className="small muted">Added without a connection test: use Test to check it.</div>}
                    {m.syncError && !m.healthReason?.includes(m.syncError) && <div className="small text-bad">Reading the inbox fails: {m.syncError}</div>}
                    {m.warnings.map((w) => (
                      <div key={w} className="small text-warn">
                        Warning: {w}
                      </div>
                    ))}
                  </td>
                  <td style={{ minWidth: 160 }}>
                    <Meter value={m.sentToday} max={m.todayCap} label={`Sent today of today's cap for ${m.email}`} />
                  </td>
                  <td>
                    {m.ramp ? `day ${m.ramp.day} of ${m.ramp.days}` : m.capFactor < 1 ? null : <span className="muted">full cap ({m.dailyCap}/day)</span>}
                    {m.capFactor < 1 && <CapLowered m={m} />}
                  </td>
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
                      <button type="button" className="btn btn-quiet" onClick={() => setSignatureOf(signatureOf?.id === m.id ? undefined : m)} aria-expanded={signatureOf?.id === m.id} aria-label={`Signature of ${m.email}`}>
                        Signature
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => setPacingOf(pacingOf?.id === m.id ? undefined : m)} aria-expanded={pacingOf?.id === m.id} aria-label={`Pacing of ${m.email}`}>
                        Pacing
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => setWarmupOf(warmupOf?.id === m.id ? undefined : m)} aria-expanded={warmupOf?.id === m.id} aria-label={`Warmup of ${m.email}`}>
                        Warmup
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => setRemoving(m)} aria-label={`Remove mailbox ${m.email}`}>
                        Remove
                      </button>
                    </div>
                    {rep && (
                      <div className="small" role="status">
                        {typeof rep === 'string'
                          ? rep
                          : rep.checks.map((c) => (
                              <div key={c.protocol} className={c.ok ? 'text-ok' : 'text-bad'}>
                                {c.protocol === 'SMTP' ? 'Sending (SMTP)' : 'Receiving (IMAP)'}: {c.ok ? 'OK' : c.message}
                                {c.detail && (
                                  <details className="muted">
                                    <summary>What the server said</summary>
                                    <code>{c.detail}</code>
                                  </details>
                                )}
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
        <CsvButton
          what="the mailboxes"
          filename="mailboxes.csv"
          header={['Mailbox', 'Name', 'Provider', 'Health', 'Why', 'Verified', 'Sent today', "Today's cap", 'Daily cap', 'Ramp day', 'Ramp days']}
          rows={mailboxes.map((m) => [m.email, m.displayName, m.provider, m.health, m.healthReason, m.verification, m.sentToday, m.todayCap, m.dailyCap, m.ramp?.day, m.ramp?.days])}
        />
        </>
      )}
      {warmupOf && <WarmupPanel key={warmupOf.id} url={ws(workspaceId, `mailboxes/${warmupOf.id}/warmup`)} email={warmupOf.email} canEdit />}
      {signatureOf && <SignatureForm key={signatureOf.id} workspaceId={workspaceId} mailbox={signatureOf} onSaved={() => list.reload()} />}
      {pacingOf && <PacingForm key={pacingOf.id} url={ws(workspaceId, `mailboxes/${pacingOf.id}/pacing`)} title={`Pacing of ${pacingOf.email}`} canEdit inheritsFrom="the workspace's pacing defaults (Settings)" />}
    </>
  );
}

/** A daily cap warmup placement lowered: the cap in force, and why (the placement that did it). */
function CapLowered({ m }: { m: Mailbox }) {
  const how = m.capFactor === 0.5 ? 'halved' : `× ${m.capFactor}`;
  return (
    <div className="small text-warn">
      {m.effectiveDailyCap}/day ({how}: {m.capReason ?? 'warmup placement'})
    </div>
  );
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The confirmation: a dry run says what the removal would do to this mailbox's enrollments now;
 * the person may pause them all instead of moving them; a send in flight (409) is said plainly.
 */
function RemoveMailbox({ workspaceId, mailbox, onClose }: { workspaceId: string; mailbox: Mailbox; onClose: (done?: string) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const [policy, setPolicy] = useState<'reassign' | 'pause'>('reassign');
  const [preview, setPreview] = useState<MailboxRemoval>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const url = (dryRun: boolean) => ws(workspaceId, `mailboxes/${mailbox.id}?${new URLSearchParams({ dryRun: String(dryRun), enrollments: policy })}`);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    // Cancel has the focus, so that Enter pressed by habit removes nothing (React's autoFocus runs
    // on mount, and showModal() then moves the focus to the first control: EraseSubject.tsx).
    cancel.current?.focus();
  }, []);
  useEffect(() => {
    let live = true;
    setPreview(undefined);
    setError(undefined);
    api<MailboxRemoval>('DELETE', url(true)).then(
      (p) => live && setPreview(p),
      (e: unknown) => live && setError(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, [policy, mailbox.id, workspaceId]);
  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await api<MailboxRemoval>('DELETE', url(false));
      const parts = [r.reassigned ? `${plural(r.reassigned, 'enrollment')} moved` : '', r.paused ? `${plural(r.paused, 'enrollment')} paused` : ''].filter(Boolean);
      // The grant is revoked by the sender role after the removal (sending/credential-tasks/), retried there.
      const grant = r.revocation === 'pending' ? ' Its access to the account is being revoked.' : '';
      onClose(`Removed ${r.email}${parts.length ? `: ${parts.join(', ')}` : ''}.${grant}`);
    } catch (e) {
      setError(e instanceof ApiError && e.status === 409 ? `${e.message}.` : errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} className="dialog" aria-labelledby="remove-title" onClose={() => onClose()}>
      <div className="stack">
        <h2 id="remove-title">Remove {mailbox.email}?</h2>
        <p>
          It stops sending and syncing at once, and its password or Google/Microsoft access is erased from Cadenza. What it sent and received stays in the inbox, the leads’
          timelines and analytics, marked “removed mailbox”. You can connect the address again later.
        </p>
        <fieldset className="stack">
          <legend>Its running enrollments</legend>
          <label className="check">
            <input type="radio" name="policy" checked={policy === 'reassign'} onChange={() => setPolicy('reassign')} /> Move those not yet emailed to another mailbox of their
            sequence; pause those already in a thread (a follow-up should not come from another address)
          </label>
          <label className="check">
            <input type="radio" name="policy" checked={policy === 'pause'} onChange={() => setPolicy('pause')} /> Pause them all
          </label>
        </fieldset>
        <div role="status" aria-live="polite">
          {!preview && !error && <p className="muted">Counting its enrollments…</p>}
          {preview && (
            <ul>
              <li>
                {plural(preview.reassigned, 'enrollment')} reassigned
                {preview.reassignedTo.length > 0 && ` (${preview.reassignedTo.map((t) => `${t.enrollments} to ${t.email}`).join(', ')})`}
              </li>
              <li>{plural(preview.paused, 'enrollment')} paused with the reason “mailbox removed”</li>
              {preview.cancelledSends > 0 && <li>{plural(preview.cancelledSends, 'queued email')} cancelled</li>}
              {preview.unknownSends > 0 && <li>{plural(preview.unknownSends, 'email')} whose delivery is unconfirmed will not be sent again</li>}
              {preview.inFlightSends > 0 && <li className="text-bad">{plural(preview.inFlightSends, 'email is', 'emails are')} being sent right now: wait a few seconds</li>}
            </ul>
          )}
        </div>
        <ErrorNote error={error} />
        <div className="row">
          <button type="button" className="btn btn-danger" onClick={remove} disabled={busy || !preview}>
            {busy ? 'Removing…' : 'Remove mailbox'}
          </button>
          <button type="button" className="btn" ref={cancel} onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </div>
    </dialog>
  );
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

interface EndpointDraft {
  host: string;
  port: string;
  security: 'tls' | 'starttls' | 'none';
}

function AddMailbox({ workspaceId, onAdded }: { workspaceId: string; onAdded: () => void }) {
  const [f, setF] = useState({ email: '', displayName: '', username: '', password: '', dailyCap: '30', timeZone: '', allowSelfSigned: false, rampUp: true, verify: true });
  const [smtp, setSmtp] = useState<EndpointDraft>({ host: '', port: '587', security: 'starttls' });
  const [imap, setImap] = useState<EndpointDraft>({ host: '', port: '993', security: 'tls' });
  const [hours, setHours] = useState({ workDays: [1, 2, 3, 4, 5], start: '08:40', end: '17:20', humanTiming: true });
  const { busy, error, submit } = useSubmit(async () => {
    const ep = (d: EndpointDraft) => ({ host: d.host, port: Number(d.port), security: d.security, allowSelfSigned: f.allowSelfSigned });
    await call('POST /api/workspaces/:workspaceId/mailboxes', ws(workspaceId, 'mailboxes'), {
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
      verify: f.verify,
    });
    onAdded();
  });
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
      <label className="check">
        <input type="checkbox" checked={f.verify} onChange={(e) => setF({ ...f, verify: e.target.checked })} /> Test the sign-in before saving (recommended; without it the
        mailbox is shown as not verified)
      </label>
      <ErrorNote error={error} />
      <div>
        <SubmitButton busy={busy} busyText={f.verify ? 'Testing the connection…' : 'Connecting…'}>
          Connect mailbox
        </SubmitButton>
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
