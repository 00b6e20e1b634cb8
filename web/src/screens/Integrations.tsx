import { useEffect, useRef, useState, type FormEvent } from 'react';
import { CRM_ACTIVITY_KINDS, CRM_KINDS, DEFAULT_BASE_URLS } from '../../../src/crm/kinds.ts';
import { call, errorMessage, ws } from '../api.ts';
import type { ApiBody, CrmConnection } from '../types.ts';
import { Badge, Empty, ErrorNote, Field, SubmitButton, when } from '../ui/parts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';
import { CrmListEnroll } from './CrmListEnroll.tsx';
import { CrmSettings } from './CrmSettings.tsx';
import { activityName, crmName, crmProblem, TOKEN_HINTS } from './crm-words.ts';

/** How often the status is read again while the screen is open: the writer drains every few seconds. */
const REFRESH_MS = 10_000;

type ConnectBody = ApiBody<'POST /api/workspaces/:workspaceId/crm/connections'>;
type OAuthKind = NonNullable<Parameters<typeof oauthStartPath>[1]>;

const oauthStartPath = (workspaceId: string, kind: 'hubspot' | 'pipedrive' | 'salesforce') => ws(workspaceId, `crm/oauth/${kind}/start`);

/** Where the CRM OAuth callback sends the browser back (src/api/crm-oauth-callback.ts): ?crmConnected=kind[&reauthorized=1] or ?crmError=words. */
function oauthOutcome(): Done | { error: string } | undefined {
  const q = new URLSearchParams(location.search);
  const kind = q.get('crmConnected');
  if (kind) return { text: q.get('reauthorized') ? `${crmName(kind)} re-authorized: the connection is active and the queued activities are written now.` : `Connected ${crmName(kind)}: activities are written from now on.` };
  const error = q.get('crmError');
  return error ? { error: `The CRM was not connected: ${error}` } : undefined;
}

/**
 * Connecting with OAuth: the server starts the flow for this signed-in admin (state bound to their
 * session) and answers the CRM's consent page, where the browser goes; the CRM sends it back to
 * the callback, which lands here with the outcome.
 */
async function startOAuth(workspaceId: string, kind: OAuthKind, baseUrl?: string): Promise<void> {
  const started = await call('POST /api/workspaces/:workspaceId/crm/oauth/:kind/start', oauthStartPath(workspaceId, kind), baseUrl ? { baseUrl } : {});
  location.assign(started.url);
}
type Activity = NonNullable<ConnectBody['activities']>[number];

/**
 * Settings → Integrations (admins): the workspace's CRM connections with their sync status, read
 * again every 10 s (the outbox's counts, the last write, the last error in plain words); pause,
 * resume, the activities written, a new token, disconnect; and the form that connects a CRM. Every
 * kind the server knows is listed; one it has no connector for reads "coming" (docs/web.md
 * "Integrations"). The token is sent once and never shown again: the API never returns it.
 */
export function Integrations({ workspaceId }: { workspaceId: string }) {
  const list = useLoad(() => call('GET /api/workspaces/:workspaceId/crm/connections', ws(workspaceId, 'crm/connections')), [workspaceId]);
  usePoll(list.reload, REFRESH_MS);
  // What the last change did; one that left a connection active or paused is withdrawn once the
  // connection is no longer so (a revoked token pauses it a moment after "resumed").
  const [done, setDone] = useState<Done>();
  // The OAuth callback's outcome, read once: the address is cleaned so a reload does not say it again.
  const [outcome] = useState(oauthOutcome);
  useEffect(() => {
    if (!outcome) return;
    if ('text' in outcome) setDone(outcome);
    history.replaceState(null, '', location.pathname);
    document.getElementById('settings-integrations')?.scrollIntoView();
  }, [outcome]);
  const connections = list.data?.connections ?? [];
  const oauth = list.data?.oauth ?? [];
  const shown = done && (!done.id || connections.find((c) => c.id === done.id)?.state === done.state) ? done.text : undefined;
  return (
    <section className="card stack" aria-labelledby="settings-integrations">
      <h2 id="settings-integrations">Integrations</h2>
      <p className="muted small" style={{ margin: 0 }}>
        Cadenza writes each lead's emails, opens, clicks, replies, calls and tasks to the contact with the same address in your CRM. Activities queue while a connection is paused and are
        written once it is active again.
      </p>
      <ErrorNote error={list.error} />
      <ErrorNote error={outcome && 'error' in outcome ? outcome.error : undefined} />
      {shown && (
        <p className="note note-ok" role="status">
          {shown}
        </p>
      )}
      {list.data && connections.length === 0 && <Empty>No CRM connected yet.</Empty>}
      {connections.length > 0 && (
        <ul className="crm-list" aria-label="CRM connections">
          {connections.map((c) => (
            <li key={c.id}>
              <ConnectionCard workspaceId={workspaceId} c={c} oauth={oauth.includes(c.kind as OAuthKind)} changed={list.reload} said={setDone} />
            </li>
          ))}
        </ul>
      )}
      {list.data && (
        <ConnectForm
          workspaceId={workspaceId}
          available={list.data.available}
          oauth={oauth}
          connected={connections.map((c) => c.kind)}
          onConnected={(c) => {
            setDone({ text: `Connected ${crmName(c.kind)}: activities are written from now on.` });
            list.reload();
          }}
        />
      )}
    </section>
  );
}

