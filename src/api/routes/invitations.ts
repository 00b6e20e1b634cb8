import { z } from 'zod';
import { ROLES, type Role } from '../auth/access.ts';
import { cadenzaError } from '../../common/errors.ts';
import {
  acceptInvitation,
  createInvitation,
  invitationLink,
  invitationMail,
  listInvitations,
  openInvitation,
  revokeInvitation,
  signUpWithInvitation,
  type Invitation,
} from '../auth/invitations.ts';
import { realClock, type ApiContext } from '../context.ts';
import { defineRoute, workspaceParams, type RouteContext } from '../http/route.ts';
import { me, meBody, password, startSession } from './auth.ts';
import { audit } from '../audit/actor.ts';
import { recordAudit } from '../audit/audit-log.ts';
import { workspaceName } from '../../workspace/workspace-row.ts';

const role = z.enum(ROLES);

/** Invitations expire in real time, even while a demo's clock runs ahead. */
const realTime = (ctx: ApiContext): ApiContext => ({ ...ctx, clock: realClock(ctx) });
const invitation = z
  .object({
    id: z.uuid(),
    email: z.string(),
    role,
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
    invitedBy: z.string().nullable(),
    createdAt: z.string(),
    expiresAt: z.string(),
    acceptedAt: z.string().nullable(),
  })
  .meta({ id: 'Invitation' });

const toBody = (i: Invitation): z.output<typeof invitation> => ({
  id: i.id,
  email: i.email,
  role: i.role,
  status: i.status,
  invitedBy: i.invitedBy,
  createdAt: i.createdAt.toISOString(),
  expiresAt: i.expiresAt.toISOString(),
  acceptedAt: i.acceptedAt?.toISOString() ?? null,
});

// Long enough that a cut-off link is told apart from a real one; the tokens are 43 characters.
const token = z.string().min(20).max(200).describe('The token from the invitation link, /invite/<token>');
/**
 * The token-guessing surfaces (lookup, accept, signup) get sign-in's per-IP limit, each route its
 * own count (the limiter keeps one per route). The tokens are 256 bits: this keeps a guesser from
 * costing the server, and its attempts visible as 429s.
 */
const invitationLimit = (ctx: ApiContext) => ({ max: ctx.loginLimit.perIp, windowMs: ctx.loginLimit.windowMs });
export const invitationCreated = z
  .object({
    invitation,
    emailed: z.boolean().describe('The invitation email was accepted by the mail server'),
    link: z.string().nullable().describe('The link to pass on yourself, when it was not emailed (no mailer configured, or sending failed); null when emailed'),
    mailError: z.string().nullable().describe("Why the email could not be sent; the invitation stands and `link` carries it"),
  })
  .meta({ id: 'InvitationCreated' });

/**
 * Invites an address and emails the link, or hands it to the caller: the one way into a
 * workspace, for POST …/invitations and POST …/members alike. The answer has the same shape
 * whether or not the address has an account anywhere, so adding a person tells nothing about them.
 */
export async function sendInvitation(c: RouteContext<unknown, unknown, unknown>, o: { email: string; role: Role }): Promise<z.output<typeof invitationCreated>> {
  const { ctx, ws } = c;
  const { invitation: inv, token: secret } = await createInvitation(ctx.store, realTime(ctx), {
    workspaceId: ws.workspaceId,
    email: o.email,
    role: o.role,
    inviterRole: ws.role,
    invitedBy: ws.userId,
  });
  const link = invitationLink(ctx.publicUrl, secret);
  let emailed = false;
  let mailError: string | null = null;
  if (ctx.mailer) {
    const name = await workspaceName(ctx.store.db, ws.workspaceId);
    try {
      await ctx.mailer.send({ to: inv.email, ...invitationMail({ workspaceName: name, invitedBy: inv.invitedBy, role: inv.role, link, expiresAt: inv.expiresAt }) });
      emailed = true;
    } catch (e) {
      // The server's answer (auth refused, unreachable) says what to fix; it never holds the message, so never the token.
      mailError = (e as Error).message;
    }
  }
  await audit(c, { action: 'invitation.sent', target: inv.email, detail: { role: inv.role, invitationId: inv.id, emailed } });
  return { invitation: toBody(inv), emailed, link: emailed ? null : link, mailError };
}

/** An accepted invitation in the joined workspace's log, and the member it added: the invitee as the actor. */
async function recordJoin(ctx: ApiContext, r: { workspaceId: string; userId: string; email: string; role: string; invitationId: string }, ip: string): Promise<void> {
  const actor = { kind: 'session' as const, userId: r.userId, label: r.email, ip };
  await recordAudit(
    ctx.store.db,
    realTime(ctx),
    { workspaceId: r.workspaceId, action: 'invitation.accepted', actor, target: r.email, detail: { role: r.role, invitationId: r.invitationId } },
    { workspaceId: r.workspaceId, action: 'member.added', actor, target: r.email, detail: { role: r.role, by: 'invitation' } },
  );
}

