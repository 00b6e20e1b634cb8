import { useEffect, useState } from 'react';
import { call, type Me } from '../api.ts';
import { navigate, usePath } from '../router.ts';
import { ErrorNote, Field, SubmitButton } from '../ui/parts.tsx';
import { inkOn } from '../ui/ink.ts';
import { useLoad } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';

/**
 * The frame of the pages before sign-in. On an agency client's own host (GET /api/branding, public,
 * by the request's Host: only the name, colours and logo) it wears the client's branding: its logo
 * and name on a band of its primary colour, primary buttons in that colour, its accent as the card's
 * edge. Text on a brand colour is black or white, whichever reads (inkOn), so any colours pass
 * WCAG contrast; links keep the app's own colour.
 */
export function AuthFrame({ title, lead, children }: { title: string; lead: string; children: React.ReactNode }) {
  const brand = useLoad(() => call('GET /api/branding', '/api/branding'), []);
  const b = brand.data?.branding ?? null;
  useEffect(() => {
    if (!b) return;
    const before = document.title;
    document.title = `${title} · ${b.displayName}`;
    return () => {
      document.title = before;
    };
  }, [b, title]);
  const style = b ? ({ '--brand-primary': b.primaryColor, '--brand-ink': inkOn(b.primaryColor), '--brand-accent': b.accentColor } as React.CSSProperties) : undefined;
  return (
    <main className={b ? 'auth auth-branded' : 'auth'} style={style}>
      <div className="auth-card">
        {b ? (
          <div className="auth-brand-band">
            {b.logoUrl && <img src={b.logoUrl} alt={`${b.displayName} logo`} height={40} />}
            <span className="brand-large">{b.displayName}</span>
          </div>
        ) : (
          <div className="brand brand-large" aria-hidden="true">
            Cadenza
          </div>
        )}
        <h1>{title}</h1>
        <p className="muted">{lead}</p>
        {children}
      </div>
    </main>
  );
}

/** The sign-in address, shared by the password and SSO forms so that switching keeps what was typed. */
function EmailField({ label, email, setEmail }: { label: string; email: string; setEmail: (e: string) => void }) {
  return (
    <Field label={label}>
      <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
    </Field>
  );
}

/** The sign-in screen's single sign-on form (where the SSO callback sends a refused sign-in back, api/sso-callback.ts). */
export const SSO_PATH = '/signin/sso';

/** A link between the two sign-in forms: a real address (it can be bookmarked), followed without a reload. */
function PathLink({ to, children }: { to: string; children: string }) {
  return (
    <a
      href={to}
      className="btn btn-wide"
      onClick={(e) => {
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** Where the SSO callback sends a refused sign-in back: its reason, in words (api/sso-callback.ts). */
const ssoErrorOf = () => new URLSearchParams(window.location.search).get('ssoError') ?? undefined;

export function SignIn({ onDone }: { onDone: (me: Me) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const sso = usePath() === SSO_PATH;
  const { busy, error, submit } = useSubmit(async () => onDone(await call('POST /api/auth/login', '/api/auth/login', { email, password })));
  if (sso) return <SsoSignIn email={email} setEmail={setEmail} />;
  return (
    <AuthFrame title="Sign in" lead="Sequences from your own mailboxes; replies caught within seconds.">
      <form onSubmit={submit} className="stack">
        <EmailField label="Email" email={email} setEmail={setEmail} />
        <Field label="Password">
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorNote error={error} />
        <SubmitButton busy={busy} busyText="Signing in…">
          Sign in
        </SubmitButton>
      </form>
      <PathLink to={SSO_PATH}>Sign in with SSO</PathLink>
    </AuthFrame>
  );
}

/** Single sign-on: the work address's domain finds the workspace's identity provider, where the browser goes. */
function SsoSignIn({ email, setEmail }: { email: string; setEmail: (e: string) => void }) {
  const [returned] = useState(ssoErrorOf);
  const { busy, error, submit } = useSubmit(
    async () => {
      const { url } = await call('POST /api/auth/sso/start', '/api/auth/sso/start', { email });
      window.location.assign(url);
    },
    { staysBusy: true },
  );
  return (
    <AuthFrame title="Sign in with SSO" lead="Your company's identity provider signs you in; your work address tells Cadenza which one.">
      <form onSubmit={submit} className="stack">
        <EmailField label="Work email" email={email} setEmail={setEmail} />
        <ErrorNote error={error ?? returned} />
        <SubmitButton busy={busy} busyText="Going to your identity provider…">
          Continue with SSO
        </SubmitButton>
      </form>
      <PathLink to="/signin">Sign in with a password instead</PathLink>
    </AuthFrame>
  );
}

export function Setup({ onDone }: { onDone: (me: Me, startDemo: boolean) => void }) {
  const [f, setF] = useState({
    setupToken: '',
    name: '',
    email: '',
    password: '',
    workspaceName: '',
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
  const [demo, setDemo] = useState(false);
  const set = (k: keyof typeof f) => (e: React.ChangeEvent<HTMLInputElement>) => setF({ ...f, [k]: e.target.value });
  const { busy, error, submit } = useSubmit(async () => {
    const body = { setupToken: f.setupToken.trim(), email: f.email, password: f.password, workspaceName: f.workspaceName, timeZone: f.timeZone, ...(f.name ? { name: f.name } : {}) };
    onDone(await call('POST /api/setup', '/api/setup', body), demo);
  });
  return (
    <AuthFrame title="Set up Cadenza" lead="Nobody has an account here yet. Create the owner account and the first workspace.">
      <form onSubmit={submit} className="stack">
        <Field label="Setup token" hint="Printed by cadenza start on its console, and in the file setup-token in its data folder. It proves you run this server.">
          <input required autoComplete="off" spellCheck={false} value={f.setupToken} onChange={set('setupToken')} autoFocus />
        </Field>
        <Field label="Your name">
          <input autoComplete="name" value={f.name} onChange={set('name')} />
        </Field>
        <Field label="Email">
          <input type="email" autoComplete="username" required value={f.email} onChange={set('email')} />
        </Field>
        <Field label="Password" hint="At least 10 characters.">
          <input type="password" autoComplete="new-password" required minLength={10} value={f.password} onChange={set('password')} />
        </Field>
        <Field label="Workspace name" hint="Your team or company.">
          <input required value={f.workspaceName} onChange={set('workspaceName')} />
        </Field>
        <Field label="Time zone" hint="Send windows and reports use it.">
          <input required value={f.timeZone} onChange={set('timeZone')} />
        </Field>
        <label className="check">
          <input type="checkbox" checked={demo} onChange={(e) => setDemo(e.target.checked)} /> Fill it with a demo: emulated Gmail and Microsoft mailboxes, 300 leads, two sequences
          and simulated prospects, a few days played in two minutes
        </label>
        <ErrorNote error={error} />
        <SubmitButton busy={busy} busyText="Creating…">
          Create workspace
        </SubmitButton>
      </form>
    </AuthFrame>
  );
}
