import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { audit } from '../audit/actor.ts';
import { roleAtLeast, ROLES } from '../auth/access.ts';
import { capAtRole, revokeWhatTheyLeft } from '../auth/member-departure.ts';
import { changeMember, deleteMember, findMember, keepAnOwner, listMembers, type MemberRow } from '../auth/members.ts';
import { repNumber } from '../../dialer/rep-number.ts';
import { realClock } from '../context.ts';
import { defineRoute, workspaceParams, type RouteContext } from '../http/route.ts';
import { invitationCreated, sendInvitation } from './invitations.ts';

const role = z.enum(ROLES);
const member = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string().nullable(),
    role,
    inboxScope: z.enum(['own', 'all']).describe("own: a member reads only their mailboxes' replies; all: every mailbox's"),
    canSignIn: z.boolean(),
    phoneNumber: z.string().nullable().describe("Their number on the SIP trunk (E.164): the caller ID of the calls they place and the DID whose incoming calls ring their browser; null: the trunk's default caller ID (docs/dialer.md)"),
  })
  .meta({ id: 'Member' });

const toMember = (r: MemberRow): z.output<typeof member> => ({ id: r.id, email: r.email, name: r.name, role: r.role, inboxScope: r.inbox_scope, canSignIn: r.account_id !== null, phoneNumber: r.phone_number });

export const memberRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/members',
    summary: "The workspace's members and their roles",
    tags: ['members'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ members: z.array(member) }),
    handler: async ({ ctx, ws }) => {
      return { members: (await listMembers(ctx.store.db, ws.workspaceId)).map(toMember) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/members',
    summary: 'Add a person to the workspace (admin): they are invited, and join once they accept the link (same as POST …/invitations)',
    tags: ['members'],
    access: { workspace: 'admin' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({
      email: z.email().max(320),
      name: z.string().min(1).max(200).optional().describe('Unused: the person gives their own name when they accept'),
      role,
      initialPassword: z.string().max(1024).optional().describe('No longer taken: refused with a 400. The person sets their own password from the invitation link'),
    }),
    example: () => ({ body: { email: 'new.member@example.test', role: 'member' as const } }),
    response: invitationCreated,
    handler: async (c) => {
      // An admin-chosen password for someone else's address is how an account could be
      // pre-registered and then held by the admin; nobody but the address's holder sets it now.
      if (c.body.initialPassword !== undefined) {
        throw cadenzaError('INVALID_INPUT', 'initialPassword is no longer taken: the person is invited and sets their own password from the link', { field: 'initialPassword' });
      }
      return sendInvitation(c as RouteContext<unknown, unknown, unknown>, c.body);
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/members/:memberId',
    summary: "Change a member's role, inbox scope or phone number (admin; only an owner makes or unmakes owners)",
    tags: ['members'],
    access: { workspace: 'admin' },
    params: workspaceParams({ memberId: z.uuid() }),
    body: z
      .object({
        role,
        inboxScope: z.enum(['own', 'all']),
        phoneNumber: z.string().max(64).nullable().describe("The member's number on the SIP trunk, in international form (+ and the calling code); null removes it. Their next phone credential carries it"),
      })
      .partial(),
    example: () => ({ body: { inboxScope: 'all' as const } }),
    response: member,
    handler: async (c) => {
      const { ctx, ws, params, body } = c;
      const db = ctx.store.db;
      const target = await findMember(db, ws.workspaceId, params.memberId);
      if (!target) throw cadenzaError('NOT_FOUND', 'no such member in this workspace');
      if (body.role && (target.role === 'owner' || body.role === 'owner') && ws.role !== 'owner') throw cadenzaError('FORBIDDEN', 'only an owner changes who is an owner');
      if (body.role && target.role === 'owner' && body.role !== 'owner') await keepAnOwner(db, ws.workspaceId, target.id);
      const roleChanged = body.role !== undefined && body.role !== target.role;
      let phoneNumber: string | null | undefined;
      if (typeof body.phoneNumber === 'string') {
        const v = repNumber(body.phoneNumber);
        if (!v.ok) throw cadenzaError('INVALID_INPUT', `phoneNumber: ${v.reason}`, { field: 'phoneNumber' });
        phoneNumber = v.e164;
      } else phoneNumber = body.phoneNumber;
      await db.transaction().execute(async (tx) => {
        await changeMember(tx, target.id, { role: body.role, inboxScope: body.inboxScope, phoneNumber });
        if (phoneNumber !== undefined && phoneNumber !== target.phone_number) {
          await audit(c, { action: 'member.phone_number_changed', target: target.email, detail: { from: target.phone_number, to: phoneNumber } }, tx);
        }
        if (!roleChanged) return;
        // Downward only: what they made keeps within what they may now do.
        const left = roleAtLeast(target.role, body.role!) ? await capAtRole(tx, { workspaceId: ws.workspaceId, userId: target.id, role: body.role!, now: new Date(realClock(ctx).now()) }) : undefined;
        await audit(c, { action: 'member.role_changed', target: target.email, detail: { from: target.role, to: body.role, ...left } }, tx);
      });
      return toMember((await findMember(db, ws.workspaceId, target.id))!);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/members/:memberId',
    summary: 'Remove a member (admin); their mailboxes stay, unassigned',
    tags: ['members'],
    access: { workspace: 'admin' },
    params: workspaceParams({ memberId: z.uuid() }),
    response: z
      .object({
        ok: z.literal(true),
        apiKeysRevoked: z.number().int().describe('Live API keys the member had created, revoked with the removal'),
        invitationsRevoked: z.number().int().describe('Pending invitations the member had sent, withdrawn with the removal'),
      })
      .meta({ id: 'MemberRemoved' }),
    handler: async (c) => {
      const { ctx, ws, params } = c;
      const db = ctx.store.db;
      const target = await findMember(db, ws.workspaceId, params.memberId);
      if (!target) throw cadenzaError('NOT_FOUND', 'no such member in this workspace');
      if (target.role === 'owner') {
        if (ws.role !== 'owner') throw cadenzaError('FORBIDDEN', 'only an owner removes an owner');
        await keepAnOwner(db, ws.workspaceId, target.id);
      }
      // Revoked first: the removal sets api_key.created_by to null, which would orphan them.
      const left = await db.transaction().execute(async (tx) => {
        const r = await revokeWhatTheyLeft(tx, { workspaceId: ws.workspaceId, userId: target.id, now: new Date(realClock(ctx).now()) });
        await deleteMember(tx, target.id);
        await audit(c, { action: 'member.removed', target: target.email, detail: { role: target.role, apiKeysRevoked: r.apiKeysRevoked, invitationsRevoked: r.invitationsRevoked } }, tx);
        return r;
      });
      return { ok: true as const, apiKeysRevoked: left.apiKeysRevoked, invitationsRevoked: left.invitationsRevoked };
    },
  }),
];
