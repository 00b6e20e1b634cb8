import { useEffect, useState, type FormEvent } from 'react';
import { api, call, errorMessage, ws, type Me } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { Member, WorkspaceSettings } from '../types.ts';
import { Badge, ErrorNote, Field, PageHeader, SettingsFormEnd } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { ApiKeys } from './ApiKeys.tsx';
import { AuditLog } from './AuditLog.tsx';
import { Integrations } from './Integrations.tsx';
import { Invitations } from './Invitations.tsx';
import { NotificationSettings } from './NotificationSettings.tsx';
import { PacingForm } from './PacingForm.tsx';
import { Privacy } from './Privacy.tsx';
import { SingleSignOn } from './SingleSignOn.tsx';
import { Webhooks } from './Webhooks.tsx';
import { CsvButton } from '../ui/CsvButton.tsx';

/** The workspace's settings and its people; admins change them, members read them. */
export function Settings({ workspaceId }: ScreenProps) {
  const me = useLoad(() => api<Me>('GET', '/api/auth/me'), []);
  const role = me.data?.workspaces.find((w) => w.id === workspaceId)?.role;
  const admin = role === 'owner' || role === 'admin';
  return (
    <>
      <PageHeader title="Settings" />
      <ErrorNote error={me.error} />
      <WorkspaceForm workspaceId={workspaceId} admin={admin} />
      <PacingForm url={ws(workspaceId, 'pacing')} title="Mailbox pacing defaults" canEdit={admin} inheritsFrom="the built-in default" />
      <Members workspaceId={workspaceId} admin={admin} owner={role === 'owner'} />
      <NotificationSettings workspaceId={workspaceId} />
      {admin && role && <Invitations workspaceId={workspaceId} role={role} />}
      {admin && <ApiKeys workspaceId={workspaceId} />}
      {admin && <Webhooks workspaceId={workspaceId} />}
      {admin && <Integrations workspaceId={workspaceId} />}
      {admin && <SingleSignOn workspaceId={workspaceId} />}
      {role && <Privacy workspaceId={workspaceId} admin={admin} />}
      {admin && <AuditLog workspaceId={workspaceId} />}
    </>
  );
}

function WorkspaceForm({ workspaceId, admin }: { workspaceId: string; admin: boolean }) {
  const s = useLoad(() => api<WorkspaceSettings>('GET', ws(workspaceId, 'settings')), [workspaceId]);
  const [f, setF] = useState({ name: '', timeZone: '', holidaysCountry: '', trackingDomain: '', auditRetentionDays: '', dkimSelector: '', callRecording: false, callRecordingRetentionDays: '' });
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (s.data) setF({ name: s.data.name, timeZone: s.data.timeZone, holidaysCountry: s.data.holidaysCountry ?? '', trackingDomain: s.data.trackingDomain ?? '', auditRetentionDays: String(s.data.auditRetentionDays), dkimSelector: s.data.dkimSelector ?? '', callRecording: s.data.callRecording, callRecordingRetentionDays: String(s.data.callRecordingRetentionDays) });
  }, [s.data]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setSaved(undefined);
    try {
      await call('PATCH /api/workspaces/:workspaceId/settings', ws(workspaceId, 'settings'), {
        name: f.name,
        timeZone: f.timeZone,
        holidaysCountry: f.holidaysCountry.trim() ? f.holidaysCountry.trim().toUpperCase() : null,
        trackingDomain: f.trackingDomain.trim() || null,
        auditRetentionDays: Number(f.auditRetentionDays),
        dkimSelector: f.dkimSelector.trim() || null,
        callRecording: f.callRecording,
        callRecordingRetentionDays: Number(f.callRecordingRetentionDays),
      });
      setSaved('Settings saved.');
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const text = (k: Exclude<keyof typeof f, 'callRecording'>) => (e: React.ChangeEvent<HTMLInputElement>) => setF({ ...f, [k]: e.target.value });
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="settings-workspace">
      <h2 id="settings-workspace">Workspace</h2>
      <ErrorNote error={s.error} />
      <fieldset disabled={!admin || !s.data} className="grid-2 plain-fieldset">
        <Field label="Workspace name">
          <input required value={f.name} onChange={text('name')} />
        </Field>
        <Field label="Time zone" hint="Reports and the default send day; e.g. Europe/Paris.">
          <input required value={f.timeZone} onChange={text('timeZone')} />
        </Field>
        <Field label="Holidays country" hint="Two letters, e.g. FR: business-day delays skip its public holidays. Empty: none.">
          <input value={f.holidaysCountry} onChange={text('holidaysCountry')} maxLength={2} />
        </Field>
        <Field label="Tracking domain" hint="A CNAME to this server for open and click links; empty: the server's public URL.">
          <input value={f.trackingDomain} onChange={text('trackingDomain')} />
        </Field>
        <Field label="DKIM selector" hint="The selector your SMTP mailboxes' host signs with (s= in a sent message's DKIM-Signature), so Domains can check DKIM. Empty: not checked.">
          <input value={f.dkimSelector} onChange={text('dkimSelector')} maxLength={63} />
        </Field>
        <Field label="Audit retention (days)" hint="How long the audit log keeps an event: 30 to 3650 days.">
          <input type="number" required min={30} max={3650} value={f.auditRetentionDays} onChange={text('auditRetentionDays')} />
        </Field>
        <Field label="Record calls" hint="Softphone calls are recorded and the prospect hears a consent announcement; check the law where you call (docs/dialer.md). Applies to credentials issued after saving.">
          <input type="checkbox" checked={f.callRecording} onChange={(e) => setF({ ...f, callRecording: e.target.checked })} />
        </Field>
        <Field label="Call recording retention (days)" hint="How long a recording is kept: 1 to 3650 days.">
          <input type="number" required min={1} max={3650} value={f.callRecordingRetentionDays} onChange={text('callRecordingRetentionDays')} />
        </Field>
      </fieldset>
      <SettingsFormEnd error={error} saved={saved} canEdit={admin}>
        <button type="submit" className="btn btn-primary" disabled={busy || !s.data}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
      </SettingsFormEnd>
    </form>
  );
}

