import type { FastifyReply, FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../../../common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { TokenRegistry } from '../tokens.ts';
import { google, microsoft, oidcProvider, type Flavour } from './flavours.ts';
import { GrantStore, s256, type AccessToken, type Audience, type Client, type Grant, type User } from './grants.ts';
import { createSigner } from './jwt.ts';

/**
 * An OAuth 2 / OpenID Connect authorization server that behaves as Google's or Microsoft's do
 * (their documented endpoints, parameters and error answers), on 127.0.0.1 and a random port:
 *
 *   discovery, JWKS (a real RSA key made at start), authorize (consents at once for the user named
 *   by login_hint, or the first user; `denyNext()` makes the user decline), token (authorization_code
 *   with PKCE S256 and redirect_uri checks; refresh_token with rotation; invalid_grant for a dead
 *   refresh token; invalid_client), revoke (Google), userinfo (Google), introspect (RFC 7662, what
 *   a mail server's XOAUTH2 check asks, e.g. Dovecot's oauth2 passdb; `?audience=` limits it to the
 *   tokens meant for that server).
 *
 * Access tokens for the Gmail API or Graph are issued through that emulator's TokenRegistry (pass
 * it in `registries`), so the API emulator accepts them, and refuses them once they expire or the
 * grant is revoked. Route names for faults: authorize, token, revoke, userinfo, introspect.
 */
export interface OAuthEmulatorOptions {
  /** 'oidc': any OpenID Connect provider (flavours.ts oidcProvider), for single sign-on. */
  flavour: 'google' | 'microsoft' | 'oidc';
  clients: Client[];
  users: Array<{ email: string; sub?: string; emailVerified?: boolean; groups?: string[]; name?: string }>;
  clock?: Clock;
  /** The API emulators' registries (gmail.tokens, graph.tokens); others are made here. */
  registries?: Partial<Record<Audience, TokenRegistry>>;
  /** Lifetime of an access token (default 3599 s, what Google answers). */
  accessTokenTtlS?: number;
  /** Every refresh returns a new refresh token (default: Microsoft yes, Google no). */
  rotateRefreshTokens?: boolean;
  /** Microsoft: the users' tenant id. */
  tenantId?: string;
}

export interface OAuthEmulator {
  origin: string;
  /** Google: the issuer; Microsoft: the login host (tenants below it). */
  issuer: string;
  grants: GrantStore;
  faults: FaultInjector;
  requests: RequestRecord[];
  registry(a: Audience): TokenRegistry;
  /** The next authorization is declined with this error (default access_denied). */
  denyNext(error?: string): void;
  /** The user unticks some permissions on the next consent screen (Google's granular consent): only these scopes are granted. */
  grantOnlyNext(scopes: string[]): void;
  /** The user (or an admin) revokes every grant of this user. */
  revokeUser(email: string): void;
  /** An access token live for this audience, as a mail server would check it over XOAUTH2. */
  introspect(token: string, audience?: Audience): AccessToken | undefined;
  /**
   * The next ID token is wrong in one way, as a broken or hostile provider (or a token replayed
   * from elsewhere) would send it: another nonce, another audience, expired, signed by another
   * key, or another issuer. For the relying party's checks (OpenID Connect Core §3.1.3.7).
   */
  spoilNextIdToken(how: IdTokenSpoil): void;
  /** Requests to the token endpoint, by grant type. */
  tokenRequests(grantType?: 'authorization_code' | 'refresh_token'): number;
  close(): Promise<void>;
}

export type IdTokenSpoil = 'nonce' | 'audience' | 'expired' | 'signature' | 'issuer';

export async function startOAuthEmulator(opts: OAuthEmulatorOptions): Promise<OAuthEmulator> {
  const clock = opts.clock ?? systemClock;
  const flavour: Flavour = { google, microsoft, oidc: oidcProvider }[opts.flavour];
  const tenantId = opts.tenantId ?? '9188040d-6c67-4c5b-b112-36a304b66dad';
  const users: User[] = opts.users.map((u, i) => ({
    email: u.email.toLowerCase(),
    sub: u.sub ?? `emu-user-${i + 1}`,
    tid: tenantId,
    ...(u.emailVerified !== undefined ? { emailVerified: u.emailVerified } : {}),
    ...(u.groups ? { groups: u.groups } : {}),
    ...(u.name ? { name: u.name } : {}),
  }));
  const registries: Partial<Record<Audience, TokenRegistry>> = { ...opts.registries };
  for (const a of ['gmail', 'graph', 'google-imap', 'outlook-imap'] as const) registries[a] ??= new TokenRegistry(`emu.${a}`);
  // Only the API audiences issue through a registry; IMAP/SMTP tokens are checked by introspection.
  const apiRegistries = { gmail: registries.gmail, graph: registries.graph };
  const grants = new GrantStore(clock, apiRegistries);
  const signer = createSigner();
  // A key nobody published: what a forged ID token is signed with.
  const stranger = createSigner();
  const spoils: IdTokenSpoil[] = [];
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];
  const grantTypes: string[] = [];
  const denials: string[] = [];
  const narrowings: string[][] = [];
  const ttl = opts.accessTokenTtlS ?? 3599;
  const rotates = opts.rotateRefreshTokens ?? flavour.rotates;
  let origin = '';

  const run = (route: string, req: FastifyRequest, reply: FastifyReply, handler: () => EmulatorReply | Promise<EmulatorReply>) =>
    runRoute({ faults, log }, route, req, reply, () => null, handler);
  const tokenError = (status: number, error: string, description: string): EmulatorReply => ({
    status,
    headers: { 'cache-control': 'no-store' },
    body: flavour.error(error, description),
  });
  const client = (id: string | undefined) => opts.clients.find((c) => c.id === id);

  /** A tenant path segment this server answers for. */
  const tenantOk = (t: string) => flavour.name !== 'microsoft' || ['common', 'organizations', 'consumers', tenantId].includes(t);

  function metadata(tenant: string) {
    const p = flavour.paths(tenant);
    return {
      issuer: flavour.metadataIssuer(origin, tenant),
      authorization_endpoint: origin + p.authorize,
      token_endpoint: origin + p.token,
      jwks_uri: origin + p.jwks,
      ...(p.revoke ? { revocation_endpoint: origin + p.revoke } : {}),
      ...(p.userinfo ? { userinfo_endpoint: origin + p.userinfo } : {}),
      introspection_endpoint: `${origin}/introspect`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['plain', 'S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      ...(flavour.name === 'oidc'
        ? { scopes_supported: ['openid', 'email', 'profile', 'groups', 'offline_access'], claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'email', 'email_verified', 'name', 'groups'] }
        : {}),
    };
  }

  function redirectMatches(c: Client, uri: string): boolean {
    if (c.redirectUris.includes(uri)) return true;
    // RFC 8252 §7.3: a loopback redirect may use any port.
    let u: URL;
    try {
      u = new URL(uri);
    } catch {
      return false;
    }
    if (u.protocol !== 'http:' || (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost')) return false;
    const portless = `${u.protocol}//${u.hostname}${u.pathname}`;
    return c.redirectUris.includes(portless);
  }

  function authorize(q: Record<string, string | undefined>): EmulatorReply {
    const c = client(q.client_id);
    // Errors about the client or the redirect URI are shown to the user, never redirected
    // (RFC 6749 §4.1.2.1): the redirect URI cannot be trusted.
    if (!c) return { status: 400, body: 'Error 401: invalid_client. The OAuth client was not found.' };
    if (!q.redirect_uri || !redirectMatches(c, q.redirect_uri)) return { status: 400, body: 'Error 400: redirect_uri_mismatch' };
    const back = (params: Record<string, string>) => {
      const u = new URL(q.redirect_uri!);
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
      if (q.state !== undefined) u.searchParams.set('state', q.state);
      return { status: 302, headers: { location: u.href } };
    };
    if (q.response_type !== 'code') return back({ error: 'unsupported_response_type' });
    if (!q.code_challenge || q.code_challenge_method !== 'S256') return back({ error: 'invalid_request', error_description: 'PKCE S256 code_challenge required' });
    const scopes = (q.scope ?? '').split(' ').filter(Boolean);
    const aud = flavour.audiences(scopes);
    if (typeof aud === 'string') return back({ error: 'invalid_scope', error_description: aud });
    const denied = denials.shift();
    if (denied) return back({ error: denied, error_description: 'The user declined.' });
    const user = users.find((u) => u.email === q.login_hint?.toLowerCase()) ?? users[0];
    if (!user) return back({ error: 'access_denied', error_description: 'no test user' });
    const only = narrowings.shift();
    const granted = only ? scopes.filter((s) => only.includes(s)) : scopes;
    const code = grants.newCode({ clientId: c.id, redirectUri: q.redirect_uri, challenge: q.code_challenge, scopes: granted, nonce: q.nonce, user, accessType: q.access_type });
    return back({ code: code.code });
  }

  function authenticate(req: FastifyRequest, form: URLSearchParams): Client | undefined {
    let id = form.get('client_id') ?? undefined;
    let secret = form.get('client_secret') ?? undefined;
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const [i, s] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map((x) => decodeURIComponent(x));
      id = i;
      secret = s;
    }
    const c = client(id);
    return c && c.secret === secret ? c : undefined;
  }

  /** `id`: an ID token (when openid was granted), with the authorization request's nonce if any; null: none. */
  function issue(g: Grant, scopes: string[], withRefresh: boolean, id: { nonce: string | undefined } | null): EmulatorReply {
    const aud = flavour.audiences(scopes) as Audience[];
    const at = grants.newAccessToken(g, scopes, aud, ttl);
    const body: Record<string, unknown> = { access_token: at.token, token_type: 'Bearer', expires_in: ttl, scope: scopes.join(' ') };
    if (withRefresh) body.refresh_token = grants.newRefreshToken(g);
    if (scopes.includes('openid') && id) {
      const now = Math.floor(clock.now() / 1000);
      const spoil = spoils.shift();
      const claims = {
        iss: spoil === 'issuer' ? `${origin}/elsewhere` : flavour.tokenIssuer(origin, g.user),
        aud: spoil === 'audience' ? 'another-client' : g.clientId,
        azp: spoil === 'audience' ? 'another-client' : g.clientId,
        iat: spoil === 'expired' ? now - 7200 : now,
        exp: spoil === 'expired' ? now - 3600 : now + 3600,
        ...(id.nonce ? { nonce: spoil === 'nonce' ? `${id.nonce}-other` : id.nonce } : {}),
        ...flavour.idClaims(g.user),
      };
      body.id_token = spoil === 'signature' ? stranger.sign(claims, signer.kid) : signer.sign(claims);
    }
    return { status: 200, headers: { 'cache-control': 'no-store', pragma: 'no-cache' }, body };
  }

  function token(req: FastifyRequest): EmulatorReply {
    const form = new URLSearchParams(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : typeof req.body === 'string' ? req.body : '');
    const grantType = form.get('grant_type') ?? '';
    grantTypes.push(grantType);
    const c = authenticate(req, form);
    if (!c) return tokenError(401, 'invalid_client', flavour.name !== 'microsoft' ? 'Unauthorized' : 'AADSTS7000215: Invalid client secret provided.');
    if (grantType === 'authorization_code') {
      const code = grants.codes.get(form.get('code') ?? '');
      if (!code || code.clientId !== c.id || clock.now() >= code.expiresAt) return tokenError(400, 'invalid_grant', flavour.name !== 'microsoft' ? 'Malformed auth code.' : 'AADSTS70008: The provided authorization code or refresh token has expired.');
      if (code.used) {
        // RFC 6749 §4.1.2: a code used twice revokes what it gave the first time.
        const g = code.grantId ? grants.grants.get(code.grantId) : undefined;
        if (g) grants.revokeGrant(g);
        return tokenError(400, 'invalid_grant', flavour.name !== 'microsoft' ? 'Bad Request' : 'AADSTS54005: OAuth2 Authorization code was already redeemed.');
      }
      if (form.get('redirect_uri') !== code.redirectUri) {
        return flavour.name !== 'microsoft' ? tokenError(400, 'redirect_uri_mismatch', 'Bad Request') : tokenError(400, 'invalid_grant', 'AADSTS50148: The redirect_uri does not match.');
      }
      const verifier = form.get('code_verifier');
      if (!verifier) return tokenError(400, 'invalid_request', flavour.name !== 'microsoft' ? 'Missing code verifier.' : 'AADSTS50148: The code_verifier is missing.');
      if (s256(verifier) !== code.challenge) return tokenError(400, 'invalid_grant', flavour.name !== 'microsoft' ? 'Invalid code verifier.' : 'AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request.');
      code.used = true;
      const g = grants.newGrant(c.id, code.user, code.scopes);
      code.grantId = g.id;
      return issue(g, code.scopes, flavour.refreshTokenIssued(code.scopes, code.accessType), { nonce: code.nonce });
    }
    if (grantType === 'refresh_token') {
      const rt = form.get('refresh_token') ?? '';
      const g = grants.grantOfRefreshToken(rt);
      if (!g) return tokenError(400, 'invalid_grant', flavour.invalidGrantDescription);
      if (g.clientId !== c.id) return tokenError(400, flavour.name !== 'microsoft' ? 'unauthorized_client' : 'invalid_grant', 'AADSTS700024: The refresh token was issued to a different client.');
      const asked = (form.get('scope') ?? '').split(' ').filter(Boolean);
      const scopes = asked.length ? asked : g.scopes;
      const extra = scopes.filter((s) => !g.scopes.includes(s));
      if (extra.length) return tokenError(400, 'invalid_scope', `AADSTS65001: The user or administrator has not consented to use ${extra.join(' ')}.`);
      if (typeof flavour.audiences(scopes) === 'string') return tokenError(400, 'invalid_scope', flavour.audiences(scopes) as string);
      // Both providers send a fresh ID token (no nonce) on refresh when openid was granted.
      return issue(g, scopes, rotates, { nonce: undefined });
    }
    return tokenError(400, 'unsupported_grant_type', `grant_type ${grantType || '(none)'} is not supported`);
  }

  function revoke(req: FastifyRequest): EmulatorReply {
    const form = new URLSearchParams(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
    const t = form.get('token') ?? '';
    const g = grants.grantOfRefreshToken(t) ?? grants.grants.get(grants.accessTokens.get(t)?.grantId ?? '');
    if (!g || g.revoked) return { status: 400, body: { error: 'invalid_token', error_description: 'Token expired or revoked' } };
    grants.revokeGrant(g);
    return { status: 200, body: {} };
  }

  const server = await startEmulatorServer((app) => {
    const paths = flavour.paths(':tenant');
    app.get(paths.discovery, (req, reply) =>
      run('discovery', req, reply, () => {
        const t = (req.params as { tenant?: string }).tenant ?? '';
        return tenantOk(t) ? { status: 200, body: metadata(t) } : { status: 400, body: { error: 'invalid_tenant' } };
      }),
    );
    app.get(paths.jwks, (req, reply) => run('jwks', req, reply, () => ({ status: 200, body: signer.jwks })));
    app.get(paths.authorize, (req, reply) => run('authorize', req, reply, () => authorize(req.query as Record<string, string | undefined>)));
    app.post(paths.token, (req, reply) => run('token', req, reply, () => token(req)));
    if (paths.revoke) app.post(paths.revoke, (req, reply) => run('revoke', req, reply, () => revoke(req)));
    if (paths.userinfo) {
      app.get(paths.userinfo, (req, reply) =>
        run('userinfo', req, reply, () => {
          const t = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
          const at = grants.introspect(t);
          if (!at) return { status: 401, body: { error: 'invalid_token' } };
          return { status: 200, body: flavour.idClaims(at.user) };
        }),
      );
    }
    app.post('/introspect', (req, reply) =>
      run('introspect', req, reply, () => {
        const form = new URLSearchParams(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
        // ?audience=google-imap: the mail server asking only accepts tokens meant for it (a Graph
        // token is refused by IMAP, and the reverse).
        const audience = (req.query as { audience?: Audience }).audience;
        const at = grants.introspect(form.get('token') ?? '', audience);
        if (!at) return { status: 200, body: { active: false } };
        return { status: 200, body: { active: true, username: at.user.email, sub: at.user.sub, scope: at.scopes.join(' '), exp: Math.floor(at.expiresAt / 1000), aud: at.audiences } };
      }),
    );
  });
  origin = server.origin;

  return {
    origin,
    issuer: origin,
    grants,
    faults,
    requests: log,
    registry: (a) => registries[a]!,
    denyNext: (error = 'access_denied') => void denials.push(error),
    grantOnlyNext: (scopes) => void narrowings.push(scopes),
    spoilNextIdToken: (how) => void spoils.push(how),
    revokeUser(email) {
      for (const g of grants.grants.values()) if (g.user.email === email.toLowerCase()) grants.revokeGrant(g);
    },
    introspect: (t, a) => grants.introspect(t, a),
    tokenRequests: (gt) => (gt ? grantTypes.filter((x) => x === gt).length : grantTypes.length),
    async close() {
      grants.close();
      await server.close();
    },
  };
}
