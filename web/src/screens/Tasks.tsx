import { useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { Task } from '../types.ts';
import { Badge, Empty, ErrorNote, PageHeader, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

export function Tasks({ workspaceId }: ScreenProps) {
  const list = useLoad(() => api<{ tasks: Task[] }>('GET', ws(workspaceId, 'tasks?state=open')), [workspaceId]);
  const [error, setError] = useState<string>();
  const [outcomes, setOutcomes] = useState<Record<string, string>>({});
  const complete = async (t: Task) => {
    setError(undefined);
    try {
      await api('POST', ws(workspaceId, `tasks/${t.id}/complete`), { outcome: outcomes[t.id] || 'done' });
      list.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const tasks = list.data?.tasks ?? [];
  return (
    <>
      <PageHeader title="Tasks" />
      <ErrorNote error={list.error ?? error} />
      {!list.loading && tasks.length === 0 && <Empty>No open task. Call and manual steps of your sequences land here on their day.</Empty>}
      {tasks.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Due</th>
              <th scope="col">Task</th>
              <th scope="col">Lead</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((t) => (
              <tr key={t.id}>
                <td>{when(t.dueAt)}</td>
                <td>
                  <Badge tone={t.kind === 'call' ? 'info' : 'muted'}>{t.kind}</Badge> {t.title}
                  <div className="muted small">{t.sequenceName}</div>
                  {t.notes && <div className="small">{t.notes}</div>}
                </td>
                <td>
                  {t.leadName ?? t.leadEmail}
                  {t.phone && (
                    <div>
                      <a href={`tel:${t.phone}`}>{t.phone}</a>
                    </div>
                  )}
                </td>
                <td className="row">
                  <label className="sr-only" htmlFor={`outcome-${t.id}`}>
                    Outcome of {t.title}
                  </label>
                  <select id={`outcome-${t.id}`} value={outcomes[t.id] ?? 'done'} onChange={(e) => setOutcomes({ ...outcomes, [t.id]: e.target.value })}>
                    <option value="done">Done</option>
                    <option value="connected">Connected</option>
                    <option value="voicemail">Voicemail</option>
                    <option value="no_answer">No answer</option>
                    <option value="meeting_booked">Meeting booked</option>
                  </select>
                  <button type="button" className="btn" onClick={() => complete(t)}>
                    Complete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
