import { call, ws } from '../api.ts';
import { when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

/**
 * A lead's recorded calls, each with a player. The audio element asks the API itself (the session
 * cookie goes with it, same origin), so the WAV is opened from its sealed copy only when played,
 * and each play is in the audit log. Nothing shows for a lead with no recording.
 */
export function CallRecordings({ workspaceId, leadId }: { workspaceId: string; leadId: string }) {
  const calls = useLoad(() => call('GET /api/workspaces/:workspaceId/calls', ws(workspaceId, `calls?leadId=${encodeURIComponent(leadId)}`)), [workspaceId, leadId]);
  const recorded = (calls.data?.calls ?? []).filter((c) => c.recording);
  if (recorded.length === 0) return null;
  return (
    <section className="card stack" aria-label="Call recordings">
      <h2>Call recordings</h2>
      <ul className="stack">
        {recorded.map((c) => (
          <li key={c.id}>
            <span className="small">
              {when(c.startedAt)} · {c.number ?? 'unknown number'} · {Math.round(c.recording!.durationMs / 1000)} s{c.outcome ? ` · ${c.outcome.replace(/_/g, ' ')}` : ''}
            </span>
            <audio controls preload="none" src={ws(workspaceId, `calls/${c.id}/recording`)} aria-label={`Recording of the call of ${when(c.startedAt)}`} />
          </li>
        ))}
      </ul>
    </section>
  );
}
