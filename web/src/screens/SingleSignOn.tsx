import { useEffect, useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import { CopyField } from '../ui/CopyField.tsx';
import { Badge, ErrorNote, Field, SettingsFormEnd } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { useLoad } from '../ui/use-load.ts';
import { SsoDomains } from './SsoDomains.tsx';

type Role = 'admin' | 'member';

/** "sales-leads = admin" lines → rules; the line's number in the message when one is not understood. */
function parseMapping(text: string): Array<{ group: string; role: Role }> {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l, i) => {
      const m = /^(.+?)\s*=\s*(admin|member)$/i.exec(l);
      if (!m) throw new Error(`line ${i + 1} of the role mapping should read "group = admin" or "group = member"`);
      return { group: m[1]!.trim(), role: m[2]!.toLowerCase() as Role };
    });
}

/**
 * Single sign-on (admins): the workspace's OpenID Connect provider, the domains whose verified
 * addresses join on first sign-in, the groups that make an admin, and whether passwords still work
 * (docs/security.md "Single sign-on"). The client secret is write-only: stored sealed, never shown.
 */
export function SingleSignOn({ workspaceId }: { workspaceId: string }) {
  const s = useLoad(() => call('GET /api/workspaces/:workspaceId/sso', ws(workspaceId, 'sso')), [workspaceId]);
  const [f, setF] = useState({ issuer: '', clientId: '', clientSecret: '', domains: '', groupsClaim: 'groups', mapping: '', defaultRole: 'member' as Role, passwordAllowed: true, enabled: true });
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);
  const sso = s.data?.sso;
  useEffect(() => {
    if (sso)
      setF({
        issuer: sso.issuer,
        clientId: sso.clientId,
        clientSecret: '',
        domains: sso.allowedDomains.join(', '),
        groupsClaim: sso.groupsClaim,
        mapping: sso.roleMapping.map((r) => `${r.group} = ${r.role}`).join('\n'),
        defaultRole: sso.defaultRole,
        passwordAllowed: sso.passwordAllowed,
        enabled: sso.enabled,
      });
  }, [sso]);
  const text = (k: 'issuer' | 'clientId' | 'clientSecret' | 'domains' | 'groupsClaim' | 'mapping') => (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => setF({ ...f, [k]: e.target.value });
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setSaved(undefined);
    try {
      await call('PUT /api/workspaces/:workspaceId/sso', ws(workspaceId, 'sso'), {
        enabled: f.enabled,
        issuer: f.issuer.trim(),
        clientId: f.clientId.trim(),
        ...(f.clientSecret ? { clientSecret: f.clientSecret } : {}),
        allowedDomains: f.domains.split(/[\s,]+/).filter(Boolean),
        groupsClaim: f.groupsClaim.trim() || 'groups',
        roleMapping: parseMapping(f.mapping),
        defaultRole: f.defaultRole,
        passwordAllowed: f.passwordAllowed,
      });
      setSaved('Single sign-on saved.');
      s.reload();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const { ask, dialog } = useConfirm();
  const remove = async () => {
    if (!(await ask({ title: 'Remove single sign-on?', body: "The provider's settings and its client secret are deleted: everyone signs in with a password again.", action: 'Remove single sign-on' }))) return;
    setError(undefined);
    setSaved(undefined);
    try {
      await call('DELETE /api/workspaces/:workspaceId/sso', ws(workspaceId, 'sso'));
      setF({ issuer: '', clientId: '', clientSecret: '', domains: '', groupsClaim: 'groups', mapping: '', defaultRole: 'member', passwordAllowed: true, enabled: true });
      setSaved('Single sign-on removed: everyone signs in with a password again.');
      s.reload();
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <form className="card stack" onSubmit={save} aria-labelledby="settings-sso">
      {dialog}
      <h2 id="settings-sso">
        Single sign-on {sso ? <Badge tone={sso.enabled ? 'ok' : 'muted'}>{sso.enabled ? 'On' : 'Off'}</Badge> : <Badge tone="muted">Not set up</Badge>}
      </h2>
      <p className="muted">Your people sign in with your identity provider (Okta, Entra ID, Google Workspace, Keycloak… any OpenID Connect provider).</p>
      <ErrorNote error={s.error} />
      {s.data && <CopyField label="Redirect URI to register at the provider" value={s.data.redirectUri} copyLabel="Copy the redirect URI" />}
      {/* An agency client signing in on its own verified domain comes back there: that URI is registered too. */}
      {s.data?.redirectUris.slice(1).map((uri) => (
        <CopyField key={uri} label={`Also register, for sign-in on ${new URL(uri).hostname}`} value={uri} copyLabel={`Copy the redirect URI of ${new URL(uri).hostname}`} />
      ))}
      <fieldset disabled={!s.data} className="grid-2 plain-fieldset">
        <Field label="Issuer URL" hint="Its discovery document is read at <issuer>/.well-known/openid-configuration.">
          <input type="url" required value={f.issuer} onChange={text('issuer')} spellCheck={false} />
        </Field>
        <Field label="Client ID">
          <input required value={f.clientId} onChange={text('clientId')} spellCheck={false} autoComplete="off" />
        </Field>
        <Field label="Client secret" hint={sso ? 'Stored sealed and never shown; leave empty to keep it.' : 'Stored sealed and never shown again.'}>
          <input type="password" required={!sso} value={f.clientSecret} onChange={text('clientSecret')} autoComplete="new-password" />
        </Field>
        <Field label="Email domains that join" hint="A verified address of these domains gets an account on its first sign-in, once the domain is verified by DNS (below, after saving). Comma-separated.">
          <input value={f.domains} onChange={text('domains')} spellCheck={false} placeholder="example.com" />
        </Field>
        <Field label="Groups claim" hint="The ID token claim that lists a person's groups.">
          <input value={f.groupsClaim} onChange={text('groupsClaim')} spellCheck={false} />
        </Field>
        <Field label="Role mapping" hint='One "group = role" a line (admin or member); the first group that matches decides.'>
          <textarea rows={3} value={f.mapping} onChange={text('mapping')} spellCheck={false} placeholder="sales-leads = admin" />
        </Field>
        <Field label="Role of everyone else">
          <select value={f.defaultRole} onChange={(e) => setF({ ...f, defaultRole: e.target.value as Role })}>
            <option value="member">Member</option>
            <option value="admin">Admin</option>
          </select>
        </Field>
        <Field label="Passwords still work" hint="Unticked: members and admins sign in with SSO only. Owners keep their password, the way back in if the provider is down.">
          <input type="checkbox" checked={f.passwordAllowed} onChange={(e) => setF({ ...f, passwordAllowed: e.target.checked })} />
        </Field>
        <Field label="Single sign-on on">
          <input type="checkbox" checked={f.enabled} onChange={(e) => setF({ ...f, enabled: e.target.checked })} />
        </Field>
      </fieldset>
      {s.data && <SsoDomains workspaceId={workspaceId} domains={s.data.domains} onChecked={s.reload} />}
      <SettingsFormEnd error={error} saved={saved} canEdit>
        <div className="row">
          <button type="submit" className="btn btn-primary" disabled={busy || !s.data}>
            {busy ? 'Checking the provider…' : 'Save single sign-on'}
          </button>
          {sso && (
            <button type="button" className="btn" onClick={() => void remove()}>
              Remove single sign-on
            </button>
          )}
        </div>
      </SettingsFormEnd>
    </form>
  );
}
