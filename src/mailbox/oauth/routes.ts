import type { FastifyInstance, FastifyReply } from 'fastify';
import { isCadenzaError, type ErrorCode } from '../../common/errors.ts';
import { resolveWorkspace } from '../../ops/workspace.ts';
import { completeAuthorization, startAuthorization, type OAuthFlowDeps } from './flow.ts';
import { isOAuthMode, isOAuthProviderName } from './providers.ts';

/**
 * The browser side of connecting a mailbox:
 *
 *   GET /oauth/:provider/start?mode=api|imap&email=hint   302 to Google's or Microsoft's consent page
 *   GET /oauth/callback                                   where the provider sends the user back
 *
 * The redirect URI registered with the providers is `<CADENZA_PUBLIC_URL>/oauth/callback`.
 *
 * Known gap until users and roles exist (the web app's issue): start puts the mailbox in the
 * default workspace and does not check who asks. Anyone who can reach the API can start a flow,
 * though only the account's owner can complete the consent, and the mailbox is theirs. Deploy the
 * API behind the operator's own access control until then.
 */
export interface OAuthRoutesDeps extends OAuthFlowDeps {
  /** Where the providers send the user back; the server's public URL. */
  publicUrl: string;
}

const statusOf: Partial<Record<ErrorCode, number>> = {
  INVALID_INPUT: 400,
  NOT_FOUND: 404,
  MAILBOX_AUTH_FAILED: 403,
  MAILBOX_UNAVAILABLE: 502,
  CONFIG_INVALID: 503,
  CONFLICT: 409,
};

export function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRoutesDeps): void {
  const redirectUri = `${deps.publicUrl.replace(/\/+$/, '')}/oauth/callback`;

  app.get<{ Params: { provider: string }; Querystring: { mode?: string; email?: string } }>('/oauth/:provider/start', async (req, reply) => {
    const { provider } = req.params;
    const mode = req.query.mode ?? 'api';
    if (!isOAuthProviderName(provider)) return reply.code(404).send({ error: 'NOT_FOUND', message: `no OAuth provider '${provider}' (google, microsoft)` });
    if (!isOAuthMode(mode)) return reply.code(400).send({ error: 'INVALID_INPUT', message: `mode is api or imap, got '${mode}'` });
    const hint = req.query.email;
    if (hint !== undefined && !/^[^\s@]{1,200}@[^\s@]{1,200}$/.test(hint)) return reply.code(400).send({ error: 'INVALID_INPUT', message: 'email is not an address' });
    try {
      const w = await resolveWorkspace(deps.store, undefined);
      const started = await startAuthorization(deps, { workspaceId: w.id, provider, mode, redirectUri, ...(hint ? { loginHint: hint } : {}) });
      // The flow is bound to this state only: no cookie, so a start in one browser and a callback in another still works.
      return reply.header('cache-control', 'no-store').redirect(started.url.href, 302);
    } catch (e) {
      return fail(reply, e);
    }
  });

  app.get('/oauth/callback', async (req, reply) => {
    const query = new URL(req.url, 'http://callback.invalid').searchParams;
    try {
      const done = await completeAuthorization(deps, query);
      return reply.header('cache-control', 'no-store').send({
        mailboxId: done.mailboxId,
        email: done.email,
        provider: done.provider,
        mode: done.mode,
        created: done.created,
      });
    } catch (e) {
      return fail(reply, e);
    }
  });
}

/** Domain errors to statuses; the message never holds a token (flow.ts builds them from error codes). */
function fail(reply: FastifyReply, e: unknown): FastifyReply {
  if (isCadenzaError(e)) return reply.code(statusOf[e.code] ?? 500).send({ error: e.code, message: e.message });
  throw e;
}
