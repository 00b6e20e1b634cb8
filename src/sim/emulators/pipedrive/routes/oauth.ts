import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formBody, type CrmOAuthApp } from '../../oauth/crm-app.ts';
import type { EmulatorReply } from '../../server.ts';

/**
 * Pipedrive's OAuth for Marketplace apps (developers.pipedrive.com, "Authorization" / "OAuth
 * authorization"), oauth.pipedrive.com on the emulator's origin:
 *
 *   GET  /oauth/authorize   client_id, redirect_uri (the app's callback URL), state → 302 to
 *                           redirect_uri?code=…&state=…; declined: ?error=user_denied (unverified);
 *                           the scopes are the app's, set in its listing: none in the request
 *   POST /oauth/token       form-encoded only, the app's id and secret as HTTP Basic (documented;
 *                           in the form they are refused, as the emulator is strict):
 *                           grant_type=authorization_code, code, redirect_uri; or
 *                           grant_type=refresh_token, refresh_token → {access_token, token_type:
 *                           "Bearer", refresh_token, scope, expires_in: 3599, api_domain: the
 *                           company's API host}; every refresh returns a new refresh token and the
 *                           old one is dead (rotation)
 *
 * Errors: 401 invalid_client, 400 invalid_request / invalid_grant / unsupported_grant_type, in
 * the body {"success": false, "error", "message"} (the text unverified).
 * Route names for faults: `oauth.authorize`, `oauth.token`.
 */
type Run = (route: string, req: FastifyRequest, reply: FastifyReply, handler: () => EmulatorReply) => Promise<FastifyReply>;

const fail = (status: number, error: string, message: string): EmulatorReply => ({ status, headers: { 'cache-control': 'no-store' }, body: { success: false, error, message } });

export function registerPipedriveOAuthRoutes(app: FastifyInstance, run: Run, oauth: CrmOAuthApp, apiDomain: () => string): void {
  app.get('/oauth/authorize', (req, reply) =>
    run('oauth.authorize', req, reply, () => {
      const q = req.query as Record<string, string | undefined>;
      return oauth.authorizeReply(q, ['base'], q.scope !== undefined ? 'scope is not a parameter here: the scopes are set in the app’s listing' : null);
    }),
  );

  app.post('/oauth/token', (req, reply) =>
    run('oauth.token', req, reply, () => {
      const f = formBody(req);
      const grantType = f?.get('grant_type') ?? '';
      oauth.tokenRequests.push(grantType);
      if (!f) return fail(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
      const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      if (!basic || f.has('client_secret')) return fail(401, 'invalid_client', 'Client authentication failed: send the client id and secret as HTTP Basic');
      const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map((x) => decodeURIComponent(x));
      const c = oauth.client(id);
      if (!c || c.secret !== secret) return fail(401, 'invalid_client', 'Invalid client credentials');
      let r;
      if (grantType === 'authorization_code') {
        r = oauth.exchange(c, f.get('code') ?? '', f.get('redirect_uri'));
        if (r === 'bad_code') return fail(400, 'invalid_grant', 'Invalid grant: authorization code is invalid');
        if (r === 'bad_redirect') return fail(400, 'invalid_grant', 'Invalid grant: redirect_uri does not match');
      } else if (grantType === 'refresh_token') {
        r = oauth.refresh(c, f.get('refresh_token') ?? '');
        if (r === 'bad_refresh') return fail(400, 'invalid_grant', 'Invalid grant: refresh token is invalid');
      } else {
        return fail(400, 'unsupported_grant_type', `grant_type ${grantType || '(none)'} is not supported`);
      }
      return {
        status: 200,
        headers: { 'cache-control': 'no-store' },
        body: { access_token: r.accessToken, token_type: 'Bearer', refresh_token: r.refreshToken, scope: r.scopes.join(','), expires_in: r.expiresIn, api_domain: apiDomain() },
      };
    }),
  );
}
