import type { AuthorizationServer } from 'oauth4webapi';
import type { MailboxTable } from '../../store/schema.ts';
import type { MailboxSettings } from '../settings.ts';

/**
 * Google and Microsoft as OAuth 2 authorization servers for mailboxes: their documented endpoints,
 * the narrowest scopes for each way Cadenza reaches the mailbox, and what kind of mailbox a grant
 * becomes. One registry (`oauthProviders`), one entry per provider.
 *
 * Modes:
 *   api   Gmail API / Microsoft Graph for sending and reading (mailbox.provider gmail / graph)
 *   imap  IMAP + SMTP with SASL XOAUTH2 (mailbox.provider smtp_imap), for users or admins who
 *         prefer the protocols (or whose tenant blocks the Graph scopes)
 *
 * Scopes, and why no wider one:
 *   Google api   gmail.send (sending) + gmail.modify (reading: history.list, messages.get/list,
 *                the rfc822msgid: search of the Sent check; and writing labels: the folder actions
 *                the warmup feature needs, out of Spam into the inbox, starred, read, through
 *                users.messages.modify, mailbox/connectors/gmail/folder-actions.ts). gmail.modify
 *                is a superset of gmail.readonly, so that one is no longer asked; it cannot delete
 *                for good (mail.google.com/ can). Both are restricted scopes: an OAuth client used
 *                by anyone outside its own Workspace or its test users needs Google's verification
 *                and a yearly security assessment (docs/mailboxes.md).
 *   Google imap  https://mail.google.com/ : the only scope Gmail's IMAP and SMTP accept.
 *   MS api       Mail.ReadWrite (delta, messages, the internetMessageId search, and moving and
 *                flagging messages: message move and update) + Mail.Send. No User.Read: the
 *                address comes from the ID token (openid email profile), not from /me.
 *   MS imap      IMAP.AccessAsUser.All + SMTP.Send on the outlook.office.com resource; a token
 *                is for one resource, so these cannot be mixed with Graph scopes in one grant.
 *   Both ask openid + email for the ID token that names the account, and Microsoft needs
 *   offline_access for a refresh token (Google gives one with access_type=offline).
 */

export type OAuthProviderName = 'google' | 'microsoft';
export type OAuthMode = 'api' | 'imap';
export const oauthProviderNames: readonly OAuthProviderName[] = ['google', 'microsoft'];
export const oauthModes: readonly OAuthMode[] = ['api', 'imap'];

export interface OAuthProviderProfile {
  name: OAuthProviderName;
  /** For messages a user reads ("Google access was revoked…"). */
  label: string;
  /** The documented endpoints, so that production needs no discovery round trip. */
  metadata(tenant: string): AuthorizationServer;
  scopes(mode: OAuthMode): string[];
  /** Extra authorization request parameters the provider needs to hand out a refresh token. */
  authorizationParams(mode: OAuthMode): Record<string, string>;
  /**
   * Whether a refresh request names the scopes again. Microsoft's v2 endpoint wants them (a
   * refresh token can mint tokens for several resources; the scope picks one); Google's keeps the
   * granted set.
   */
  refreshWithScope: boolean;
  /** The mailbox a grant in this mode becomes. */
  mailbox(mode: OAuthMode): { provider: MailboxTable['provider']; settings: MailboxSettings };
}

const googleScopes: Record<OAuthMode, string[]> = {
  api: ['openid', 'email', 'https://www.googleapis.com/auth/gmail.send', 'https://www.googleapis.com/auth/gmail.modify'],
  imap: ['openid', 'email', 'https://mail.google.com/'],
};

const microsoftScopes: Record<OAuthMode, string[]> = {
  api: ['openid', 'email', 'profile', 'offline_access', 'https://graph.microsoft.com/Mail.ReadWrite', 'https://graph.microsoft.com/Mail.Send'],
  imap: ['openid', 'email', 'profile', 'offline_access', 'https://outlook.office.com/IMAP.AccessAsUser.All', 'https://outlook.office.com/SMTP.Send'],
};