const joined = z.object({ workspaceId: z.uuid().describe('The workspace joined'), me: meBody }).meta({ id: 'InvitationAccepted' });

export const invitationRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/invitations',
    summary: 'Invitations to the workspace: pending and expired ones, and the latest accepted or withdrawn (admin)',
    tags: ['members'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.object({ invitations: z.array(invitation) }),
    handler: async ({ ctx, ws }) => ({ invitations: (await listInvitations(ctx.store.db, ws.workspaceId, realClock(ctx))).map(toBody) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/invitations',
    summary: 'Invite a person by email with a role, at most the inviter’s own (admin); emailed when Cadenza has a mailer, else the link is returned',
    tags: ['members'],
    access: { workspace: 'admin' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({ email: z.email().max(320), role }),
    example: () => ({ body: { email: 'new.rep@example.test', role: 'member' as const } }),
    response: invitationCreated,
    handler: (c) => sendInvitation(c, c.body),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/invitations/:invitationId',
    summary: 'Withdraw a pending invitation: its link stops working (admin)',
    tags: ['members'],
    access: { workspace: 'admin' },
    params: workspaceParams({ invitationId: z.uuid() }),
    response: invitation,
    handler: async (c) => {
      const { ctx, ws, params } = c;
      const inv = await revokeInvitation(ctx.store.db, realClock(ctx), { workspaceId: ws.workspaceId, invitationId: params.invitationId, revokerRole: ws.role });
      await audit(c, { action: 'invitation.revoked', target: inv.email, detail: { role: inv.role, invitationId: inv.id } });
      return toBody(inv);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/invitations/lookup',
    summary: 'What an invitation link offers: the workspace, the invited address and role, and whether that address has an account',
    tags: ['members'],
    access: 'public',
    // The token travels in the body, not the URL, so no access log or proxy ever records it.
    body: z.object({ token }),
    example: () => ({ body: { token: 'x'.repeat(43) } }),
    response: z
      .object({
        workspaceName: z.string(),
        email: z.string(),
        role,
        invitedBy: z.string().nullable(),
        expiresAt: z.string(),
        accountExists: z.boolean().describe('true: sign in, then accept; false: sign up with POST /api/invitations/signup'),
      })
      .meta({ id: 'InvitationPreview' }),
    // Unauthenticated and answers whether a token is good: limited per IP like sign-in, so tokens cannot be guessed at speed.
    rateLimit: invitationLimit,
    handler: async ({ ctx, body }) => {
      const inv = await openInvitation(ctx.store.db, body.token, realClock(ctx));
      return { workspaceName: inv.workspaceName, email: inv.email, role: inv.role, invitedBy: inv.invitedBy, expiresAt: inv.expiresAt.toISOString(), accountExists: inv.accountExists };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/invitations/accept',
    summary: 'The signed-in person accepts an invitation to their address and joins the workspace',
    tags: ['members'],
    access: 'account',
    body: z.object({ token }),
    example: () => ({ body: { token: 'x'.repeat(43) } }),
    response: joined,
    // Any account can try tokens here too: the same per-IP limit.
    rateLimit: invitationLimit,
    handler: async (c) => {
      const { ctx, principal, body } = c;
      if (principal?.kind !== 'session') throw cadenzaError('UNAUTHENTICATED', 'not signed in');
      const r = await acceptInvitation(ctx.store, realTime(ctx), { token: body.token, accountId: principal.accountId });
      await recordJoin(ctx, r, c.req.ip);
      return { workspaceId: r.workspaceId, me: await me(ctx, principal.accountId, principal.csrfToken) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/invitations/signup',
    summary: 'An invitee without an account creates one (their name and a password) for the invited address, joins, and is signed in',
    tags: ['members'],
    access: 'public',
    status: 201,
    body: z.object({ token, name: z.string().trim().min(1).max(200), password }),
    example: () => ({ body: { token: 'x'.repeat(43), name: 'New Rep', password: 'correct horse battery' } }),
    response: joined,
    // Each attempt costs an argon2 hash, and tries a token: limited per IP like sign-in.
    rateLimit: invitationLimit,
    handler: async (c) => {
      const { ctx, body } = c;
      // A dead link is refused before the password is hashed.
      await openInvitation(ctx.store.db, body.token, realClock(ctx));
      const r = await signUpWithInvitation(ctx.store, realTime(ctx), body);
      await recordJoin(ctx, r, c.req.ip);
      return { workspaceId: r.workspaceId, me: await startSession(c as RouteContext<unknown, unknown, unknown>, r.accountId) };
    },
  }),
];
