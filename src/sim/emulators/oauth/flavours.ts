import type { Audience, User } from './grants.ts';

/**
 * What differs between Google's and Microsoft's authorization servers, as documented
 * (gmail-api.md and microsoft-graph-mail.md "OAuth" in the shared provider notes):
 * paths, the issuer, which scopes exist and which servers accept the token, ID token claims,
 * error bodies, and refresh-token rotation.
 */
export interface Flavour {
  name: 'google' | 'microsoft' | 'oidc';
  /** Path prefix of a tenant's endpoints ('' for Google). */
  paths(tenant: string): { discovery: string; authorize: string; token: string; revoke?: string; jwks: string; userinfo?: string };
  /** The issuer in the discovery document for this tenant path. */
  metadataIssuer(origin: string, tenant: string): string;
  /** The issuer in an ID token for this user. */
  tokenIssuer(origin: string, user: User): string;
  /** Audiences a token for these scopes is good for; a string is an invalid_scope description. */
  audiences(scopes: string[]): Audience[] | string;
  idClaims(user: User): Record<string, unknown>;
  /** Error body of the token endpoint. */
  error(error: string, description: string): Record<string, unknown>;
  /** Whether every refresh returns a new refresh token. */
  rotates: boolean;
  /** Whether a refresh token is issued without offline_access (Google: with access_type=offline). */
  refreshTokenIssued(scopes: string[], accessType: string | undefined): boolean;
  invalidGrantDescription: string;
}

const G = 'https://www.googleapis.com/auth/';
const googleScopes: Record<string, Audience[]> = {
  [`${G}gmail.send`]: ['gmail'],
  [`${G}gmail.readonly`]: ['gmail'],
  [`${G}gmail.modify`]: ['gmail'],
  [`${G}gmail.metadata`]: ['gmail'],
  'https://mail.google.com/': ['gmail', 'google-imap'],
};
const oidc = new Set(['openid', 'email', 'profile']);

export const google: Flavour = {
  name: 'google',
  paths: () => ({
    discovery: '/.well-known/openid-configuration',
    authorize: '/o/oauth2/v2/auth',
    token: '/token',
    revoke: '/revoke',
    jwks: '/oauth2/v3/certs',
    userinfo: '/v1/userinfo',
  }),
  metadataIssuer: (origin) => origin,
  tokenIssuer: (origin) => origin,
  audiences(scopes) {
    const out = new Set<Audience>();
    for (const s of scopes) {
      if (oidc.has(s)) continue;
      const a = googleScopes[s];
      if (!a) return `Some requested scopes were invalid. {invalid=[${s}]}`;
      for (const x of a) out.add(x);
    }
    return [...out];
  },
  idClaims: (u) => ({ sub: u.sub, email: u.email, email_verified: true }),
  error: (error, description) => ({ error, error_description: description }),
  rotates: false,
  refreshTokenIssued: (_scopes, accessType) => accessType === 'offline',
  invalidGrantDescription: 'Token has been expired or revoked.',
};

const graph = 'https://graph.microsoft.com/';
const outlook = 'https://outlook.office.com/';

export const microsoft: Flavour = {
  name: 'microsoft',
  paths: (tenant) => ({
    discovery: `/${tenant}/v2.0/.well-known/openid-configuration`,
    authorize: `/${tenant}/oauth2/v2.0/authorize`,
    token: `/${tenant}/oauth2/v2.0/token`,
    jwks: `/${tenant}/discovery/v2.0/keys`,
  }),
  metadataIssuer: (origin, tenant) =>
    tenant === 'common' || tenant === 'organizations' || tenant === 'consumers' ? `${origin}/{tenantid}/v2.0` : `${origin}/${tenant}/v2.0`,
  tokenIssuer: (origin, u) => `${origin}/${u.tid}/v2.0`,
  audiences(scopes) {
    // One resource per token: Graph scopes and outlook.office.com scopes cannot be mixed
    // (AADSTS28000), which is why IMAP/SMTP need their own grant.
    const resources = new Set<Audience>();
    for (const s of scopes) {
      if (oidc.has(s) || s === 'offline_access') continue;
      if (s.startsWith(graph) && /^(Mail\.(Read|ReadBasic|ReadWrite|Send)|User\.Read)$/.test(s.slice(graph.length))) resources.add('graph');
      else if (s.startsWith(outlook) && /^(IMAP\.AccessAsUser\.All|SMTP\.Send)$/.test(s.slice(outlook.length))) resources.add('outlook-imap');
      else return `AADSTS70011: The provided value for scope ${s} is not valid.`;
    }
    if (resources.size > 1) return 'AADSTS28000: Provided value for the input parameter scope is not valid because it contains more than one resource.';
    return [...resources];
  },
  idClaims: (u) => ({ sub: u.sub, oid: u.sub, tid: u.tid, preferred_username: u.email, name: u.email.split('@')[0], ver: '2.0' }),
  error: (error, description) => ({
    error,
    error_description: description,
    error_codes: [Number(/AADSTS(\d+)/.exec(description)?.[1] ?? 0)],
    timestamp: new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z',
    trace_id: '00000000-0000-0000-0000-000000000000',
    correlation_id: '00000000-0000-0000-0000-000000000000',
  }),
  rotates: true,
  refreshTokenIssued: (scopes) => scopes.includes('offline_access'),
  invalidGrantDescription: 'AADSTS70000: The provided grant has expired due to it being revoked, a fresh auth token is needed.',
};

/**
 * Any OpenID Connect provider (Okta, Keycloak, Authentik, Auth0, an Entra ID app with email
 * claims…) as OpenID Connect Core 1.0 and Discovery 1.0 describe one: the issuer is the origin,
 * discovery at `/.well-known/openid-configuration`, standard claims (§5.1) `email`,
 * `email_verified`, `name`, and the `groups` claim most providers add for group membership.
 * Only the OpenID scopes exist; a refresh token only with offline_access (§11).
 */
export const oidcProvider: Flavour = {
  // The issuer is the origin, errors are RFC 6749's, no rotation: as Google.
  ...google,
  name: 'oidc',
  paths: () => ({ discovery: '/.well-known/openid-configuration', authorize: '/authorize', token: '/token', jwks: '/jwks', userinfo: '/userinfo' }),
  audiences(scopes) {
    for (const s of scopes) if (!oidc.has(s) && s !== 'offline_access' && s !== 'groups') return `invalid_scope: ${s}`;
    return [];
  },
  idClaims: (u) => ({
    sub: u.sub,
    email: u.email,
    email_verified: u.emailVerified ?? true,
    ...(u.name ? { name: u.name } : {}),
    ...(u.groups ? { groups: u.groups } : {}),
  }),
  refreshTokenIssued: (scopes) => scopes.includes('offline_access'),
  invalidGrantDescription: 'Token is not active',
};
