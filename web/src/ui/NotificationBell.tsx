import { useCallback, useEffect, useRef, useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import { navigate } from '../router.ts';
import type { Notifications } from '../types.ts';
import { when } from './parts.tsx';

/** How often the bell asks for new notifications. */
const POLL_MS = 5_000;

/** Whether this browser has the Notification API (not every one does: an embedded view, an old phone). */
export const browserNotificationsSupported = () => typeof window !== 'undefined' && 'Notification' in window;

/**
 * The bell (issue 19): the unread count on a button in the navigation bar, and the list it opens
 * (newest first; following one marks it read; "Mark all read"). It polls GET …/notifications, and
 * shows the kinds the person chose for the browser with the browser's own notifications, once
 * each, when the person has allowed them (Settings > Notifications asks): only the ones that come
 * after the page opened, never the backlog.
 */
export function NotificationBell({ workspaceId }: { workspaceId: string }) {
  const [data, setData] = useState<Notifications>();
  const [error, setError] = useState<string>();
  const [open, setOpen] = useState(false);
  const seen = useRef<number | null>(null);
  const panel = useRef<HTMLDivElement>(null);
  const url = ws(workspaceId, 'notifications');

  const load = useCallback(async () => {
    try {
      const d = await call('GET /api/workspaces/:workspaceId/notifications', `${url}?limit=30`);
      setData(d);
      setError(undefined);
      const newest = d.items[0]?.id ?? 0;
      if (seen.current !== null && browserNotificationsSupported() && Notification.permission === 'granted') {
        for (const n of [...d.items].reverse()) {
          if (n.id > seen.current && n.browser && !n.readAt) new Notification(n.title, { body: n.body, tag: `cadenza-${n.id}` });
        }
      }
      seen.current = Math.max(seen.current ?? 0, newest);
    } catch (e) {
      setError(errorMessage(e));
    }
  }, [url]);

  useEffect(() => {
    seen.current = null;
    void load();
    const t = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(t);
  }, [load]);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setOpen(false);
    addEventListener('keydown', onKey);
    panel.current?.focus();
    return () => removeEventListener('keydown', onKey);
  }, [open]);

  const markRead = async (body: { ids: number[] } | { all: true }) => {
    try {
      await call('POST /api/workspaces/:workspaceId/notifications/read', `${url}/read`, body);
      await load();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const follow = (id: number, link: string) => async (e: React.MouseEvent) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    setOpen(false);
    await markRead({ ids: [id] });
    navigate(link);
  };

  const unread = data?.unread ?? 0;
  const items = data?.items.filter((i) => i.inApp) ?? [];
  return (
    <div className="bell">
      <button type="button" className="btn bell-button" aria-expanded={open} aria-controls="bell-panel" onClick={() => setOpen((o) => !o)} data-testid="bell">
        {/* A bell drawn here: the system's emoji font may be missing (a server's Chromium has none). */}
        <svg aria-hidden="true" width="16" height="16" viewBox="0 0 16 16" fill="currentColor">
          <path d="M8 16a2 2 0 0 0 2-2H6a2 2 0 0 0 2 2zm5-5V7a5 5 0 0 0-4-4.9V1a1 1 0 1 0-2 0v1.1A5 5 0 0 0 3 7v4l-1.5 1.5V13h13v-.5L13 11z" />
        </svg>
        <span className="sr-only">Notifications</span>
        {unread > 0 ? (
          <span className="bell-count" aria-label={`${unread} unread`}>
            {unread}
          </span>
        ) : (
          <span className="sr-only">, none unread</span>
        )}
      </button>
      {open && (
        <div className="bell-panel" id="bell-panel" role="region" aria-label="Notifications" tabIndex={-1} ref={panel}>
          <div className="bell-head">
            <h2>Notifications</h2>
            <button type="button" className="btn btn-quiet" disabled={unread === 0} onClick={() => void markRead({ all: true })}>
              Mark all read
            </button>
          </div>
          {error && (
            <p className="note note-error" role="alert">
              {error}
            </p>
          )}
          {items.length === 0 ? (
            <p className="muted small">Nothing yet. Interested replies, tasks falling due and mailboxes that need attention appear here.</p>
          ) : (
            <ul className="bell-list">
              {items.map((n) => (
                <li key={n.id} className={n.readAt ? 'bell-item' : 'bell-item bell-unread'}>
                  <a href={n.link} onClick={follow(n.id, n.link)}>
                    <span className="bell-title">
                      {!n.readAt && <span className="sr-only">Unread: </span>}
                      {n.title}
                    </span>
                    <span className="bell-body">{n.body}</span>
                    <span className="bell-when small">{when(n.occurredAt)}</span>
                  </a>
                </li>
              ))}
            </ul>
          )}
          <a className="small bell-settings" href="/settings#notifications" onClick={(e) => (e.preventDefault(), setOpen(false), navigate('/settings'))}>
            Choose what you are told, and where
          </a>
        </div>
      )}
    </div>
  );
}
