import { useEffect, useState } from 'react';
import { api, call, errorMessage, ws, type Me } from '../api.ts';
import type { TrackingHost as Host } from '../types.ts';
import { CopyField } from '../ui/CopyField.tsx';
import { Badge, ErrorNote, Field, SubmitButton } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';

/**
 * The workspace's custom tracking host (docs/deliverability.md "Custom tracking domains"), on the
 * Domains screen: an admin sets `track.theirdomain.com`, sees the exact CNAME to publish, whether
 * it is verified, the certificate (issued, valid until, last renewal, what went wrong in words),
 * and asks for a check now. Members see it. The server's ACME job does the work
 * (src/tracking/domains/); this panel polls while it is under way.
 */

const STATE: Record<Host['state'], { label: string; tone: 'ok' | 'warn' | 'bad' | 'info' }> = {
  pending_dns: { label: 'waiting for the CNAME', tone: 'warn' },
  issuing: { label: 'obtaining a certificate', tone: 'info' },
  active: { label: 'active', tone: 'ok' },
  renewing: { label: 'renewing', tone: 'ok' },
  failed: { label: 'failed', tone: 'bad' },
};

/** A date a person reads ("12 Mar 2026, 14:05"), in their zone. */
function at(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

function HostForm({ workspaceId, current, onSaved, onCancel }: { workspaceId: string; current?: string; onSaved: () => void; onCancel?: () => void }) {
  const [host, setHost] = useState(current ?? '');
  const { busy, error, submit } = useSubmit(async () => {
    await call('PUT /api/workspaces/:workspaceId/tracking-domain', ws(workspaceId, 'tracking-domain'), { host: host.trim() });
    onSaved();
  });
  return (
    <form className="stack" onSubmit={submit}>
      <div className="row tracking-host-form">
        <Field label="Tracking host" hint="A name under your own domain, such as track.example.com; links in your mail will use it.">
          <input required value={host} onChange={(e) => setHost(e.target.value)} placeholder="track.example.com" maxLength={253} autoCapitalize="off" spellCheck={false} />
        </Field>
        <SubmitButton busy={busy} busyText="Saving…">
          {current ? 'Change host' : 'Set tracking host'}
        </SubmitButton>
        {onCancel && (
          <button type="button" className="btn btn-quiet" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      <ErrorNote error={error} />
    </form>
  );
}

/** Where the host stands, step by step: the CNAME, then the certificate. */
function HostStatus({ h }: { h: Host }) {
  const verified = h.state !== 'pending_dns';
  const c = h.certificate;
  const serving = h.state === 'active' || h.state === 'renewing';
  return (
    <dl className="facts tracking-facts">
      <div className="facts-row">
        <dt>CNAME</dt>
        <dd>{verified ? `verified: ${h.host} points to ${h.cnameTarget}` : 'not found yet: publish the record below, then check now'}</dd>
      </div>
      <div className="facts-row">
        <dt>Certificate</dt>
        <dd>{c ? (serving ? `issued, valid until ${at(c.notAfter)}` : `not served (it was valid until ${at(c.notAfter)})`) : h.state === 'issuing' ? 'being obtained' : 'none yet'}</dd>
      </div>
      {c && (
        <div className="facts-row">
          <dt>Issued or renewed</dt>
          <dd>{at(c.issuedAt ?? c.notBefore)}</dd>
        </div>
      )}
      <div className="facts-row">
        <dt>Links</dt>
        <dd>{serving ? `your mail's links use https://${h.host}` : "your mail's links use the server's own address until the certificate is issued"}</dd>
      </div>
      <div className="facts-row">
        <dt>Next check</dt>
        <dd>{at(h.nextCheckAt)}</dd>
      </div>
    </dl>
  );
}

export function TrackingHostPanel({ workspaceId }: { workspaceId: string }) {
  const me = useLoad(() => api<Me>('GET', '/api/auth/me'), []);
  const role = me.data?.workspaces.find((w) => w.id === workspaceId)?.role;
  const admin = role === 'owner' || role === 'admin';
  const got = useLoad(() => call('GET /api/workspaces/:workspaceId/tracking-domain', ws(workspaceId, 'tracking-domain')), [workspaceId]);
  const h = got.data?.domain ?? null;
  // While the job is at work the state moves within seconds to minutes; otherwise once a minute.
  const moving = h !== null && (h.state === 'pending_dns' || h.state === 'issuing');
  usePoll(got.reload, moving ? 5_000 : 60_000);
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState<'check' | 'remove'>();
  const [error, setError] = useState<string>();
  useEffect(() => setEditing(false), [h?.host]);
  const act = async (what: 'check' | 'remove', run: () => Promise<unknown>) => {
    setBusy(what);
    setError(undefined);
    try {
      await run();
      got.reload();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(undefined);
    }
  };
  const check = () => act('check', () => call('POST /api/workspaces/:workspaceId/tracking-domain/verify', ws(workspaceId, 'tracking-domain/verify')));
  const { ask, dialog } = useConfirm();
  const remove = async () => {
    if (!h || !(await ask({ title: `Remove ${h.host}?`, body: "Links go back to the server's own address and its certificate is forgotten.", action: 'Remove tracking host' }))) return;
    void act('remove', () => call('DELETE /api/workspaces/:workspaceId/tracking-domain', ws(workspaceId, 'tracking-domain')));
  };
  const enabled = got.data?.enabled ?? true;
  return (
    <section className="card stack tracking-host" aria-labelledby="tracking-host-title">
      <h2 id="tracking-host-title">Custom tracking host</h2>
      {dialog}
      <p className="muted small" style={{ margin: 0 }}>
        Open and click links under your own domain look more trustworthy to recipients and to spam filters than the server's shared address. Cadenza checks the CNAME, obtains an HTTPS certificate for the name and renews it.
      </p>
      <ErrorNote error={got.error ?? me.error ?? error} />
      {got.data && !enabled && <p className="note">Custom tracking hosts are off on this server: its operator turns them on (CADENZA_TRACKING_HTTPS_PORT).</p>}
      {got.data && !h && enabled && (admin ? <HostForm workspaceId={workspaceId} onSaved={got.reload} /> : <p className="muted">No custom tracking host yet; an owner or an admin sets one.</p>)}
      {h && (
        <>
          <div className="row">
            <span className="strong">{h.host}</span> <Badge tone={h.state === 'renewing' && h.reason ? 'warn' : STATE[h.state].tone}>{STATE[h.state].label}</Badge>
          </div>
          {h.reason && (
            <p className={`note ${h.state === 'failed' ? 'note-error' : ''}`} role="status">
              {h.reason}
            </p>
          )}
          <HostStatus h={h} />
          {(h.state === 'pending_dns' || h.state === 'failed') && (
            <div className="domain-publish">
              <div className="small">At your DNS provider, publish this CNAME record:</div>
              <CopyField label="CNAME name" value={h.host} copyLabel="Copy name" />
              <CopyField label="CNAME value" value={h.cnameTarget} copyLabel="Copy value" />
            </div>
          )}
          {admin && enabled && !editing && (
            <div className="row">
              <button type="button" className="btn btn-primary" onClick={() => void check()} disabled={busy !== undefined}>
                {busy === 'check' ? 'Checking…' : h.state === 'failed' ? 'Retry now' : 'Check now'}
              </button>
              <button type="button" className="btn" onClick={() => setEditing(true)} disabled={busy !== undefined}>
                Change host
              </button>
              <button type="button" className="btn btn-quiet" onClick={() => void remove()} disabled={busy !== undefined}>
                {busy === 'remove' ? 'Removing…' : 'Remove'}
              </button>
            </div>
          )}
          {admin && enabled && editing && <HostForm workspaceId={workspaceId} current={h.host} onSaved={got.reload} onCancel={() => setEditing(false)} />}
        </>
      )}
    </section>
  );
}
