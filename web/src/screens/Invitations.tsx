import { useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import { CopyField } from '../ui/CopyField.tsx';
import { Badge, Empty, ErrorNote, Field, SubmitButton, TableHead, when } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import type { Invitation, InvitationCreated as Created } from '../types.ts';
import { useLoad } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';
import { CsvButton } from '../ui/CsvButton.tsx';

type Role = 'owner' | 'admin' | 'member' | 'viewer';

const ROLES: Role[] = ['viewer', 'member', 'admin', 'owner'];
const rank: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/**
 * Inviting people by email (admins): the invitation is emailed when the server has a mailer; when
 * it has none, or sending failed, the link is shown to copy and pass on.
 */
export function Invitations({ workspaceId, role }: { workspaceId: string; role: Role }) {
  const list = useLoad(() => api<{ invitations: Invitation[] }>('GET', ws(workspaceId, 'invitations')), [workspaceId]);
  const [f, setF] = useState<{ email: string; role: Role }>({ email: '', role: 'member' });
  const [created, setCreated] = useState<Created>();
  const { busy, error, setError, submit } = useSubmit(async () => {
    setCreated(undefined);
    setCreated(await call('POST /api/workspaces/:workspaceId/invitations', ws(workspaceId, 'invitations'), f));
    setF({ ...f, email: '' });
    list.reload();
  });
  const { ask, dialog } = useConfirm();
  const revoke = async (i: Invitation) => {
    if (!(await ask({ title: `Withdraw the invitation to ${i.email}?`, body: 'Its link stops working at once. You can invite the address again later.', action: 'Withdraw invitation' }))) return;
    setError(undefined);
    try {
      await api('DELETE', ws(workspaceId, `invitations/${i.id}`));
      if (created?.invitation.id === i.id) setCreated(undefined);
      list.reload();
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  // Accepted and withdrawn ones are history: the list shows what still needs someone.
  const open = (list.data?.invitations ?? []).filter((i) => i.status === 'pending' || i.status === 'expired');
  return (
    <section className="card stack" aria-labelledby="settings-invitations">
      <h2 id="settings-invitations">Invite people</h2>
      {dialog}
      <form className="row" onSubmit={submit} style={{ alignItems: 'flex-end' }}>
        <Field label="Email to invite">
          <input type="email" required autoComplete="off" value={f.email} onChange={(e) => setF({ ...f, email: e.target.value })} />
        </Field>
        <Field label="Invited role">
          <select value={f.role} onChange={(e) => setF({ ...f, role: e.target.value as Role })}>
            {ROLES.filter((r) => rank[r] <= rank[role]).map((r) => (
              <option key={r} value={r}>
                {r[0]!.toUpperCase() + r.slice(1)}
              </option>
            ))}
          </select>
        </Field>
        <SubmitButton busy={busy} busyText="Inviting…">
          Send invitation
        </SubmitButton>
      </form>
      <ErrorNote error={error ?? list.error} />
      {created && <CreatedNote c={created} />}
      <h3>Pending invitations</h3>
      {open.length === 0 ? (
        <Empty>No pending invitations.</Empty>
      ) : (
        <>
          <table className="table">
            <TableHead columns={['Invited', 'Role', 'Expires']} />
            <tbody>
              {open.map((i) => (
                <tr key={i.id}>
                  <td>
                    <div className="strong">{i.email}</div>
                    {i.invitedBy && <div className="muted small">by {i.invitedBy}</div>}
                  </td>
                  <td>{i.role}</td>
                  <td>{i.status === 'expired' ? <Badge tone="warn">expired</Badge> : when(i.expiresAt)}</td>
                  <td>
                    {i.status === 'pending' && rank[i.role] <= rank[role] && (
                      <button type="button" className="btn btn-quiet" onClick={() => void revoke(i)} aria-label={`Withdraw the invitation to ${i.email}`}>
                        Withdraw
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CsvButton
            what="the pending invitations"
            filename="invitations.csv"
            header={['Email', 'Role', 'Invited by', 'Status', 'Expires at']}
            rows={open.map((i) => [i.email, i.role, i.invitedBy, i.status, i.expiresAt])}
          />
        </>
      )}
      <p className="muted small" style={{ margin: 0 }}>
        A link works once, for the invited address only, for seven days. Invite the same address again to send a fresh link; the old one stops working.
      </p>
    </section>
  );
}

function CreatedNote({ c }: { c: Created }) {
  if (c.emailed) {
    return (
      <p className="note note-ok" role="status">
        Invitation emailed to {c.invitation.email}.
      </p>
    );
  }
  return (
    <div className="note stack" role="status">
      <p style={{ margin: 0 }}>
        {c.mailError ? `The email could not be sent (${c.mailError}). ` : 'This server sends no email (no CADENZA_SMTP_URL). '}
        Send this link to {c.invitation.email} yourself: it works once, for that address only.
      </p>
      {c.link && <CopyField label={`Invitation link for ${c.invitation.email}`} value={c.link} copyLabel="Copy link" />}
    </div>
  );
}
