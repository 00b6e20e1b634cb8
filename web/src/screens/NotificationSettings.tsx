import { useEffect, useState, type FormEvent } from 'react';
import { call, ws } from '../api.ts';
import type { NotificationPreferences } from '../types.ts';
import { browserNotificationsSupported } from '../ui/NotificationBell.tsx';
import { ErrorNote, Field, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { useSave } from '../ui/use-submit.ts';

type Kind = NotificationPreferences['kinds'][number];
type Channel = 'inApp' | 'browser' | 'email' | 'slack';
const CHANNELS: Array<{ key: Channel; label: string }> = [
  { key: 'inApp', label: 'In the app' },
  { key: 'browser', label: 'Browser' },
  { key: 'email', label: 'Email digest' },
  { key: 'slack', label: 'Slack' },
];

/**
 * A member's own notifications (issue 19, GET/PUT …/notification-preferences): which events reach
 * the bell, the browser, the email digest and Slack; whose events; how often the digest goes;
 * the Slack-compatible incoming webhook URL (write-only: only its host is shown back); and the
 * browser's permission, asked here with a button (never on page load).
 */
export function NotificationSettings({ workspaceId }: { workspaceId: string }) {
  const url = ws(workspaceId, 'notification-preferences');
  const s = useLoad(() => call('GET /api/workspaces/:workspaceId/notification-preferences', url), [url]);
  const [view, setView] = useState<NotificationPreferences>();
  const [kinds, setKinds] = useState<Kind[]>([]);
  const [scope, setScope] = useState<'mine' | 'all'>('mine');
  const [every, setEvery] = useState(24);
  const [slackUrl, setSlackUrl] = useState('');
  const { busy, error, saved, run } = useSave<NotificationPreferences>(setView);
  const [permission, setPermission] = useState(() => (browserNotificationsSupported() ? Notification.permission : 'unsupported'));
  useEffect(() => {
    if (!s.data) return;
    setView(s.data);
    setKinds(s.data.kinds);
    setScope(s.data.scope);
    setEvery(s.data.digestEveryHours);
  }, [s.data]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(() => call('PUT /api/workspaces/:workspaceId/notification-preferences', url, { kinds: kinds.map(({ label: _label, ...k }) => k), scope, digestEveryHours: every }), 'Notification choices saved.');
  };
  const saveSlack = (value: string | null) =>
    run(async () => {
      const r = await call('PUT /api/workspaces/:workspaceId/notification-preferences/slack', `${url}/slack`, { url: value });
      setSlackUrl('');
      return r;
    }, value === null ? 'Slack URL removed.' : 'Slack URL saved.');
  const ask = async () => {
    setPermission(await Notification.requestPermission());
  };
  const toggle = (kind: string, c: Channel, on: boolean) => setKinds((ks) => ks.map((k) => (k.kind === kind ? { ...k, [c]: on } : k)));

  return (
    <section className="card stack" aria-labelledby="notifications" id="notifications" data-testid="notification-settings">
      <h2 id="notifications">Notifications</h2>
      <p className="muted small" style={{ margin: 0 }}>
        Your own choices: which events you are told of, and where. Others in the workspace choose for themselves.
      </p>
      <ErrorNote error={s.error} />
      <form className="stack" onSubmit={submit}>
        <div className="table-scroll">
          <table className="table notify-table" aria-label="Notification channels">
            <thead>
              <tr>
                <th scope="col">Event</th>
                {CHANNELS.map((c) => (
                  <th scope="col" key={c.key}>
                    {c.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {kinds.map((k) => (
                <tr key={k.kind}>
                  <th scope="row">{k.label}</th>
                  {CHANNELS.map((c) => (
                    <td key={c.key}>
                      <input type="checkbox" aria-label={`${k.label}: ${c.label}`} checked={k[c.key]} onChange={(e) => toggle(k.kind, c.key, e.target.checked)} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div className="grid-2">
          <Field label="Whose events" hint="Your own: the events of the mailboxes you own, and of those nobody owns.">
            <select value={scope} onChange={(e) => setScope(e.target.value as 'mine' | 'all')}>
              <option value="mine">My own</option>
              <option value="all">The whole workspace&rsquo;s</option>
            </select>
          </Field>
          <Field label="Email digest" hint={view?.digest.lastAt ? `Last sent ${when(view.digest.lastAt)}.` : 'A digest goes out only when something happened.'}>
            <select value={every} onChange={(e) => setEvery(Number(e.target.value))}>
              <option value={1}>Every hour</option>
              <option value={4}>Every 4 hours</option>
              <option value={24}>Daily</option>
            </select>
          </Field>
        </div>
        {view && !view.mailConfigured && <p className="note note-warn">This installation has no system mail (CADENZA_SMTP_URL): no digest goes out until an operator sets it.</p>}
        {view?.digest.error && <p className="note note-warn">The last digest could not be sent: {view.digest.error}. It is tried again.</p>}
        <div>
          <button className="btn btn-primary" type="submit" disabled={busy || !s.data}>
            Save notification choices
          </button>
        </div>
      </form>
      <div className="stack">
        <h3 className="small" style={{ margin: 0 }}>
          Browser notifications
        </h3>
        {permission === 'granted' && <p className="muted small">This browser shows your notifications while Cadenza is open.</p>}
        {permission === 'denied' && <p className="muted small">This browser blocks Cadenza&rsquo;s notifications: allow them in the browser&rsquo;s site settings.</p>}
        {permission === 'unsupported' && <p className="muted small">This browser has no notifications.</p>}
        {permission === 'default' && (
          <div>
            <button type="button" className="btn" onClick={() => void ask()}>
              Allow browser notifications
            </button>
          </div>
        )}
      </div>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void saveSlack(slackUrl);
        }}
      >
        {view?.slack.disabledReason && (
          <p className="note note-warn" role="status">
            {view.slack.disabledReason}
          </p>
        )}
        <Field label="Slack incoming webhook URL" hint={view?.slack.configured ? `Saved, posting to ${view.slack.host}. The URL is kept sealed and never shown again; enter a new one to replace it.` : 'From Slack (or Mattermost, Rocket.Chat): Apps > Incoming Webhooks. Kept sealed, never shown again.'}>
          <input type="password" autoComplete="off" value={slackUrl} onChange={(e) => setSlackUrl(e.target.value)} placeholder="https://hooks.slack.com/services/…" />
        </Field>
        <div className="toolbar">
          <button className="btn" type="submit" disabled={busy || !slackUrl.trim()}>
            Save Slack URL
          </button>
          {view?.slack.configured && (
            <button className="btn btn-quiet" type="button" disabled={busy} onClick={() => void saveSlack(null)}>
              Remove Slack URL
            </button>
          )}
        </div>
      </form>
      <ErrorNote error={error} />
      {saved && (
        <p className="note note-ok" role="status">
          {saved}
        </p>
      )}
    </section>
  );
}