function Members({ workspaceId, admin, owner }: { workspaceId: string; admin: boolean; owner: boolean }) {
  const list = useLoad(() => api<{ members: Member[] }>('GET', ws(workspaceId, 'members')), [workspaceId]);
  const [error, setError] = useState<string>();
  const change = async (m: Member, patch: Partial<Pick<Member, 'role' | 'inboxScope' | 'phoneNumber'>>): Promise<boolean> => {
    setError(undefined);
    try {
      await call('PATCH /api/workspaces/:workspaceId/members/:memberId', ws(workspaceId, `members/${m.id}`), patch);
      list.reload();
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    }
  };
  const members = list.data?.members ?? [];
  return (
    <section className="card stack" aria-labelledby="settings-members">
      <h2 id="settings-members">Members</h2>
      <p className="muted small" style={{ margin: 0 }}>A member reads the replies of their own mailboxes only, unless their inbox is set to every mailbox; admins and owners read all.</p>
      <p className="muted small" style={{ margin: 0 }}>A phone number is the member's number on your SIP trunk: the caller ID of the calls they place, and calls to it ring their browser. Write it as the carrier gave it, with + and the country code.</p>
      <ErrorNote error={list.error ?? error} />
      {members.length > 0 && (
        <>
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Role</th>
                <th scope="col">Inbox</th>
                <th scope="col">Phone number</th>
              </tr>
            </thead>
            <tbody>
              {members.map((m) => {
                const who = m.name ?? m.email;
                return (
                  <tr key={m.id}>
                    <td>
                      <div className="strong">{who}</div>
                      <div className="muted small">{m.email}</div>
                      {!m.canSignIn && <Badge tone="muted">cannot sign in</Badge>}
                    </td>
                    <td>
                      {admin && (owner || m.role !== 'owner') ? (
                        <select value={m.role} onChange={(e) => void change(m, { role: e.target.value as Member['role'] })} aria-label={`Role of ${who}`}>
                          {owner && <option value="owner">Owner</option>}
                          <option value="admin">Admin</option>
                          <option value="member">Member</option>
                        </select>
                      ) : (
                        m.role
                      )}
                    </td>
                    <td>
                      {m.role !== 'member' ? (
                        <span className="muted">every mailbox</span>
                      ) : admin ? (
                        <select value={m.inboxScope} onChange={(e) => void change(m, { inboxScope: e.target.value as Member['inboxScope'] })} aria-label={`Inbox of ${who}`}>
                          <option value="own">Their own mailboxes</option>
                          <option value="all">Every mailbox</option>
                        </select>
                      ) : m.inboxScope === 'all' ? (
                        'every mailbox'
                      ) : (
                        'their own mailboxes'
                      )}
                    </td>
                    <td>{admin ? <PhoneNumberField member={m} who={who} save={(phoneNumber) => change(m, { phoneNumber })} /> : (m.phoneNumber ?? <span className="muted">none</span>)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <CsvButton
            what="the members"
            filename="members.csv"
            header={['Name', 'Email', 'Role', 'Inbox', 'Phone number', 'Can sign in']}
            rows={members.map((m) => [m.name, m.email, m.role, m.role === 'member' ? m.inboxScope : 'all', m.phoneNumber, m.canSignIn ? 'yes' : 'no'])}
          />
        </>
      )}
    </section>
  );
}

/** A member's trunk number: saved on Enter or Save, cleared by saving it empty. */
function PhoneNumberField({ member, who, save }: { member: Member; who: string; save: (phoneNumber: string | null) => Promise<boolean> }) {
  const [value, setValue] = useState(member.phoneNumber ?? '');
  const [busy, setBusy] = useState(false);
  useEffect(() => setValue(member.phoneNumber ?? ''), [member.phoneNumber]);
  const changed = value.trim() !== (member.phoneNumber ?? '');
  return (
    <form
      className="row"
      onSubmit={(e) => {
        e.preventDefault();
        if (!changed) return;
        setBusy(true);
        void save(value.trim() === '' ? null : value.trim()).finally(() => setBusy(false));
      }}
    >
      <input type="tel" value={value} onChange={(e) => setValue(e.target.value)} placeholder="+44 20 7946 0123" aria-label={`Phone number of ${who}`} autoComplete="off" maxLength={64} style={{ maxWidth: '12rem' }} />
      {changed && (
        <button type="submit" className="btn" disabled={busy} aria-label={`Save the phone number of ${who}`}>
          {busy ? 'Saving…' : 'Save'}
        </button>
      )}
    </form>
  );
}
