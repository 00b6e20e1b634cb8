import { call, ws } from '../api.ts';
import { Analytics } from './Analytics.tsx';
import type { ScreenProps } from '../Shell.tsx';
import { useLoad } from '../ui/use-load.ts';

/**
 * The client portal (docs/web.md "Client portal"): what a client's people with the viewer role
 * see: the workspace's reports, the same Analytics screen and API figures as the team's, under the
 * client's branding. The server refuses a viewer every other route (docs/security.md "Agencies").
 */
export function Portal({ workspaceId, sub }: ScreenProps) {
  const brand = useLoad(() => call('GET /api/workspaces/:workspaceId/branding', ws(workspaceId, 'branding')), [workspaceId]);
  const b = brand.data?.branding;
  return (
    <div className="stack portal">
      {b && (
        <div className="portal-brand" style={{ borderColor: b.primaryColor }}>
          {b.logoUrl && <img src={ws(workspaceId, `branding/logo?v=${b.logoUrl.split('v=')[1] ?? ''}`)} alt={`${b.displayName} logo`} height={32} />}
          <span>{b.displayName} · read-only reports</span>
        </div>
      )}
      <Analytics workspaceId={workspaceId} sub={sub} readOnly />
    </div>
  );
}
