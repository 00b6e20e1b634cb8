import type { FastifyRequest } from 'fastify';
import { cadenzaError } from '../../common/errors.ts';
import type { OAuthCaller } from '../../mailbox/oauth/routes.ts';
import type { ApiContext } from '../context.ts';
import { authenticate, workspaceAccess } from './access.ts';
import { secretHash } from './tokens.ts';

/**
 * The API's sign-in, as the OAuth connect routes (mailbox/oauth/routes.ts) need it: a person's
 * session only. An API key cannot complete a consent page in a browser, so it cannot start one.
 */
export function oauthCaller(ctx: ApiContext): OAuthCaller {
  return {
    async sessionHash(req: FastifyRequest) {
      // A bad Authorization header is not a session; the start refuses it below with a clearer word.
      const p = await authenticate(req, ctx).catch(() => undefined);
      return p?.kind === 'session' ? secretHash(p.sessionToken) : undefined;
    },
    async forWorkspace(req: FastifyRequest, workspaceId: string | undefined) {
      // Who asks first: an anonymous caller learns nothing, not even the parameter rules.
      const p = await authenticate(req, ctx);
      if (!p) throw cadenzaError('UNAUTHENTICATED', 'sign in to Cadenza first, then connect the mailbox from the Mailboxes screen');
      if (p.kind !== 'session') throw cadenzaError('FORBIDDEN', 'a mailbox is connected by a signed-in person in the web app, not with an API key');
      if (!workspaceId) throw cadenzaError('INVALID_INPUT', 'workspaceId (the workspace to add the mailbox to) is required', { field: 'workspaceId' });
      // A member at least; a workspace that is not theirs reads as not found.
      const ws = await workspaceAccess(ctx, p, workspaceId, 'member');
      return { workspaceId: ws.workspaceId, userId: ws.userId!, sessionHash: secretHash(p.sessionToken) };
    },
  };
}
