import { useEffect, useState, type FormEvent } from 'react';
import { api, call, ws, type Me } from '../api.ts';
import type { WeeklyReport } from '../types.ts';
import { ErrorNote, Field, SettingsFormEnd } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { useSave } from '../ui/use-submit.ts';

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

/**
 * The weekly report by email (GET/PUT …/weekly-report): an admin turns it on and picks the day and
 * hour in the workspace's zone; every member asks for it, or stops, for themselves.
 */
export function WeeklyReportForm({ workspaceId }: { workspaceId: string }) {
  const me = useLoad(() => api<Me>('GET', '/api/auth/me'), []);
  const role = me.data?.workspaces.find((w) => w.id === workspaceId)?.role;
  const admin = role === 'owner' || role === 'admin';
  const s = useLoad(() => api<WeeklyReport>('GET', ws(workspaceId, 'weekly-report')), [workspaceId]);
  const [f, setF] = useState({ enabled: false, weekday: 1, hour: 8 });
  const [view, setView] = useState<WeeklyReport>();
  const { busy, error, saved, run } = useSave<WeeklyReport>(setView);
  useEffect(() => {
    if (s.data) {
      setF({ enabled: s.data.enabled, weekday: s.data.weekday, hour: s.data.hour });
      setView(s.data);
    }
  }, [s.data]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(() => call('PUT /api/workspaces/:workspaceId/weekly-report', ws(workspaceId, 'weekly-report'), f), f.enabled ? 'Weekly report saved: it is on.' : 'Weekly report saved: it is off.');
  };
  const mine = view?.members.find((m) => me.data && m.email.toLowerCase() === me.data.account.email.toLowerCase());
  const receivers = view?.members.filter((m) => m.receives).map((m) => m.name ?? m.email) ?? [];
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="weekly-report" data-testid="weekly-report">
      <h2 id="weekly-report">Weekly report by email</h2>
      <p className="muted small" style={{ margin: 0 }}>
        The last seven days&rsquo; figures against the seven before, the top sequences, and every sequence&rsquo;s figures as CSV, once a week
        {view ? ` at the day and hour below in the workspace's time zone (${view.zone})` : ''}.
      </p>
      <ErrorNote error={s.error ?? me.error} />
      {view && !view.mailConfigured && (
        <p className="note note-warn">This installation has no system mail (CADENZA_SMTP_URL): no report goes out until an operator sets it.</p>
      )}
      <fieldset disabled={!admin || !s.data} className="grid-2 plain-fieldset">
        <Field label="Send the weekly report">
          <input type="checkbox" checked={f.enabled} onChange={(e) => setF({ ...f, enabled: e.target.checked })} data-testid="weekly-report-enabled" />
        </Field>
        <Field label="Day">
          <select value={f.weekday} onChange={(e) => setF({ ...f, weekday: Number(e.target.value) })} data-testid="weekly-report-weekday">
            {WEEKDAYS.map((d, i) => (
              <option key={d} value={i + 1}>
                {d}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Hour" hint="In the workspace's time zone; a daylight-saving change keeps it.">
          <select value={f.hour} onChange={(e) => setF({ ...f, hour: Number(e.target.value) })} data-testid="weekly-report-hour">
            {Array.from({ length: 24 }, (_, h) => (
              <option key={h} value={h}>
                {`${String(h).padStart(2, '0')}:00`}
              </option>
            ))}
          </select>
        </Field>
      </fieldset>
      {view && (
        <p className="small" data-testid="weekly-report-status">
          {view.next ? `Next report: ${new Date(view.next).toLocaleString(undefined, { weekday: 'long', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: view.zone })} (${view.zone}), to ${receivers.join(', ') || 'nobody'}.` : 'Off: no report is sent.'}
          {view.last && (view.last.sentAt ? ` Last sent for ${view.last.week} to ${view.last.recipients} ${view.last.recipients === 1 ? 'person' : 'people'}.` : ` The report for ${view.last.week} failed: ${view.last.error ?? 'unknown error'}.`)}
        </p>
      )}
      <SettingsFormEnd error={error} saved={saved} canEdit={admin}>
        <button type="submit" className="btn btn-primary" disabled={busy || !s.data} data-testid="weekly-report-save">
          {busy ? 'Saving…' : 'Save weekly report'}
        </button>
      </SettingsFormEnd>
      {mine && (
        <label className="inline-check">
          <input
            type="checkbox"
            checked={mine.optedIn}
            disabled={busy}
            data-testid="weekly-report-mine"
            onChange={(e) => {
              const receive = e.target.checked;
              void run(() => call('PUT /api/workspaces/:workspaceId/weekly-report/subscription', ws(workspaceId, 'weekly-report/subscription'), { receive }), receive ? 'You will receive the weekly report.' : 'You will no longer receive the weekly report.');
            }}
          />{' '}
          Send it to me ({mine.email}){!view?.members.some((m) => m.optedIn) ? '; while nobody asks for it, it goes to the owners' : ''}
        </label>
      )}
    </form>
  );
}