const google: OAuthProviderProfile = {
  name: 'google',
  label: 'Google',
  metadata: () => ({
    issuer: 'https://accounts.google.com',
    authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
    token_endpoint: 'https://oauth2.googleapis.com/token',
    revocation_endpoint: 'https://oauth2.googleapis.com/revoke',
    userinfo_endpoint: 'https://openidconnect.googleapis.com/v1/userinfo',
    jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
    code_challenge_methods_supported: ['plain', 'S256'],
  }),
  scopes: (mode) => googleScopes[mode],
  // offline + consent: Google returns a refresh token only on a consent screen, and a reconnect
  // must get a new one (the old one may be the revoked one).
  authorizationParams: () => ({ access_type: 'offline', prompt: 'consent' }),
  refreshWithScope: false,
  mailbox: (mode) =>
    mode === 'api'
      ? { provider: 'gmail', settings: { serverSavesSent: true, oauth: { provider: 'google', mode } } }
      : {
          provider: 'smtp_imap',
          settings: {
            imap: { host: 'imap.gmail.com', port: 993, security: 'tls', allowSelfSigned: false },
            smtp: { host: 'smtp.gmail.com', port: 465, security: 'tls', allowSelfSigned: false },
            serverSavesSent: true,
            oauth: { provider: 'google', mode },
          },
        },
};

const microsoft: OAuthProviderProfile = {
  name: 'microsoft',
  label: 'Microsoft',
  metadata: (tenant) => {
    const base = `https://login.microsoftonline.com/${encodeURIComponent(tenant)}`;
    return {
      // For the multi-tenant names (common, organizations, consumers) this is a template: the ID
      // token's iss names the user's own tenant (see expectedIssuer in client.ts).
      issuer: isMultiTenant(tenant) ? 'https://login.microsoftonline.com/{tenantid}/v2.0' : `${base}/v2.0`,
      authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
      token_endpoint: `${base}/oauth2/v2.0/token`,
      jwks_uri: `${base}/discovery/v2.0/keys`,
      userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
      code_challenge_methods_supported: ['plain', 'S256'],
    };
  },
  scopes: (mode) => microsoftScopes[mode],
  authorizationParams: () => ({ prompt: 'select_account' }),
  refreshWithScope: true,
  mailbox: (mode) =>
    mode === 'api'
      ? { provider: 'graph', settings: { serverSavesSent: true, oauth: { provider: 'microsoft', mode } } }
      : {
          provider: 'smtp_imap',
          settings: {
            imap: { host: 'outlook.office365.com', port: 993, security: 'tls', allowSelfSigned: false },
            smtp: { host: 'smtp.office365.com', port: 587, security: 'starttls', allowSelfSigned: false },
            serverSavesSent: true,
            oauth: { provider: 'microsoft', mode },
          },
        },
};

export const oauthProviders: Record<OAuthProviderName, OAuthProviderProfile> = { google, microsoft };

const identityScopes = new Set(['openid', 'email', 'profile', 'offline_access']);

/**
 * What a refresh asks for where the provider wants the scopes named again (refreshWithScope): the
 * mode's identity scopes and the mail scopes the grant holds (the `scope` its token answers
 * listed, kept with the credential), never more. A refresh may not ask for more than was
 * consented (Microsoft: AADSTS65001), so a grant made when Cadenza asked for less (Mail.Read,
 * before the folder actions needed Mail.ReadWrite) keeps sending and syncing; its folder actions
 * answer `forbidden` until the mailbox is reconnected. Without a stored scope: the mode's.
 */
export function refreshScopes(asked: readonly string[], granted: string | undefined): string {
  const held = (granted ?? '').split(' ').filter((s) => s !== '' && !identityScopes.has(s));
  if (held.length === 0) return asked.join(' ');
  return [...asked.filter((s) => identityScopes.has(s)), ...held].join(' ');
}

export function isMultiTenant(tenant: string): boolean {
  return tenant === 'common' || tenant === 'organizations' || tenant === 'consumers';
}

export function isOAuthProviderName(v: unknown): v is OAuthProviderName {
  return typeof v === 'string' && (oauthProviderNames as readonly string[]).includes(v);
}

export function isOAuthMode(v: unknown): v is OAuthMode {
  return typeof v === 'string' && (oauthModes as readonly string[]).includes(v);
}