type Done = { text: string; id?: string; state?: CrmConnection['state'] };

function ConnectionCard({ workspaceId, c, oauth, changed, said }: { workspaceId: string; c: CrmConnection; oauth: boolean; changed: () => void; said: (what: Done | undefined) => void }) {
  const name = crmName(c.kind);
  const headingId = `crm-${c.id}`;
  const [open, setOpen] = useState<'activities' | 'token' | 'disconnect'>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const patch = async (body: ApiBody<'PATCH /api/workspaces/:workspaceId/crm/connections/:connectionId'>, text: string, state: CrmConnection['state']): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    said(undefined);
    try {
      await call('PATCH /api/workspaces/:workspaceId/crm/connections/:connectionId', ws(workspaceId, `crm/connections/${c.id}`), body);
      said({ text, id: c.id, state });
      changed();
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  const problem = c.pausedReason ? crmProblem(c.pausedReason, name) : undefined;
  // Paused because the CRM refused its credentials, and this server can ask the CRM again: one click re-authorizes.
  const reauthorize = oauth && c.state === 'paused' && problem?.refused === true;
  const paused = problem && reauthorize ? { ...problem, words: problem.words.replace('Replace the token to resume.', `Re-authorize ${name} (or replace the token) to resume.`) } : problem;
  const reauthorizeNow = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await startOAuth(workspaceId, c.kind as OAuthKind, c.kind === 'hubspot' ? c.baseUrl : undefined);
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  // Refused credentials are both the pause's reason and the queued activities' last error: said once.
  const lastError = c.lastError && !(c.state === 'paused' && c.lastError === c.pausedReason) ? crmProblem(c.lastError, name) : undefined;
  return (
    <article className="crm-card stack" aria-labelledby={headingId}>
      <div className="row crm-head">
        <span className={`crm-mark crm-mark-${c.kind}`} aria-hidden="true">
          {monogram(name)}
        </span>
        <h3 id={headingId}>{name}</h3>
        {c.state === 'active' ? <Badge tone="ok">active</Badge> : <Badge tone="warn">paused</Badge>}
      </div>
      <div className="muted small crm-address">
        {c.baseUrl} · connected {when(c.createdAt)} · {c.preparedAt ? `set up in ${name} ${when(c.preparedAt)}` : `set up in ${name} at the first write`}
      </div>
      {c.state === 'paused' && paused && <Problem className="note note-warn" lead={paused.words.startsWith('Paused') ? '' : 'Paused:'} problem={paused} />}
      <dl className="crm-outbox" aria-label={`Activities for ${name}`}>
        <Count label="Pending" value={c.outbox.pending} />
        <Count label="Written" value={c.outbox.written} />
        <Count label="Skipped: no contact" value={c.outbox.skipped} />
        <Count label="Rejected" value={c.outbox.rejected} bad={c.outbox.rejected > 0} />
      </dl>
      <p className="small" style={{ margin: 0 }}>
        Last written: {c.lastWrittenAt ? when(c.lastWrittenAt) : <span className="muted">nothing yet</span>}
      </p>
      {lastError && <Problem className="small" lead="Last error:" problem={lastError} />}
      <p className="small" style={{ margin: 0 }}>
        Writes: {c.activities.length === CRM_ACTIVITY_KINDS.length ? 'every activity' : c.activities.map(activityName).join(', ')}
      </p>
      <CrmSettings workspaceId={workspaceId} connectionId={c.id} crm={name} />
      <CrmListEnroll workspaceId={workspaceId} connectionId={c.id} crm={name} />
      <ErrorNote error={error} />
      <div className="row">
        {reauthorize && (
          <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void reauthorizeNow()}>
            Re-authorize {name}
          </button>
        )}
        {c.state === 'active' ? (
          <button type="button" className="btn" disabled={busy} onClick={() => void patch({ state: 'paused' }, `${name} paused: activities queue until you resume it.`, 'paused')}>
            Pause
          </button>
        ) : (
          <button type="button" className="btn" disabled={busy} onClick={() => void patch({ state: 'active' }, `${name} resumed: the queued activities are written now.`, 'active')}>
            Resume
          </button>
        )}
        <button type="button" className="btn btn-quiet" aria-expanded={open === 'activities'} onClick={() => setOpen(open === 'activities' ? undefined : 'activities')}>
          Change activities
        </button>
        <button type="button" className="btn btn-quiet" aria-expanded={open === 'token'} onClick={() => setOpen(open === 'token' ? undefined : 'token')}>
          Replace token
        </button>
        <button type="button" className="btn btn-danger-quiet" onClick={() => setOpen('disconnect')}>
          Disconnect
        </button>
      </div>
      {open === 'activities' && (
        <ActivitiesForm
          name={name}
          initial={c.activities}
          busy={busy}
          onCancel={() => setOpen(undefined)}
          onSave={async (activities) => (await patch({ activities: activities as Activity[] }, `${name} now writes: ${activities.map(activityName).join(', ')}.`, c.state)) && setOpen(undefined)}
        />
      )}
      {open === 'token' && (
        <TokenForm kind={c.kind} name={name} busy={busy} onCancel={() => setOpen(undefined)} onSave={async (token) => (await patch({ token }, `${name}'s token replaced; the connection is active.`, 'active')) && setOpen(undefined)} />
      )}
      {open === 'disconnect' && (
        <ConfirmDisconnect
          workspaceId={workspaceId}
          c={c}
          name={name}
          onClose={(outcome) => {
            setOpen(undefined);
            if (outcome === 'done') {
              said({ text: `${name} disconnected. What was written stays in ${name}.` });
              changed();
            } else if (outcome) setError(outcome.error);
          }}
        />
      )}
    </article>
  );
}

