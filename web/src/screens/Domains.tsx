import { useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { Domain, DomainAlert, DomainCheck } from '../types.ts';
import { CopyField } from '../ui/CopyField.tsx';
import { Badge, Empty, ErrorNote, PageHeader, TableHead, when } from '../ui/parts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';
import { TrackingHostPanel } from './TrackingHost.tsx';
import { CsvButton } from '../ui/CsvButton.tsx';

/**
 * Domains (issue 14): each domain the workspace sends from, and its tracking host, with a chip per
 * check (SPF, DKIM, DMARC, MX, tracking CNAME, blocklists), what is wrong in words, the exact record
 * to publish with a Copy button, and a re-check button. A table at desktop widths, cards on a phone
 * (styles.css .domains-table / .domain-cards). Alerts (a domain that broke or recovered) on top.
 */

const verdictTone = { ok: 'ok', broken: 'bad', unknown: 'warn' } as const;
const checkTone: Record<DomainCheck['status'], 'ok' | 'warn' | 'bad' | 'muted'> = { ok: 'ok', missing: 'bad', differs: 'bad', listed: 'bad', refused: 'warn', unchecked: 'muted', error: 'warn' };
const KIND: Record<DomainCheck['kind'], string> = { spf: 'SPF', dkim: 'DKIM', dmarc: 'DMARC', mx: 'MX', tracking: 'CNAME', certificate: 'Certificate', blocklist: 'Blocklist' };

/** One chip per kind: the worst status among that kind's checks (DKIM has one per selector, blocklists one per list and address). */
function chips(d: Domain): Array<{ kind: DomainCheck['kind']; status: DomainCheck['status']; count: number }> {
  const order: DomainCheck['status'][] = ['ok', 'unchecked', 'refused', 'error', 'differs', 'missing', 'listed'];
  const by = new Map<DomainCheck['kind'], { status: DomainCheck['status']; count: number }>();
  for (const c of d.checks) {
    const prev = by.get(c.kind);
    if (!prev) by.set(c.kind, { status: c.status, count: 1 });
    else by.set(c.kind, { status: order.indexOf(c.status) > order.indexOf(prev.status) ? c.status : prev.status, count: prev.count + 1 });
  }
  return [...by.entries()].map(([kind, v]) => ({ kind, ...v }));
}

function Chips({ d }: { d: Domain }) {
  if (d.verdict === null) return <span className="muted small">Not checked yet</span>;
  return (
    <div className="chips">
      {chips(d).map((c) => (
        <Badge key={c.kind} tone={checkTone[c.status]}>
          {KIND[c.kind]} {c.status}
        </Badge>
      ))}
    </div>
  );
}

/** What is wrong, check by check, with the record to publish. */
function Problems({ d }: { d: Domain }) {
  const bad = d.checks.filter((c) => c.status !== 'ok');
  if (bad.length === 0) return null;
  return (
    <ul className="domain-problems">
      {bad.map((c) => (
        <li key={`${c.kind}:${c.name}`}>
          <div>
            <Badge tone={checkTone[c.status]}>{c.status}</Badge> <span className="strong">{KIND[c.kind]}</span> <code className="small">{c.name}</code>
          </div>
          {c.differences.map((x) => (
            <div key={x} className="small">
              {x}
            </div>
          ))}
          {c.published.length > 0 && c.kind !== 'blocklist' && <div className="small muted">Published now: {c.published.join(' | ')}</div>}
          {c.publish && (
            <div className="domain-publish">
              <div className="small">
                Publish a {c.publish.type} record{c.publish.note ? ` (${c.publish.note})` : ''}:
              </div>
              <CopyField label={`${c.publish.type} name`} value={c.publish.name} copyLabel="Copy name" />
              <CopyField label={`${c.publish.type} value`} value={c.publish.value} copyLabel="Copy value" />
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

function Recheck({ d, busy, onClick, disabled }: { d: Domain; busy: boolean; onClick: () => void; disabled: boolean }) {
  return (
    <button type="button" className="btn" onClick={onClick} disabled={busy || disabled} aria-label={`Re-check ${d.domain}`}>
      {busy ? 'Checking…' : 'Re-check'}
    </button>
  );
}

function Alerts({ alerts, onSeen }: { alerts: DomainAlert[]; onSeen: () => void }) {
  const unseen = alerts.filter((a) => !a.seen);
  if (unseen.length === 0) return null;
  return (
    <section className="card domain-alerts" aria-label="Domain alerts">
      {unseen.slice(0, 10).map((a) => (
        <p key={a.id} className={`note ${a.to === 'broken' ? 'note-error' : 'note-ok'}`} role="status">
          {when(a.at)}: {a.domain} {a.to === 'broken' ? `broke (${a.failing.map((f) => `${KIND[f.kind as DomainCheck['kind']] ?? f.kind} ${f.status}`).join(', ')})` : 'is healthy again'}
        </p>
      ))}
      <button type="button" className="btn" onClick={onSeen}>
        Mark read
      </button>
    </section>
  );
}

export function Domains({ workspaceId }: ScreenProps) {
  const list = useLoad(() => call('GET /api/workspaces/:workspaceId/domains', ws(workspaceId, 'domains')), [workspaceId]);
  const alerts = useLoad(() => call('GET /api/workspaces/:workspaceId/domains/alerts', ws(workspaceId, 'domains/alerts')), [workspaceId]);
  usePoll(list.reload, 60_000);
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const domains = list.data?.domains ?? [];
  const enabled = list.data?.checksEnabled ?? true;
  const recheck = async (d: Domain) => {
    setBusy(d.domain);
    setError(undefined);
    try {
      await call('POST /api/workspaces/:workspaceId/domains/recheck', ws(workspaceId, 'domains/recheck'), { domain: d.domain });
      list.reload();
      alerts.reload();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(undefined);
    }
  };
  const seen = async () => {
    const top = alerts.data?.alerts[0];
    if (!top) return;
    try {
      await call('POST /api/workspaces/:workspaceId/domains/alerts/seen', ws(workspaceId, 'domains/alerts/seen'), { upToId: top.id });
      alerts.reload();
      list.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const label = (d: Domain) => (d.purpose === 'tracking' ? 'Tracking host' : 'Sending domain');
  return (
    <>
      <PageHeader title="Domains" />
      <p className="muted small">
        The domains your mailboxes send from, and your tracking host, checked every day. A domain that breaks raises an alert here and a domain.health_changed webhook.
      </p>
      {!enabled && <p className="note">Domain checks are off on this server: the results shown are the last ones stored.</p>}
      <Alerts alerts={alerts.data?.alerts ?? []} onSeen={() => void seen()} />
      <ErrorNote error={list.error ?? alerts.error ?? error} />
      <TrackingHostPanel workspaceId={workspaceId} />
      {!list.loading && domains.length === 0 && <Empty>No domain yet: connect a mailbox, and its domain is checked here.</Empty>}
      {domains.length > 0 && (
        <>
          <table className="table domains-table">
            <TableHead columns={['Domain', 'Health', 'Checks', 'Checked']} />
            <tbody>
              {domains.map((d) => (
                <tr key={`${d.purpose}:${d.domain}`}>
                  <td>
                    <div className="strong">{d.domain}</div>
                    <div className="muted small">{label(d)}</div>
                  </td>
                  <td>{d.verdict ? <Badge tone={verdictTone[d.verdict]}>{d.verdict}</Badge> : <Badge tone="muted">pending</Badge>}</td>
                  <td>
                    <Chips d={d} />
                    <Problems d={d} />
                  </td>
                  <td className="small">{d.checkedAt ? when(d.checkedAt) : '—'}</td>
                  <td className="actions">
                    <Recheck d={d} busy={busy === d.domain} disabled={!enabled} onClick={() => void recheck(d)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CsvButton
            what="the domains"
            filename="domains.csv"
            header={['Domain', 'Purpose', 'Health', 'Checks', 'Checked at']}
            rows={domains.map((d) => [d.domain, label(d), d.verdict ?? 'pending', chips(d).map((c) => `${KIND[c.kind] ?? c.kind} ${c.status}`).join('; '), d.checkedAt])}
          />
          <div className="domain-cards">
            {domains.map((d) => (
              <section key={`${d.purpose}:${d.domain}`} className="card" aria-label={d.domain}>
                <div className="row">
                  <span className="strong">{d.domain}</span> {d.verdict ? <Badge tone={verdictTone[d.verdict]}>{d.verdict}</Badge> : <Badge tone="muted">pending</Badge>}
                </div>
                <div className="muted small">
                  {label(d)}
                  {d.checkedAt ? `, checked ${when(d.checkedAt)}` : ''}
                </div>
                <Chips d={d} />
                <Problems d={d} />
                <Recheck d={d} busy={busy === d.domain} disabled={!enabled} onClick={() => void recheck(d)} />
              </section>
            ))}
          </div>
        </>
      )}
    </>
  );
}
