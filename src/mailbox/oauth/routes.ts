import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cadenzaError, isCadenzaError, type ErrorCode } from '../../common/errors.ts';
import { completeAuthorization, startAuthorization, type Connected, type OAuthFlowDeps } from './flow.ts';
import { isOAuthMode, isOAuthProviderName } from './providers.ts';

/**
 * The browser side of connecting a mailbox, from the web app's Mailboxes screen:
 *
 *   GET /oauth/:provider/start?workspaceId=…&mode=api|imap&email=hint
 *        signed in (session cookie), a member of the workspace at least: 302 to Google's or
 *        Microsoft's consent page; the flow records the workspace, the person and the session
 *   GET /oauth/callback
 *        where the provider sends the user back: only in the session that started the flow; the
 *        mailbox is created in the flow's workspace, owned by the flow's person
 *
 * A browser (Accept: text/html) is sent back to the web app's Mailboxes screen with the outcome
 * (?connected=address or ?oauthError=message); anything else gets JSON.
 *
 * The redirect URI registered with the providers is `<CADENZA_PUBLIC_URL>/oauth/callback`.
 */
export interface OAuthRoutesDeps extends OAuthFlowDeps {
  /**
   * Where the providers send the user back: the server's public URL (CADENZA_PUBLIC_URL). Absent,
   * the request's own origin (issue 11: browsing by IP, a fixed `localhost` sent the person to
   * their own machine); the provider must list `<that origin>/oauth/callback` as a redirect URI.
   */
  publicUrl?: string;
}

/** The origin the browser used for this request (Host, and the scheme Fastify sees: behind a proxy, its trustProxy setting). */
function requestOrigin(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

/** Who is asking, as the API's authentication sees it (api/auth/oauth-caller.ts implements it). */
export interface OAuthCaller {
  /**
   * The signed-in person and their session, if they belong to the workspace (member at least).
   * Throws, in this order: UNAUTHENTICATED (no session), FORBIDDEN (an API key), INVALID_INPUT
   * (no workspace id), NOT_FOUND (not their workspace).
   */
  forWorkspace(req: FastifyRequest, workspaceId: string | undefined): Promise<{ workspaceId: string; userId: string; sessionHash: string }>;
  /** The request's session (auth_session.id_hash), if any. */
  sessionHash(req: FastifyRequest): Promise<string | undefined>;
  /** A mailbox was connected through the callback: for the workspace's audit log. */
  connected?(req: FastifyRequest, done: Connected): Promise<void>;
}

const statusOf: Partial<Record<ErrorCode, number>> = {
  INVALID_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  MAILBOX_AUTH_FAILED: 403,
  MAILBOX_UNAVAILABLE: 502,
  CONFIG_INVALID: 503,
  CONFLICT: 409,
};

/** `caller` absent (a server without the API's sign-in): start refuses, since it could not tell who asks. */
export function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRoutesDeps & { caller?: OAuthCaller }): void {
  const configured = deps.publicUrl?.replace(/\/+$/, '');
  const baseOf = (req: FastifyRequest) => configured ?? requestOrigin(req);

  app.get<{ Params: { provider: string }; Querystring: { mode?: string; email?: string; workspaceId?: string } }>('/oauth/:provider/start', async (req, reply) => {
    const { provider } = req.params;
    const mode = req.query.mode ?? 'api';
    if (!isOAuthProviderName(provider)) return reply.code(404).send({ error: 'NOT_FOUND', message: `no OAuth provider '${provider}' (google, microsoft)` });
    if (!isOAuthMode(mode)) return reply.code(400).send({ error: 'INVALID_INPUT', message: `mode is api or imap, got '${mode}'` });
    const hint = req.query.email;
    if (hint !== undefined && !/^[^\s@]{1,200}@[^\s@]{1,200}$/.test(hint)) return reply.code(400).send({ error: 'INVALID_INPUT', message: 'email is not an address' });
    const workspaceId = req.query.workspaceId;
    const base = baseOf(req);
    const redirectUri = `${base}/oauth/callback`;
    try {
      if (!deps.caller) throw cadenzaError('CONFIG_INVALID', 'this server has no sign-in (API) configured, so it cannot tell who connects a mailbox; use `cadenza mailbox connect`');
      const who = await deps.caller.forWorkspace(req, workspaceId);
      const started = await startAuthorization(deps, {
        workspaceId: who.workspaceId,
        provider,
        mode,
        redirectUri,
        userId: who.userId,
        sessionHash: who.sessionHash,
        ...(hint ? { loginHint: hint } : {}),
      });
      return reply.header('cache-control', 'no-store').redirect(started.url.href, 302);
    } catch (e) {
      if ((req.headers.accept ?? '').includes('text/html') && isCadenzaError(e)) return reply.redirect(`${base}/mailboxes?${new URLSearchParams({ oauthError: e.message })}`, 303);
      return fail(reply, e);
    }
  });

  app.get('/oauth/callback', async (req, reply) => {
    const query = new URL(req.url, 'http://callback.invalid').searchParams;
    const page = (req.headers.accept ?? '').includes('text/html');
    const base = baseOf(req);
    reply.header('cache-control', 'no-store');
    try {
      const sessionHash = await deps.caller?.sessionHash(req);
      const done = await completeAuthorization(deps, query, sessionHash ? { sessionHash } : {});
      await deps.caller?.connected?.(req, done);
      if (page) return reply.redirect(`${base}/mailboxes?${new URLSearchParams({ connected: done.email })}`, 303);
      return reply.send({
        mailboxId: done.mailboxId,
        email: done.email,
        workspaceId: done.workspaceId,
        provider: done.provider,
        mode: done.mode,
        created: done.created,
      });
    } catch (e) {
      if (page && isCadenzaError(e)) return reply.redirect(`${base}/mailboxes?${new URLSearchParams({ oauthError: e.message })}`, 303);
      return fail(reply, e);
    }
  });
}

/** Domain errors to statuses; the message never holds a token (flow.ts builds them from error codes). */
function fail(reply: FastifyReply, e: unknown): FastifyReply {
  if (isCadenzaError(e)) return reply.code(statusOf[e.code] ?? 500).send({ error: e.code, message: e.message });
  throw e;
}
