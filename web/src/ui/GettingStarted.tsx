import { useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import { navigate } from '../router.ts';
import type { GettingStarted as Checklist } from '../types.ts';
import { ErrorNote } from './parts.tsx';
import { useLoad, usePoll } from './use-load.ts';

/**
 * The Getting started checklist on the first screen: five steps, each ticked by the server from
 * the workspace's state (GET …/getting-started), read again every 10 s so that a step done in
 * another tab ticks too. Gone when every step is done or someone dismissed it.
 */
export function GettingStarted({ workspaceId }: { workspaceId: string }) {
  const list = useLoad(() => call('GET /api/workspaces/:workspaceId/getting-started', ws(workspaceId, 'getting-started')), [workspaceId]);
  usePoll(list.reload, 10_000);
  const [dismissed, setDismissed] = useState<Checklist>();
  const [error, setError] = useState<string>();
  const data = dismissed ?? list.data;
  if (!data?.visible) return null;
  const done = data.items.filter((i) => i.done).length;
  const dismiss = async () => {
    setError(undefined);
    try {
      setDismissed(await call('POST /api/workspaces/:workspaceId/getting-started/dismiss', ws(workspaceId, 'getting-started/dismiss'), {}));
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <section className="card stack getting-started" aria-labelledby="getting-started-title">
      <div className="row getting-started-head">
        <h2 id="getting-started-title">Getting started</h2>
        <span className="muted small">
          {done} of {data.items.length} done
        </span>
        <button type="button" className="btn btn-quiet getting-started-dismiss" onClick={() => void dismiss()}>
          Dismiss the checklist
        </button>
      </div>
      <ErrorNote error={error} />
      <ol className="checklist">
        {data.items.map((i) => (
          <li key={i.key} className={i.done ? 'checklist-done' : undefined}>
            <span className={`checklist-mark ${i.done ? 'text-ok' : 'muted'}`} aria-hidden="true">
              {i.done ? '✓' : '○'}
            </span>
            <div className="checklist-body">
              <a
                href={i.path}
                onClick={(e) => {
                  if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
                  e.preventDefault();
                  navigate(i.path);
                }}
              >
                {i.title}
              </a>
              <span className="sr-only">{i.done ? ': done' : ': to do'}</span>
              <div className="muted small">{i.detail}</div>
            </div>
          </li>
        ))}
      </ol>
    </section>
  );
}
