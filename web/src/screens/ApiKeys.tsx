import { api, errorMessage, ws } from '../api.ts';
import { Badge, Empty, ErrorNote, TableHead, when } from '../ui/parts.tsx';
import type { ApiKey } from '../types.ts';
import { useLoad } from '../ui/use-load.ts';
import { useState } from 'react';

/** The workspace's API keys for admins: who made each, when it was last used, and Revoke. */
export function ApiKeys({ workspaceId }: { workspaceId: string }) {
  const list = useLoad(() => api<{ apiKeys: ApiKey[] }>('GET', ws(workspaceId, 'api-keys')), [workspaceId]);
  const [error, setError] = useState<string>();
  const revoke = async (k: ApiKey) => {
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
      <ErrorNote error={error ?? list.error} />
      {list.data && keys.length === 0 ? (
        <Empty>No API keys. Scripts get one from POST /api/workspaces/…/api-keys (docs/api.md).</Empty>
      ) : (
        <table className="table" aria-label="API keys">
          <TableHead columns={['Key', 'Role', 'Created by', 'Last used']} />
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>
                  <div className="strong">{k.name}</div>
                  <div className="muted small">
                    <code>{k.prefix}…</code> · created {when(k.createdAt)}
                  </div>
                </td>
                <td>{k.role}</td>
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
      )}
      <p className="muted small" style={{ margin: 0 }}>
        A key stops working when it is revoked, and when the member who made it leaves the workspace; a member made a member keeps keys of a member only.
      </p>
    </section>
  );
}
