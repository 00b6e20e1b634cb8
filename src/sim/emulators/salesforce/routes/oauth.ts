import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formBody } from '../../oauth/crm-app.ts';
import { s256 } from '../../oauth/grants.ts';
import type { EmulatorReply } from '../../server.ts';
import { oauthErrors } from '../errors.ts';
import type { Sessions } from '../sessions.ts';
import type { SalesforceStore } from '../store.ts';

/**
 * The OAuth endpoints on the org's own host (Salesforce Help, "OAuth 2.0 Refresh Token Flow",
 * "Revoke OAuth Tokens", "UserInfo Endpoint"). They do not count against the API allocation.
 *
 *   POST /services/oauth2/token     grant_type=refresh_token, client_id, client_secret,
 *                                   refresh_token (form-encoded) → {access_token, instance_url, id,
 *                                   token_type, issued_at, signature, scope}; no expires_in
 *                                   (Salesforce sends none: a client learns of the end from a 401)
 *   GET  /services/oauth2/authorize ("OAuth 2.0 Web Server Flow"; PKCE "required for new
 *                                   connected apps"): client_id, redirect_uri (one of the app's
 *                                   callback URLs), response_type=code, code_challenge (S256),
 *                                   state → 302 redirect_uri?code=…&state=…; the admin consents at
 *                                   once as the integration user; declined: ?error=access_denied
 *                                   &error_description=end-user denied authorization
 *   POST /services/oauth2/token     grant_type=authorization_code, code, client_id, client_secret,
 *                                   redirect_uri, code_verifier → the refresh answer with a
 *                                   refresh_token; a code is single use and lives 15 minutes
 *   POST /services/oauth2/revoke    token=… (access or refresh) → 200
 *   GET  /services/oauth2/userinfo  the session's user
 *
 * Route names for faults: `oauth.token`, `oauth.revoke`, `oauth.userinfo`.
 */
export interface OAuthRouteContext {
  store: SalesforceStore;
  sessions: Sessions;
  clients: ReadonlyArray<{ id: string; secret: string; callbackUrls: readonly string[] }>;
  /** Who consents on the authorize page. */
  consentingUserId: string;
  /** The next consent is declined (emulator.denyNext()). */
  denials: string[];
  now(): number;
  origin(): string;
  run(route: string, req: FastifyRequest, reply: FastifyReply, handler: () => EmulatorReply): Promise<FastifyReply>;
}

/** The body of a form post, which the emulator server keeps as bytes; a JSON body is not what the endpoint takes. */
const form = (req: FastifyRequest) => formBody(req);

interface Code {
  clientId: string;
  redirectUri: string;
  challenge: string;
  userId: string;
  expiresAt: number;
  used: boolean;
}

export function registerOAuthRoutes(app: FastifyInstance, ctx: OAuthRouteContext): void {
  const codes = new Map<string, Code>();
  let n = 0;
  app.get('/services/oauth2/authorize', (req, reply) =>
    ctx.run('oauth.authorize', req, reply, () => {
      const q = req.query as Record<string, string | undefined>;
      const client = ctx.clients.find((c) => c.id === q.client_id);
      // Shown on Salesforce's page, never redirected: the redirect URI is not trusted yet (texts unverified).
      if (!client) return { status: 400, headers: { 'content-type': 'text/plain' }, body: 'error=invalid_client_id: client identifier invalid' };
      if (!q.redirect_uri || !client.callbackUrls.includes(q.redirect_uri)) return { status: 400, headers: { 'content-type': 'text/plain' }, body: 'error=redirect_uri_mismatch: redirect_uri must match configuration' };
      const back = (params: Record<string, string>): EmulatorReply => {
        const u = new URL(q.redirect_uri!);
        for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
        if (q.state !== undefined) u.searchParams.set('state', q.state);
        return { status: 302, headers: { location: u.href } };
      };
      if (q.response_type !== 'code') return back({ error: 'unsupported_response_type', error_description: 'response type not supported' });
      if (!q.code_challenge || (q.code_challenge_method ?? 'S256') !== 'S256') return back({ error: 'invalid_request', error_description: 'missing required code challenge' });
      const denied = ctx.denials.shift();
      if (denied) return back({ error: denied, error_description: 'end-user denied authorization' });
      const code = `aPrx${Buffer.from(`code.${++n}.${ctx.now()}`).toString('base64url')}`;
      codes.set(code, { clientId: client.id, redirectUri: q.redirect_uri, challenge: q.code_challenge, userId: ctx.consentingUserId, expiresAt: ctx.now() + 15 * 60_000, used: false });
      return back({ code });
    }),
  );

  app.post('/services/oauth2/token', (req, reply) =>
    ctx.run('oauth.token', req, reply, () => {
      const f = form(req);
      if (!f) return oauthErrors.unsupportedGrantType();
      const grantType = f.get('grant_type');
      if (grantType !== 'refresh_token' && grantType !== 'authorization_code') return oauthErrors.unsupportedGrantType();
      const client = ctx.clients.find((c) => c.id === f.get('client_id'));
      if (!client) return oauthErrors.invalidClientId();
      if (client.secret !== f.get('client_secret')) return oauthErrors.invalidClient();
      let refreshToken: string | undefined;
      if (grantType === 'authorization_code') {
        const c = codes.get(f.get('code') ?? '');
        if (!c || c.used || c.clientId !== client.id || ctx.now() >= c.expiresAt) return oauthErrors.invalidGrant('invalid authorization code');
        if (f.get('redirect_uri') !== c.redirectUri) return oauthErrors.redirectUriMismatch();
        if (s256(f.get('code_verifier') ?? '') !== c.challenge) return oauthErrors.invalidGrant('invalid code verifier');
        c.used = true;
        refreshToken = ctx.sessions.grant(client.id, c.userId);
      }
      const issued = ctx.sessions.refresh(client.id, refreshToken ?? f.get('refresh_token') ?? '', ctx.now());
      if (!issued) return oauthErrors.invalidGrant();
      const now = ctx.now();
      return {
        status: 200,
        body: {
          access_token: issued.accessToken,
          signature: Buffer.from(`sig.${now}`).toString('base64'),
          scope: 'refresh_token api',
          instance_url: ctx.origin(),
          // The identity URL names the org and the user: the user id is its last segment.
          id: `${ctx.origin()}/id/${ctx.store.orgId}/${issued.userId}`,
          token_type: 'Bearer',
          issued_at: String(now),
          ...(refreshToken ? { refresh_token: refreshToken } : {}),
        },
      };
    }),
  );

  app.post('/services/oauth2/revoke', (req, reply) =>
    ctx.run('oauth.revoke', req, reply, () => {
      const token = form(req)?.get('token');
      return token && ctx.sessions.revoke(token) ? { status: 200 } : oauthErrors.unsupportedTokenType();
    }),
  );

  app.get('/services/oauth2/userinfo', (req, reply) =>
    ctx.run('oauth.userinfo', req, reply, () => {
      const s = ctx.sessions.check(req.headers.authorization, ctx.now());
      if (!s.ok) return oauthErrors.badOAuthToken();
      const u = ctx.store.get('User', s.userId)!;
      return {
        status: 200,
        body: {
          sub: `${ctx.origin()}/id/${ctx.store.orgId}/${u.Id}`,
          user_id: u.Id,
          organization_id: ctx.store.orgId,
          preferred_username: u.Username,
          name: u.Name,
          email: u.Email,
          email_verified: true,
          active: true,
          user_type: 'STANDARD',
        },
      };
    }),
  );
}
