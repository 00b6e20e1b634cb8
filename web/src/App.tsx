import { useEffect, useState } from 'react';
import { api, ApiError, errorMessage, setCsrfToken, type Me } from './api.ts';
import { navigate, usePath } from './router.ts';
import { AcceptInvite } from './screens/AcceptInvite.tsx';
import { SignIn, Setup } from './screens/Auth.tsx';
import { rememberWorkspace, Shell } from './Shell.tsx';

type Boot =
  | { state: 'loading' }
  | { state: 'setup' }
  | { state: 'signin' }
  | { state: 'in'; me: Me; startDemo: boolean }
  | { state: 'invite'; token: string; me: Me | undefined }
  | { state: 'error'; message: string };

/** The token of an invitation link, /invite/<token>. */
const inviteToken = (path: string) => /^\/invite\/([A-Za-z0-9_-]+)$/.exec(path)?.[1];

/** Decides what to show first: first-run setup, sign-in, or the app for the signed-in person. */
export function App() {
  const [boot, setBoot] = useState<Boot>({ state: 'loading' });
  const path = usePath();

  const signedIn = (me: Me, startDemo = false) => {
    setCsrfToken(me.csrfToken);
    // Back from single sign-on (api/sso-callback.ts): open the workspace it signed in to.
    const ssoWorkspace = new URLSearchParams(window.location.search).get('workspace');
    if (ssoWorkspace && me.workspaces.some((w) => w.id === ssoWorkspace)) rememberWorkspace(ssoWorkspace);
    setBoot({ state: 'in', me, startDemo });
    if (path === '/' || path === '/signin' || path === '/signin/sso' || path === '/setup') navigate('/inbox');
  };

  useEffect(() => {
    (async () => {
      const token = inviteToken(path);
      if (token) {
        // Whoever opens the link, signed in or not, sees the invitation first.
        const me = await api<Me>('GET', '/api/auth/me').catch(() => undefined);
        if (me) setCsrfToken(me.csrfToken);
        return setBoot({ state: 'invite', token, me });
      }
      try {
        const setup = await api<{ needed: boolean }>('GET', '/api/setup');
        if (setup.needed) return setBoot({ state: 'setup' });
        signedIn(await api<Me>('GET', '/api/auth/me'));
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) return setBoot({ state: 'signin' });
        setBoot({ state: 'error', message: errorMessage(e) });
      }
    })();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  switch (boot.state) {
    case 'loading':
      return <p className="boot">Loading…</p>;
    case 'error':
      return (
        <p className="boot note note-error" role="alert">
          Cadenza could not start: {boot.message}
        </p>
      );
    case 'invite':
      return (
        <AcceptInvite
          token={boot.token}
          me={boot.me}
          onJoined={(me, workspaceId) => {
            rememberWorkspace(workspaceId);
            setCsrfToken(me.csrfToken);
            setBoot({ state: 'in', me, startDemo: false });
            navigate('/inbox');
          }}
          onSignOut={async () => {
            await api('POST', '/api/auth/logout').catch(() => undefined);
            setCsrfToken('');
            setBoot({ state: 'invite', token: boot.token, me: undefined });
          }}
        />
      );
    case 'setup':
      return <Setup onDone={signedIn} />;
    case 'signin':
      return <SignIn onDone={signedIn} />;
    case 'in':
      return (
        <Shell
          me={boot.me}
          path={path}
          startDemo={boot.startDemo}
          onMeChanged={async () => setBoot({ state: 'in', me: await api<Me>('GET', '/api/auth/me'), startDemo: false })}
          onSignOut={async () => {
            await api('POST', '/api/auth/logout').catch(() => undefined);
            setCsrfToken('');
            setBoot({ state: 'signin' });
            navigate('/signin');
          }}
        />
      );
  }
}
