import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
 *   POST /services/oauth2/revoke    token=… (access or refresh) → 200
 *   GET  /services/oauth2/userinfo  the session's user
 *
 * Route names for faults: `oauth.token`, `oauth.revoke`, `oauth.userinfo`.
 */
export interface OAuthRouteContext {
  store: SalesforceStore;
  sessions: Sessions;
  clients: ReadonlyArray<{ id: string; secret: string }>;
  now(): number;
  origin(): string;
  run(route: string, req: FastifyRequest, reply: FastifyReply, handler: () => EmulatorReply): Promise<FastifyReply>;
}

/** The body of a form post, which the emulator server keeps as bytes; a JSON body is not what the endpoint takes. */
function form(req: FastifyRequest): URLSearchParams | null {
  const type = String(req.headers['content-type'] ?? '');
  if (!type.startsWith('application/x-www-form-urlencoded') || !Buffer.isBuffer(req.body)) return null;
  return new URLSearchParams(req.body.toString('utf8'));
}

export function registerOAuthRoutes(app: FastifyInstance, ctx: OAuthRouteContext): void {
  app.post('/services/oauth2/token', (req, reply) =>
    ctx.run('oauth.token', req, reply, () => {
      const f = form(req);
      if (!f) return oauthErrors.unsupportedGrantType();
      if (f.get('grant_type') !== 'refresh_token') return oauthErrors.unsupportedGrantType();
      const client = ctx.clients.find((c) => c.id === f.get('client_id'));
      if (!client) return oauthErrors.invalidClientId();
      if (client.secret !== f.get('client_secret')) return oauthErrors.invalidClient();
      const issued = ctx.sessions.refresh(client.id, f.get('refresh_token') ?? '', ctx.now());
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