/** The CRM's badge in place of its logo: its capitals (HubSpot: HS), else its first letter. */
function monogram(name: string): string {
  const caps = name.replace(/[^A-Z]/g, '');
  return caps.length >= 2 ? caps.slice(0, 2) : name.charAt(0).toUpperCase();
}

function Count({ label, value, bad }: { label: string; value: number; bad?: boolean }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd className={bad ? 'text-bad' : undefined}>{value.toLocaleString()}</dd>
    </div>
  );
}

/** A problem in plain words; what the CRM answered, behind a disclosure ("Plain words first", docs/web.md). */
function Problem({ className, lead, problem }: { className: string; lead: string; problem: { words: string; said?: string } }) {
  return (
    <div className={className}>
      {lead && <span className="strong">{lead} </span>}
      {problem.words}
      {problem.said && (
        <details>
          <summary>What the CRM said</summary>
          <span className="small">{problem.said}</span>
        </details>
      )}
    </div>
  );
}

function ActivityChecks({ legend, value, onChange }: { legend: string; value: string[]; onChange: (v: string[]) => void }) {
  return (
    <fieldset className="crm-activities">
      <legend>{legend}</legend>
      {CRM_ACTIVITY_KINDS.map((k) => (
        <label key={k} className="check small">
          <input type="checkbox" checked={value.includes(k)} onChange={(e) => onChange(e.target.checked ? [...value, k] : value.filter((x) => x !== k))} /> {activityName(k)}
        </label>
      ))}
    </fieldset>
  );
}

