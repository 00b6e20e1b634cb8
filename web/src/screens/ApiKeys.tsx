import { useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import { CopyField } from '../ui/CopyField.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { Badge, Empty, ErrorNote, Field, SubmitButton, TableHead, when } from '../ui/parts.tsx';
import type { ApiKey } from '../types.ts';
import { useLoad } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';
import { CsvButton } from '../ui/CsvButton.tsx';

const ROLES = [
  { value: 'member', label: 'Member: what a member may do (reads no inbox)' },
  { value: 'admin', label: 'Admin: also settings, members, webhooks, keys' },
] as const;
const SCOPES = [
  { value: 'read_write', label: 'Read and write' },
  { value: 'read_only', label: 'Read only: GET requests, nothing changed' },
] as const;
type Scope = (typeof SCOPES)[number]['value'];

/**
 * The workspace's API keys for admins: a key made with its name, role (the routes a member or an
 * admin may call, docs/api.md; a member key belongs to nobody and reads no inbox) and access (read
 * and write, or read only: GET requests alone, for a dashboard or a warehouse sync),
 * shown once, since the server keeps only its hash; who made each, when it
 * was last used, and Revoke, asked first (a script using it fails at once).
 */
export function ApiKeys({ workspaceId }: { workspaceId: string }) {
  const list = useLoad(() => api<{ apiKeys: ApiKey[] }>('GET', ws(workspaceId, 'api-keys')), [workspaceId]);
  const [name, setName] = useState('');
  const [role, setRole] = useState<'admin' | 'member'>('member');
  const [scope, setScope] = useState<Scope>('read_write');
  const [made, setMade] = useState<{ name: string; key: string }>();
  const { ask, dialog } = useConfirm();
  const { busy, error, setError, submit } = useSubmit(async () => {
    const k = await call('POST /api/workspaces/:workspaceId/api-keys', ws(workspaceId, 'api-keys'), { name: name.trim(), role, scope });
    setMade({ name: k.name, key: k.key });
    setName('');
    list.reload();
  });
  const revoke = async (k: ApiKey) => {
    if (!(await ask({ title: `Revoke the API key ${k.name}?`, body: 'Scripts and integrations that use it are refused from now on. A revoked key cannot be turned back on: make a new one.', action: 'Revoke key' }))) return;
    setError(undefined);
    try {
      await api('DELETE', ws(workspaceId, `api-keys/${k.id}`));
      list.reload();
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  const keys = list.data?.apiKeys ?? [];
  return (
    <section className="card stack" aria-labelledby="settings-api-keys">
      <h2 id="settings-api-keys">API keys</h2>
      {dialog}
      <form className="row" style={{ alignItems: 'flex-end' }} onSubmit={(e) => void submit(e)}>
        <Field label="Key name" hint="What uses it, e.g. “crm sync”">
          <input value={name} maxLength={100} required onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Key role">
          <select value={role} onChange={(e) => setRole(e.target.value as 'admin' | 'member')}>
            {ROLES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Key access">
          <select value={scope} onChange={(e) => setScope(e.target.value as Scope)}>
            {SCOPES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </Field>
        <SubmitButton busy={busy} busyText="Creating…" disabled={!name.trim()}>
          Create key
        </SubmitButton>
      </form>
      {made && (
        <div className="note stack" role="status">
          <p style={{ margin: 0 }}>Copy the key {made.name} now: Cadenza keeps only its hash and will not show it again. Send it as Authorization: Bearer &lt;key&gt; (docs/api.md).</p>
          <CopyField label={`New API key ${made.name}`} value={made.key} copyLabel="Copy key">
            <button type="button" className="btn btn-quiet" onClick={() => setMade(undefined)} style={{ alignSelf: 'flex-end' }}>
              Done
            </button>
          </CopyField>
        </div>
      )}
      <ErrorNote error={error ?? list.error} />
      {list.data && keys.length === 0 ? (
        <Empty>No API keys yet.</Empty>
      ) : (
        <>
          <table className="table" aria-label="API keys">
            <TableHead columns={['Key', 'Role and access', 'Created by', 'Last used']} />
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>
                    <div className="strong">{k.name}</div>
                    <div className="muted small">
                      <code>{k.prefix}…</code> · created {when(k.createdAt)}
                    </div>
                  </td>
                  <td>
                    {k.role}
                    {k.scope === 'read_only' && (
                      <>
                        {' '}
                        <Badge tone="muted">read only</Badge>
                      </>
                    )}
                  </td>
                  <td>{k.createdBy ?? '—'}</td>
                  <td>{k.lastUsedAt ? when(k.lastUsedAt) : 'never'}</td>
                  <td>
                    {k.revokedAt ? (
                      <Badge tone="muted">revoked</Badge>
                    ) : (
                      <button type="button" className="btn btn-quiet" onClick={() => void revoke(k)} aria-label={`Revoke the API key ${k.name}`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CsvButton
            what="the API keys"
            filename="api-keys.csv"
            header={['Name', 'Prefix', 'Role', 'Access', 'Created by', 'Created at', 'Last used at', 'Revoked at']}
            rows={keys.map((k) => [k.name, k.prefix, k.role, k.scope, k.createdBy, k.createdAt, k.lastUsedAt, k.revokedAt])}
          />
        </>
      )}
      <p className="muted small" style={{ margin: 0 }}>
        A key stops working when it is revoked, and when the member who made it leaves the workspace; a member made a member keeps keys of a member only.
      </p>
    </section>
  );
}
