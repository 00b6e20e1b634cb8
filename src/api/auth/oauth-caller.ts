import type { FastifyRequest } from 'fastify';
import { cadenzaError } from '../../common/errors.ts';
import type { OAuthCaller } from '../../mailbox/oauth/routes.ts';
import { realClock, type ApiContext } from '../context.ts';
import { recordAudit } from '../audit/audit-log.ts';
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
    async connected(req: FastifyRequest, done) {
      // The flow was bound to this session at its start; the person is the mailbox's owner.
      const u = done.userId ? await ctx.store.db.selectFrom('app_user').select('email').where('id', '=', done.userId).executeTakeFirst() : undefined;
      await recordAudit(ctx.store.db, { clock: realClock(ctx), random: ctx.random }, {
        workspaceId: done.workspaceId,
        action: 'mailbox.connected',
        actor: u ? { kind: 'session', userId: done.userId, label: u.email, ip: req.ip } : { kind: 'system', label: 'Cadenza (OAuth started from the CLI)', ip: req.ip },
        target: done.email,
        detail: { mailboxId: done.mailboxId, provider: done.oauthProvider, mode: done.mode, reconnected: !done.created },
      });
    },
  };
}
