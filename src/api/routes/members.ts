import { sql } from 'kysely';
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import { roleAtLeast } from '../auth/access.ts';
import { addMembership, normalizeAccountEmail } from '../auth/accounts.ts';
import { MIN_PASSWORD_LENGTH, hashPassword } from '../auth/passwords.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const role = z.enum(['owner', 'admin', 'member']);
const member = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string().nullable(),
    role,
    inboxScope: z.enum(['own', 'all']).describe("own: a member reads only their mailboxes' replies; all: every mailbox's"),
    canSignIn: z.boolean(),
  })
  .meta({ id: 'Member' });

const memberColumns = ['u.id', 'u.email', 'u.name', 'u.role', 'u.inbox_scope', 'u.account_id'] as const;
type MemberRow = { id: string; email: string; name: string | null; role: 'owner' | 'admin' | 'member'; inbox_scope: 'own' | 'all'; account_id: string | null };
const toMember = (r: MemberRow): z.output<typeof member> => ({ id: r.id, email: r.email, name: r.name, role: r.role, inboxScope: r.inbox_scope, canSignIn: r.account_id !== null });

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
      const rows = await ctx.store.db.selectFrom('app_user as u').select(memberColumns).where('u.workspace_id', '=', ws.workspaceId).orderBy('u.created_at').execute();
      return { members: rows.map(toMember) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/members',
    summary: 'Add a person to the workspace (admin); a new address gets an account with the given initial password',
    tags: ['members'],
    access: { workspace: 'admin' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({
      email: z.email().max(320),
      name: z.string().min(1).max(200).optional(),
      role,
      initialPassword: z.string().min(MIN_PASSWORD_LENGTH).max(1024).optional().describe('Required when the address has no account yet'),
    }),
    example: () => ({ body: { email: 'new.member@example.test', role: 'member' as const, initialPassword: 'a long initial password' } }),
    response: member,
    handler: async ({ ctx, ws, body }) => {
      if (!roleAtLeast(ws.role, body.role)) throw cadenzaError('FORBIDDEN', `an ${ws.role} cannot add an ${body.role}`);
      const norm = normalizeAccountEmail(body.email);
      const userId = await ctx.store.db.transaction().execute(async (tx) => {
        let account = await tx.selectFrom('account').select('id').where(sql<string>`lower(email)`, '=', norm).executeTakeFirst();
        if (!account) {
          if (!body.initialPassword) throw cadenzaError('INVALID_INPUT', `${body.email} has no account yet: give an initialPassword`, { field: 'initialPassword' });
          account = { id: newId(ctx.clock.now(), ctx.random) };
          await tx.insertInto('account').values({ id: account.id, email: body.email, name: body.name ?? null, password_hash: await hashPassword(body.initialPassword) }).execute();
        }
        return addMembership(tx, ctx, { accountId: account.id, workspaceId: ws.workspaceId, email: body.email, name: body.name ?? null, role: body.role });
      });
      return toMember(await ctx.store.db.selectFrom('app_user as u').select(memberColumns).where('u.id', '=', userId).executeTakeFirstOrThrow());
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/members/:memberId',
    summary: "Change a member's role or inbox scope (admin; only an owner makes or unmakes owners)",
    tags: ['members'],
    access: { workspace: 'admin' },
    params: workspaceParams({ memberId: z.uuid() }),
    body: z.object({ role, inboxScope: z.enum(['own', 'all']) }).partial(),
    example: () => ({ body: { inboxScope: 'all' as const } }),
    response: member,
    handler: async ({ ctx, ws, params, body }) => {
      const db = ctx.store.db;
      const target = await db.selectFrom('app_user as u').select(memberColumns).where('u.id', '=', params.memberId).where('u.workspace_id', '=', ws.workspaceId).executeTakeFirst();
      if (!target) throw cadenzaError('NOT_FOUND', 'no such member in this workspace');
      if (body.role && (target.role === 'owner' || body.role === 'owner') && ws.role !== 'owner') throw cadenzaError('FORBIDDEN', 'only an owner changes who is an owner');
      if (body.role && target.role === 'owner' && body.role !== 'owner') await keepAnOwner(db, ws.workspaceId, target.id);
      await db
        .updateTable('app_user')
        .set({ ...(body.role ? { role: body.role } : {}), ...(body.inboxScope ? { inbox_scope: body.inboxScope } : {}) })
        .where('id', '=', target.id)
        .execute();
      return toMember(await db.selectFrom('app_user as u').select(memberColumns).where('u.id', '=', target.id).executeTakeFirstOrThrow());
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/members/:memberId',
    summary: 'Remove a member (admin); their mailboxes stay, unassigned',
    tags: ['members'],
    access: { workspace: 'admin' },
    params: workspaceParams({ memberId: z.uuid() }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params }) => {
      const db = ctx.store.db;
      const target = await db.selectFrom('app_user').select(['id', 'role']).where('id', '=', params.memberId).where('workspace_id', '=', ws.workspaceId).executeTakeFirst();
      if (!target) throw cadenzaError('NOT_FOUND', 'no such member in this workspace');
      if (target.role === 'owner') {
        if (ws.role !== 'owner') throw cadenzaError('FORBIDDEN', 'only an owner removes an owner');
        await keepAnOwner(db, ws.workspaceId, target.id);
      }
      await db.deleteFrom('app_user').where('id', '=', target.id).execute();
      return { ok: true as const };
    },
  }),
];

/** A workspace never loses its last owner: nobody could then manage it. */
async function keepAnOwner(db: import('../../store/store.ts').Db, workspaceId: string, leaving: string): Promise<void> {
  const other = await db.selectFrom('app_user').select('id').where('workspace_id', '=', workspaceId).where('role', '=', 'owner').where('id', '!=', leaving).where('account_id', 'is not', null).executeTakeFirst();
  if (!other) throw cadenzaError('CONFLICT', 'the workspace needs at least one owner who can sign in');
}
