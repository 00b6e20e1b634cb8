import { EraseSubject } from './EraseSubject.tsx';
import { Retention } from './Retention.tsx';
import { SubjectExport } from './SubjectExport.tsx';

/**
 * Settings → Privacy (docs/privacy.md): retention for every member to read and admins to change;
 * the subject access export and erasure for admins only, as the API allows them.
 */
export function Privacy({ workspaceId, admin }: { workspaceId: string; admin: boolean }) {
  return (
    <section className="card stack privacy" aria-labelledby="settings-privacy">
      <h2 id="settings-privacy">Privacy</h2>
      <Retention workspaceId={workspaceId} admin={admin} />
      {admin && <SubjectExport workspaceId={workspaceId} />}
      {admin && <EraseSubject workspaceId={workspaceId} />}
    </section>
  );
}
