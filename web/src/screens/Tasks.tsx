import { useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { ApiBody, Task } from '../types.ts';
import { Badge, Empty, ErrorNote, PageHeader, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { PowerDialer } from './PowerDialer.tsx';

/** What a rep can record (POST …/tasks/{id}/complete): a call's outcome moves the enrollment on, or stops it on a booked meeting. */
type Outcome = ApiBody<'POST /api/workspaces/:workspaceId/tasks/:taskId/complete'>['outcome'];
const OUTCOMES: Record<Task['kind'], [Outcome, string][]> = {
  call: [
    ['done', 'Done'],
    ['connected', 'Connected'],
    ['no_answer', 'No answer'],
    ['voicemail', 'Voicemail'],
    ['busy', 'Busy'],
    ['wrong_number', 'Wrong number'],
    ['meeting_booked', 'Meeting booked (ends the sequence)'],
    ['not_interested', 'Not interested'],
    ['skipped', 'Skipped'],
  ],
  manual: [
    ['done', 'Done'],
    ['skipped', 'Skipped'],
  ],
};

export function Tasks({ workspaceId }: ScreenProps) {
  const list = useLoad(() => api<{ tasks: Task[] }>('GET', ws(workspaceId, 'tasks?state=open')), [workspaceId]);
  const [error, setError] = useState<string>();
  const [outcomes, setOutcomes] = useState<Record<string, Outcome>>({});
  const complete = async (t: Task) => {
    setError(undefined);
    try {
      await call('POST /api/workspaces/:workspaceId/tasks/:taskId/complete', ws(workspaceId, `tasks/${t.id}/complete`), { outcome: outcomes[t.id] || 'done' });
      list.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const tasks = list.data?.tasks ?? [];
  // Today is the rep's own day (the browser's time zone); what was due before it is overdue and comes first.
  const startOfToday = new Date();
  startOfToday.setHours(0, 0, 0, 0);
  const endOfToday = startOfToday.getTime() + 86_400_000;
  const today = tasks.filter((t) => Date.parse(t.dueAt) < endOfToday);
  const later = tasks.filter((t) => Date.parse(t.dueAt) >= endOfToday);
  // The power dialer works through the calls due now, oldest first (the list's order).
  const callsDue = tasks.filter((t) => t.kind === 'call' && Date.parse(t.dueAt) <= Date.now());
  const table = (rows: Task[], caption: string) => (
    <table className="table">
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Due</th>
          <th scope="col">Task</th>
          <th scope="col">Lead</th>
          <th scope="col">Outcome</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((t) => (
          <tr key={t.id}>
            <td>
              {when(t.dueAt)}
              {Date.parse(t.dueAt) < startOfToday.getTime() && (
                <div>
                  <Badge tone="warn">overdue</Badge>
                </div>
              )}
            </td>
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
                Outcome of {t.title} with {t.leadName ?? t.leadEmail}
              </label>
              <select id={`outcome-${t.id}`} value={outcomes[t.id] ?? 'done'} onChange={(e) => setOutcomes({ ...outcomes, [t.id]: e.target.value as Outcome })}>
                {OUTCOMES[t.kind].map(([v, label]) => (
                  <option key={v} value={v}>
                    {label}
                  </option>
                ))}
              </select>
              <button type="button" className="btn" onClick={() => complete(t)} aria-label={`Complete ${t.title} with ${t.leadName ?? t.leadEmail}`}>
                Complete
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
  return (
    <>
      <PageHeader title="Tasks">
        <a className="btn" href={ws(workspaceId, 'tasks.csv?state=open')} download="tasks-open.csv">
          Export open tasks (CSV)
        </a>
        <a className="btn btn-quiet" href={ws(workspaceId, 'tasks.csv?state=done')} download="tasks-done.csv">
          Export done tasks (CSV)
        </a>
      </PageHeader>
      <ErrorNote error={list.error ?? error} />
      {callsDue.length > 0 && <PowerDialer workspaceId={workspaceId} tasks={callsDue} onLogged={list.reload} />}
      {!list.loading && tasks.length === 0 && <Empty>No open task. Call and manual steps of your sequences land here on their day.</Empty>}
      {tasks.length > 0 && (
        <section className="stack" aria-labelledby="tasks-today">
          <h2 id="tasks-today">Due today ({today.length})</h2>
          {today.length === 0 ? <p className="muted">Nothing due today.</p> : table(today, 'Calls and manual steps due today or overdue')}
        </section>
      )}
      {later.length > 0 && (
        <section className="stack" aria-labelledby="tasks-later">
          <h2 id="tasks-later">Coming up ({later.length})</h2>
          {table(later, 'Calls and manual steps due after today')}
        </section>
      )}
    </>
  );
}
