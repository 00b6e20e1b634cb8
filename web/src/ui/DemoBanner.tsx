import { useEffect, useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import type { DemoStatus } from '../types.ts';

const sum = (s: DemoStatus, k: 'enrolled' | 'sent' | 'replied' | 'bounced' | 'outOfOffice' | 'unsubscribed') => s.sequences.reduce((n, x) => n + x[k], 0);

/**
 * The demo workspace (src/api/routes/demo.ts): started from first-run setup, it plays a few days of
 * simulated prospects in a couple of minutes; this banner says what is happening and stops it.
 */
export function DemoBanner({ workspaceId, start }: { workspaceId: string; start: boolean }) {
  const [status, setStatus] = useState<DemoStatus>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    const path = ws(workspaceId, 'demo');
    const first = start ? call('POST /api/workspaces/:workspaceId/demo', path, {}) : api<DemoStatus>('GET', path);
    first.then((s) => live && setStatus(s)).catch((e: unknown) => live && start && setError(`The demo could not start: ${errorMessage(e)}`));
    const t = setInterval(() => {
      api<DemoStatus>('GET', path)
        .then((s) => live && setStatus(s))
        .catch(() => undefined);
    }, 2_000);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [workspaceId, start]);
  if (error)
    return (
      <div className="demo-banner note-error" role="alert">
        {error}
      </div>
    );
  if (!status?.running) return null;
  const sim = status.simulatedNow ? new Date(status.simulatedNow).toLocaleString(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' }) : '';
  return (
    <div className="demo-banner" role="status" aria-live="off">
      <strong>Demo running</strong> · simulated {sim} · {sum(status, 'enrolled')} enrolled, {sum(status, 'sent')} sent, {sum(status, 'replied')} replied, {sum(status, 'bounced')} bounced,{' '}
      {sum(status, 'outOfOffice')} out of office, {sum(status, 'unsubscribed')} unsubscribed
      <button
        type="button"
        className="btn btn-quiet"
        onClick={() => {
          api<DemoStatus>('DELETE', ws(workspaceId, 'demo'))
            .then(setStatus)
            .catch((e: unknown) => setError(errorMessage(e)));
        }}
      >
        Stop demo
      </button>
    </div>
  );
}