function ActivitiesForm({ name, initial, busy, onSave, onCancel }: { name: string; initial: string[]; busy: boolean; onSave: (a: string[]) => Promise<unknown>; onCancel: () => void }) {
  const [value, setValue] = useState(initial);
  return (
    <form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        void onSave(CRM_ACTIVITY_KINDS.filter((k) => value.includes(k)));
      }}
    >
      <ActivityChecks legend={`Activities written to ${name}`} value={value} onChange={setValue} />
      {value.length === 0 && <p className="small text-warn">Choose at least one, or pause the connection.</p>}
      <div className="row">
        <SubmitButton busy={busy} busyText="Saving…" disabled={value.length === 0}>
          Save activities
        </SubmitButton>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function TokenForm({ kind, name, busy, onSave, onCancel }: { kind: string; name: string; busy: boolean; onSave: (token: string) => Promise<unknown>; onCancel: () => void }) {
  const [token, setToken] = useState('');
  return (
    <form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        void onSave(token.trim());
      }}
    >
      <Field label={`New token for ${name}`} hint={`${TOKEN_HINTS[kind] ?? ''} Stored encrypted, never shown again; a paused connection resumes with it.`.trim()}>
        <input type="password" required autoComplete="off" maxLength={4000} value={token} onChange={(e) => setToken(e.target.value)} className="input-wide" />
      </Field>
      <div className="row">
        <SubmitButton busy={busy} busyText="Saving…" disabled={!token.trim()}>
          Save token
        </SubmitButton>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Disconnecting deletes the token and the queue: a modal dialog, focus on Cancel (as EraseSubject.tsx). */
function ConfirmDisconnect({ workspaceId, c, name, onClose }: { workspaceId: string; c: CrmConnection; name: string; onClose: (outcome?: 'done' | { error: string }) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const outcome = useRef<'done' | { error: string }>(undefined);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    cancel.current?.focus();
  }, []);
  const disconnect = async () => {
    setBusy(true);
    try {
      await call('DELETE /api/workspaces/:workspaceId/crm/connections/:connectionId', ws(workspaceId, `crm/connections/${c.id}`));
      outcome.current = 'done';
    } catch (e) {
      outcome.current = { error: errorMessage(e) };
    }
    dialog.current?.close();
  };
  const titleId = `crm-disconnect-${c.id}`;
  return (
    <dialog ref={dialog} className="dialog" aria-labelledby={titleId} onCancel={(e) => busy && e.preventDefault()} onClose={() => onClose(outcome.current)}>
      <div className="stack">
        <h2 id={titleId}>Disconnect {name}?</h2>
        <p style={{ margin: 0 }}>
          Cadenza forgets the token{c.outbox.pending > 0 ? ` and drops the ${c.outbox.pending.toLocaleString()} ${c.outbox.pending === 1 ? 'activity' : 'activities'} not written yet` : ''}. What was
          written stays in {name}. Connecting again starts from new activities.
        </p>
        <div className="row">
          <button type="button" className="btn btn-danger" onClick={() => void disconnect()} disabled={busy}>
            {busy ? 'Disconnecting…' : `Disconnect ${name}`}
          </button>
          <button ref={cancel} type="button" className="btn" onClick={() => dialog.current?.close()} disabled={busy}>
            Cancel
          </button>
        </div>
      </div>
    </dialog>
  );
}

/** The API's refusal of a connection in the form's words (the address is checked by the webhook destination rules). */
function connectError(e: unknown): string {
  const m = errorMessage(e).replace(/a webhook URL/g, 'the API address').replace(/^Base url: /, 'API address: ');
  return m.charAt(0).toUpperCase() + m.slice(1);
}

