import { useEffect, useMemo, useRef, useState } from 'react';
import type { Me } from './api.ts';
import { navigate } from './router.ts';
import { Analytics } from './screens/Analytics.tsx';
import { Domains } from './screens/Domains.tsx';
import { Inbox } from './screens/Inbox.tsx';
import { Leads } from './screens/Leads.tsx';
import { Agency } from './screens/Agency.tsx';
import { Mailboxes } from './screens/Mailboxes.tsx';
import { Portal } from './screens/Portal.tsx';
import { NewWorkspace } from './screens/NewWorkspace.tsx';
import { Sequences } from './screens/Sequences.tsx';
import { Settings } from './screens/Settings.tsx';
import { Suppressions } from './screens/Suppressions.tsx';
import { Tasks } from './screens/Tasks.tsx';
import { DemoBanner } from './ui/DemoBanner.tsx';
import { NotificationBell } from './ui/NotificationBell.tsx';
import { GettingStarted } from './ui/GettingStarted.tsx';
import { isTyping, ShortcutsContext, ShortcutsDialog, type ShortcutGroup, type ShortcutsHelp } from './ui/shortcuts.tsx';
import { IncomingCallDock, IncomingCallsProvider } from './dialer/IncomingCallDock.tsx';

const screens = [
  { path: '/inbox', label: 'Inbox', Screen: Inbox },
  { path: '/sequences', label: 'Sequences', Screen: Sequences },
  { path: '/leads', label: 'Leads', Screen: Leads },
  { path: '/mailboxes', label: 'Mailboxes', Screen: Mailboxes },
  { path: '/domains', label: 'Domains', Screen: Domains },
  { path: '/suppressions', label: 'Suppressions', Screen: Suppressions },
  { path: '/tasks', label: 'Tasks', Screen: Tasks },
  { path: '/analytics', label: 'Analytics', Screen: Analytics },
  { path: '/settings', label: 'Settings', Screen: Settings },
  { path: '/agency', label: 'Agency', Screen: Agency },
] as const;

type ScreenEntry = { path: string; label: string; Screen: (p: ScreenProps) => React.ReactElement };

/** The client portal: what a viewer (a client's person, read-only) sees, and nothing else. */
const portalScreens: readonly ScreenEntry[] = [{ path: '/portal', label: 'Reports', Screen: Portal }];

/**
 * The screens of the caller's role in the workspace: a viewer the portal alone; the Agency screen
 * for an admin or owner of a workspace that is no agency's client. The server enforces the same.
 */
function screensFor(w: Me['workspaces'][number] | undefined): readonly ScreenEntry[] {
  if (w?.role === 'viewer') return portalScreens;
  const agency = (w?.role === 'admin' || w?.role === 'owner') && w.agencyId === null;
  return screens.filter((s) => s.path !== '/agency' || agency) as readonly ScreenEntry[];
}

/** `g` then a letter: the screen it goes to. */
const GO_KEYS: Record<string, string> = { i: '/inbox', l: '/leads', s: '/sequences', m: '/mailboxes', t: '/tasks', a: '/analytics' };
/** How long after `g` its letter counts. */
const CHORD_MS = 1500;

const ANYWHERE: ShortcutGroup = {
  title: 'Anywhere',
  shortcuts: [
    ...Object.entries(GO_KEYS).map(([k, to]) => ({ key: `g ${k}`, what: `Go to ${screens.find((s) => s.path === to)!.label}` })),
    { key: '?', what: 'Show these shortcuts' },
  ],
};

/**
 * The keys that work on every screen: `g` then a letter goes to a screen, `?` shows the shortcuts
 * (the screen's own, then these). Listened to in the capture phase, so that the letter after `g`
 * reaches no screen's own shortcut (the inbox's `l`). Nothing while typing in a field.
 */
function useGlobalShortcuts(): { help: ShortcutsHelp; dialog: React.ReactElement } {
  const [open, setOpen] = useState(false);
  const [screenKeys, setScreenKeys] = useState<ShortcutGroup | null>(null);
  const help = useMemo<ShortcutsHelp>(
    () => ({
      show: () => setOpen(true),
      register: (group) => {
        setScreenKeys(group);
        return () => setScreenKeys((g) => (g === group ? null : g));
      },
    }),
    [],
  );
  useEffect(() => {
    let gAt: number | undefined;
    const on = (e: KeyboardEvent) => {
      if (e.defaultPrevented || isTyping(e) || e.key === 'Shift') return;
      if (gAt !== undefined && Date.now() - gAt <= CHORD_MS) {
        gAt = undefined;
        // The chord is used up by whatever follows `g`: a key that names no screen does nothing.
        e.preventDefault();
        const to = GO_KEYS[e.key];
        if (to) navigate(to);
        return;
      }
      gAt = undefined;
      if (e.key === 'g') {
        gAt = Date.now();
        e.preventDefault();
      } else if (e.key === '?') {
        e.preventDefault();
        setOpen(true);
      }
    };
    addEventListener('keydown', on, true);
    return () => removeEventListener('keydown', on, true);
  }, []);
  const groups = screenKeys ? [screenKeys, ANYWHERE] : [ANYWHERE];
  return { help, dialog: <ShortcutsDialog open={open} onClose={() => setOpen(false)} groups={groups} /> };
}

export interface ScreenProps {
  workspaceId: string;
  /** The rest of the path after the screen's own, e.g. a sequence id. */
  sub: string;
  /** Switches the app into another workspace (the Agency screen's "Open" on a client). */
  onSwitch?: (workspaceId: string) => void;
}

const WORKSPACE_KEY = 'cadenza.workspace';

