import { useState, type FormEvent } from 'react';
import { api, ws } from '../api.ts';
import { Empty, ErrorNote, Field, TableHead, when } from '../ui/parts.tsx';
import type { AuditEvent } from '../types.ts';
import { useLoad } from '../ui/use-load.ts';

/** The groups of actions a person filters by, in plain words. */
const GROUPS: Array<[string, string]> = [
  ['', 'Everything'],
  ['signin', 'Sign-ins'],
  ['member', 'Members and roles'],
  ['invitation', 'Invitations'],
  ['api_key', 'API keys'],
  ['mailbox', 'Mailboxes'],
  ['export', 'Exports'],
  ['settings', 'Settings'],
  ['suppression', 'Suppressions'],
];

const WORDS: Record<string, string> = {
  'signin.succeeded': 'Signed in',
  'signin.failed': 'Sign-in failed',
  'member.added': 'Member added',
  'member.removed': 'Member removed',
  'member.role_changed': 'Role changed',
  'member.phone_number_changed': 'Phone number changed',
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'invitation.sent': 'Invitation sent',
  'invitation.accepted': 'Invitation accepted',
  'invitation.revoked': 'Invitation withdrawn',
  'mailbox.connected': 'Mailbox connected',
  'mailbox.removed': 'Mailbox removed',
  'export.downloaded': 'Export downloaded',
  'settings.changed': 'Settings changed',
  'crm.connected': 'CRM connected',
  'crm.changed': 'CRM connection changed',
  'crm.disconnected': 'CRM disconnected',
  'crm.settings_changed': 'CRM field ownership or stop rules changed',
  'crm.list_enrolled': 'CRM list enrolled in a sequence',
  'suppression.lifted': 'Suppression lifted',
  'leads.bulk_stopped': "Leads' sequences stopped in bulk",
  'leads.bulk_deleted': 'Leads deleted in bulk',
};

type Filter = { action: string; actor: string; from: string; to: string };

function queryOf(f: Filter, before?: string): string {
  const q = new URLSearchParams();
  if (f.action) q.set('action', f.action);
  if (f.actor.trim()) q.set('actor', f.actor.trim());
  // Dates from the inputs are whole days in the viewer's zone.
  if (f.from) q.set('from', new Date(`${f.from}T00:00`).toISOString());
  if (f.to) q.set('to', new Date(new Date(`${f.to}T00:00`).getTime() + 86_400_000).toISOString());
  if (before) q.set('before', before);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The workspace's audit log for admins: who signed in, changed people, keys, mailboxes and settings. */
export function AuditLog({ workspaceId }: { workspaceId: string }) {
  const [draft, setDraft] = useState<Filter>({ action: '', actor: '', from: '', to: '' });
  const [filter, setFilter] = useState<Filter>(draft);
  const [pages, setPages] = useState<string[]>([]);
  const before = pages[pages.length - 1];
  const log = useLoad(() => api<{ events: AuditEvent[]; nextBefore: string | null }>('GET', ws(workspaceId, `audit-log${queryOf(filter, before)}`)), [workspaceId, filter, before]);
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setPages([]);
    setFilter(draft);
  };
  const events = log.data?.events ?? [];
  return (
    <section className="card stack" aria-labelledby="settings-audit">
      <h2 id="settings-audit">Audit log</h2>
      <form className="row" onSubmit={apply} style={{ alignItems: 'flex-end', flexWrap: 'wrap' }} aria-label="Filter the audit log">
        <Field label="What">
          <select value={draft.action} onChange={(e) => setDraft({ ...draft, action: e.target.value })}>
            {GROUPS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Who">
          <input type="search" placeholder="address or key name" value={draft.actor} onChange={(e) => setDraft({ ...draft, actor: e.target.value })} />
        </Field>
        <Field label="From">
          <input type="date" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        </Field>
        <Field label="To">
          <input type="date" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </Field>
        <button type="submit" className="btn">
          Filter
        </button>
        <a className="btn btn-quiet" href={ws(workspaceId, `audit-log.csv${queryOf(filter)}`)} download>
          Download CSV
        </a>
      </form>
      <ErrorNote error={log.error} />
      {log.data && events.length === 0 ? (
        <Empty>Nothing recorded{filter.action || filter.actor || filter.from || filter.to ? ' for this filter' : ''}.</Empty>
      ) : (
        <table className="table" aria-label="Audit events">
          <TableHead columns={['When', 'What', 'Who', 'About']} />
          <tbody>
            {events.map((e) => (
              <tr key={e.id}>
                <td className="nowrap">{when(e.at)}</td>
                <td>{WORDS[e.action] ?? e.action}</td>
                <td>
                  <div>{e.actor}</div>
                  {e.ip && <div className="muted small">from {e.ip}</div>}
                </td>
                <td>
                  <div>{e.target ?? '—'}</div>
                  {Object.keys(e.detail).length > 0 && (
                    <details>
                      <summary className="muted small">Details</summary>
                      <code className="small">{JSON.stringify(e.detail)}</code>
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="row">
        {pages.length > 0 && (
          <button type="button" className="btn btn-quiet" onClick={() => setPages(pages.slice(0, -1))}>
            Newer
          </button>
        )}
        {log.data?.nextBefore && (
          <button type="button" className="btn btn-quiet" onClick={() => setPages([...pages, log.data!.nextBefore!])}>
            Older
          </button>
        )}
      </div>
      <p className="muted small" style={{ margin: 0 }}>
        Kept for the number of days set under Workspace (audit retention); nothing in it can be edited or deleted.
      </p>
    </section>
  );
}
