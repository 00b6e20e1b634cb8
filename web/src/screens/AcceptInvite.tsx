import { useState, type FormEvent } from 'react';
import { call, errorMessage, setCsrfToken, type Me } from '../api.ts';
import { ErrorNote, Field } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { AuthFrame } from './Auth.tsx';
import type { InvitationAccepted as Joined } from '../types.ts';

/**
 * /invite/<token>: what the link offers, then the one step the invitee needs. Without an account:
 * name and password. With one: their password (sign in), then join. Signed in already: join, or
 * sign out first when the invitation is for another address.
 */
export function AcceptInvite({ token, me, onJoined, onSignOut }: { token: string; me: Me | undefined; onJoined: (me: Me, workspaceId: string) => void; onSignOut: () => void }) {
  // The token goes in a POST body, never a query string: it must not land in an access log.
  const preview = useLoad(() => call('POST /api/invitations/lookup', '/api/invitations/lookup', { token }), [token]);
  const p = preview.data;
  if (!p) {
    return (
      <AuthFrame title="Invitation" lead={preview.loading ? 'Opening the invitation…' : 'This invitation cannot be used.'}>
        <ErrorNote error={preview.error} />
        {preview.error && (
          <p>
            <a href="/">Go to Cadenza</a>
          </p>
        )}
      </AuthFrame>
    );
  }
  const who = p.invitedBy ?? 'An admin';
  const lead = `${who} invited ${p.email} to join ${p.workspaceName} as ${p.role === 'member' ? 'a' : 'an'} ${p.role}.`;
  const title = `Join ${p.workspaceName}`;
  if (me) {
    if (me.account.email.toLowerCase() !== p.email.toLowerCase()) {
      return (
        <AuthFrame title={title} lead={lead}>
          <p className="note note-error" role="alert">
            This invitation is for {p.email}, and you are signed in as {me.account.email}. Sign out, then open the link again.
          </p>
          <button type="button" className="btn btn-primary" onClick={onSignOut}>
            Sign out
          </button>
        </AuthFrame>
      );
    }
    return (
      <AuthFrame title={title} lead={lead}>
        <JoinForm label={`Join ${p.workspaceName}`} submit={() => call('POST /api/invitations/accept', '/api/invitations/accept', { token })} onJoined={onJoined} />
      </AuthFrame>
    );
  }
  if (p.accountExists) {
    return (
      <AuthFrame title={title} lead={`${lead} You have a Cadenza account: sign in to accept.`}>
        <SignInAndJoin token={token} email={p.email} onJoined={onJoined} />
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title={title} lead={`${lead} Choose your name and a password to create your account.`}>
      <SignUpAndJoin token={token} email={p.email} workspaceName={p.workspaceName} onJoined={onJoined} />
    </AuthFrame>
  );
}

/** A form whose one button runs `submit`, showing the API's refusal in place. */
function JoinForm({ label, submit, onJoined, children }: { label: string; submit: () => Promise<Joined>; onJoined: (me: Me, workspaceId: string) => void; children?: React.ReactNode }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const go = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const r = await submit();
      setCsrfToken(r.me.csrfToken);
      onJoined(r.me, r.workspaceId);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };
  return (
    <form onSubmit={go} className="stack">
      {children}
      <ErrorNote error={error} />
      <button type="submit" className="btn btn-primary" disabled={busy}>
        {busy ? 'Joining…' : label}
      </button>
    </form>
  );
}

function SignInAndJoin({ token, email, onJoined }: { token: string; email: string; onJoined: (me: Me, workspaceId: string) => void }) {
  const [password, setPassword] = useState('');
  const submit = async () => {
    const me = await call('POST /api/auth/login', '/api/auth/login', { email, password });
    setCsrfToken(me.csrfToken);
    return call('POST /api/invitations/accept', '/api/invitations/accept', { token });
  };
  return (
    <JoinForm label="Sign in and join" submit={submit} onJoined={onJoined}>
      <Field label="Email">
        <input type="email" autoComplete="username" readOnly value={email} />
      </Field>
      <Field label="Password">
        <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} autoFocus />
      </Field>
    </JoinForm>
  );
}

function SignUpAndJoin({ token, email, workspaceName, onJoined }: { token: string; email: string; workspaceName: string; onJoined: (me: Me, workspaceId: string) => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  return (
    <JoinForm label={`Create account and join ${workspaceName}`} submit={() => call('POST /api/invitations/signup', '/api/invitations/signup', { token, name, password })} onJoined={onJoined}>
      <Field label="Email">
        <input type="email" autoComplete="username" readOnly value={email} />
      </Field>
      <Field label="Your name">
        <input autoComplete="name" required value={name} onChange={(e) => setName(e.target.value)} autoFocus />
      </Field>
      <Field label="Password" hint="At least 10 characters.">
        <input type="password" autoComplete="new-password" required minLength={10} value={password} onChange={(e) => setPassword(e.target.value)} />
      </Field>
    </JoinForm>
  );
}