/** The workspace the browser shows next time (after a reload, a new workspace, an accepted invitation). */
export function rememberWorkspace(id: string): void {
  try {
    localStorage.setItem(WORKSPACE_KEY, id);
  } catch {
    // Storage refused (private mode): the choice lasts until the page reloads.
  }
}

function rememberedWorkspace(me: Me): string {
  let id: string | null = null;
  try {
    id = localStorage.getItem(WORKSPACE_KEY);
  } catch {
    id = null;
  }
  return me.workspaces.find((w) => w.id === id)?.id ?? me.workspaces[0]?.id ?? '';
}

/** Navigation on the left, the current screen on the right; plain links so keyboard and middle-click work. */
export function Shell({ me, path, startDemo, onSignOut, onMeChanged }: { me: Me; path: string; startDemo: boolean; onSignOut: () => void; onMeChanged: () => Promise<void> }) {
  const [workspaceId, setWorkspaceId] = useState(() => rememberedWorkspace(me));
  const choose = (id: string) => {
    rememberWorkspace(id);
    setWorkspaceId(id);
  };
  const creating = path === '/workspaces/new';
  const [menuOpen, setMenuOpen] = useState(false);
  // A plain link for keyboard, middle-click and new tabs; a left click navigates in place.
  const follow = (to: string) => (e: React.MouseEvent) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    setMenuOpen(false);
    navigate(to);
  };
  const membership = me.workspaces.find((w) => w.id === workspaceId);
  const viewer = membership?.role === 'viewer';
  const shown = screensFor(membership);
  const current = shown.find((s) => path === s.path || path.startsWith(s.path + '/')) ?? shown[0]!;
  const sub = path.slice(current.path.length + 1);
  const mainRef = useRef<HTMLElement>(null);
  const first = useRef(true);
  const shortcuts = useGlobalShortcuts();
  useEffect(() => {
    document.title = `${creating ? 'New workspace' : current.label} · Cadenza`;
    // After a navigation, keyboard and screen-reader users start at the new screen, not in the menu.
    if (first.current) first.current = false;
    else mainRef.current?.focus();
  }, [current, creating]);
  return (
    <ShortcutsContext.Provider value={shortcuts.help}>
      <IncomingCallsProvider>
        <div className="shell">
          <a className="skip" href="#main">
            Skip to content
          </a>
          <nav className={menuOpen ? 'nav nav-open' : 'nav'} aria-label="Main">
            <div className="nav-bar">
              <div className="brand">Cadenza</div>
              {/* Notifications are a member's own: a portal viewer gets none, nor an agency admin inside a client (no membership there). */}
              {workspaceId && membership && !viewer && !membership.viaAgency && <NotificationBell key={workspaceId} workspaceId={workspaceId} />}
              {/* On a phone the navigation folds into this button (styles.css); at desktop widths it is hidden. */}
              <button type="button" className="btn nav-toggle" aria-expanded={menuOpen} aria-controls="nav-menu" onClick={() => setMenuOpen((o) => !o)}>
                {menuOpen ? 'Close menu' : 'Menu'}
              </button>
            </div>
            <div className="nav-menu" id="nav-menu">
              {me.workspaces.length > 1 ? (
                <label className="field nav-ws">
                  <span className="field-label">Workspace</span>
                  <select value={workspaceId} onChange={(e) => choose(e.target.value)}>
                    {me.workspaces.map((w) => (
                      <option key={w.id} value={w.id}>
                        {w.viaAgency ? `${w.name} (client)` : w.name}
                      </option>
                    ))}
                  </select>
                </label>
              ) : (
                <div className="nav-ws muted">{me.workspaces[0]?.name}</div>
              )}
              <a className="nav-new small" href="/workspaces/new" aria-current={creating ? 'page' : undefined} onClick={follow('/workspaces/new')}>
                New workspace
              </a>
              <ul>
                {shown.map((s) => (
                  <li key={s.path}>
                    <a
                      href={s.path}
                      aria-current={s === current && !creating ? 'page' : undefined}
                      onClick={follow(s.path)}
                    >
                      {s.label}
                    </a>
                  </li>
                ))}
              </ul>
              <div className="nav-foot">
                <div className="muted small">{me.account.email}</div>
                <button type="button" className="btn btn-quiet" onClick={onSignOut}>
                  Sign out
                </button>
              </div>
            </div>
          </nav>
          <main id="main" className="main" tabIndex={-1} ref={mainRef}>
            {workspaceId && !viewer && <DemoBanner workspaceId={workspaceId} start={startDemo && workspaceId === me.workspaces[0]?.id} />}
            {workspaceId && !creating && !viewer && current === screens[0] && <GettingStarted key={workspaceId} workspaceId={workspaceId} />}
            {creating ? (
              <NewWorkspace
                onCreated={async (id) => {
                  await onMeChanged();
                  choose(id);
                  navigate('/settings');
                }}
              />
            ) : workspaceId ? (
              <current.Screen
                key={workspaceId + current.path}
                workspaceId={workspaceId}
                sub={sub}
                onSwitch={(id) => {
                  choose(id);
                  navigate('/analytics');
                }}
              />
            ) : (
              <p>
                You belong to no workspace yet.{' '}
                <a href="/workspaces/new" onClick={follow('/workspaces/new')}>
                  Create one
                </a>
                , or open an invitation link.
              </p>
            )}
          </main>
          {/* Incoming calls ring on every screen; the power dialer takes them over while it is open. */}
          {workspaceId && !creating && !viewer && <IncomingCallDock key={workspaceId} workspaceId={workspaceId} />}
          {shortcuts.dialog}
        </div>
      </IncomingCallsProvider>
    </ShortcutsContext.Provider>
  );
}