function ConnectForm({ workspaceId, available, oauth, connected, onConnected }: { workspaceId: string; available: string[]; oauth: OAuthKind[]; connected: string[]; onConnected: (c: CrmConnection) => void }) {
  // Every kind the server names, then any it has a connector for that this app does not know yet.
  const kinds = [...CRM_KINDS, ...available.filter((k) => !(CRM_KINDS as readonly string[]).includes(k))];
  const can = (k: string) => available.includes(k) && !connected.includes(k);
  const first = kinds.find(can) ?? '';
  const [kind, setKind] = useState(first);
  const [baseUrl, setBaseUrl] = useState(DEFAULT_BASE_URLS[first as keyof typeof DEFAULT_BASE_URLS] ?? '');
  const [token, setToken] = useState('');
  const [activities, setActivities] = useState<string[]>([...CRM_ACTIVITY_KINDS]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  // A connection made or removed elsewhere: keep the choice on a kind that can still be connected.
  useEffect(() => {
    if (!can(kind)) choose(first);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [first]);
  const choose = (k: string) => {
    setKind(k);
    setBaseUrl(DEFAULT_BASE_URLS[k as keyof typeof DEFAULT_BASE_URLS] ?? '');
    setError(undefined);
  };
  const name = kind ? crmName(kind) : 'a CRM';
  const withOAuth = oauth.includes(kind as OAuthKind);
  const connectWithOAuth = async () => {
    setBusy(true);
    setError(undefined);
    try {
      // HubSpot's answer names no API address: the one in the form (its default, or a proxy's) goes with the flow.
      await startOAuth(workspaceId, kind as OAuthKind, kind === 'hubspot' && baseUrl.trim() ? baseUrl.trim() : undefined);
    } catch (err) {
      setError(connectError(err));
      setBusy(false);
    }
  };
  const coming = kinds.filter((k) => !available.includes(k));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const made = await call('POST /api/workspaces/:workspaceId/crm/connections', ws(workspaceId, 'crm/connections'), {
        kind: kind as ConnectBody['kind'],
        token: token.trim(),
        ...(baseUrl.trim() ? { baseUrl: baseUrl.trim() } : {}),
        activities: CRM_ACTIVITY_KINDS.filter((k) => activities.includes(k)),
      });
      setToken('');
      onConnected(made);
    } catch (err) {
      setError(connectError(err));
    } finally {
      setBusy(false);
    }
  };
  const urlHint =
    kind === 'salesforce'
      ? "Your org's instance URL, e.g. https://yourcompany.my.salesforce.com (required)."
      : kind === 'twenty'
        ? "Twenty's cloud, or your self-hosted Twenty's address."
        : `${name}'s API; change it only for a proxy or a test account.`;
  return (
    <form className="stack crm-connect" onSubmit={submit} aria-labelledby="crm-connect-title">
      <h3 id="crm-connect-title">Connect a CRM</h3>
      {coming.length > 0 && <p className="muted small">Coming in a later version: {coming.map(crmName).join(', ')}.</p>}
      {!first ? (
        <p className="muted small">{available.length === 0 ? 'No CRM can be connected on this version.' : 'Every CRM available here is connected.'}</p>
      ) : (
        <>
          <div className="grid-2">
            <Field label="CRM">
              <select value={kind} onChange={(e) => choose(e.target.value)}>
                {kinds.map((k) => (
                  <option key={k} value={k} disabled={!can(k)}>
                    {crmName(k)}
                    {!available.includes(k) ? ' (coming)' : connected.includes(k) ? ' (connected)' : ''}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="API address" hint={withOAuth && kind !== 'hubspot' ? `With “Connect with ${name}”, ${name} tells Cadenza its address. ${urlHint}` : urlHint}>
              <input type="url" required={!withOAuth && !DEFAULT_BASE_URLS[kind as keyof typeof DEFAULT_BASE_URLS]} value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder={kind === 'salesforce' ? 'https://yourcompany.my.salesforce.com' : undefined} />
            </Field>
          </div>
          {withOAuth && (
            <div className="stack">
              <div>
                <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void connectWithOAuth()}>
                  Connect with {name}
                </button>
              </div>
              <p className="muted small" style={{ margin: 0 }}>
                You sign in to {name} and allow Cadenza; nothing to copy. Every activity is written; change which afterwards. Or paste a token below.
              </p>
            </div>
          )}
          <Field label={withOAuth ? `Or connect with a token` : kind === 'salesforce' ? 'Credential (JSON)' : 'Token'} hint={`${TOKEN_HINTS[kind] ?? 'The API token.'} Stored encrypted, never shown again.`}>
            <input type="password" required autoComplete="off" maxLength={4000} value={token} onChange={(e) => setToken(e.target.value)} className="input-wide" />
          </Field>
          <ActivityChecks legend="Activities to write" value={activities} onChange={setActivities} />
          <ErrorNote error={error} />
          <div>
            <SubmitButton busy={busy} busyText="Connecting…" disabled={activities.length === 0}>
              {withOAuth ? `Connect ${name} with the token` : `Connect ${name}`}
            </SubmitButton>
          </div>
        </>
      )}
    </form>
  );
}
