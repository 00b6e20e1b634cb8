import type { FastifyRequest } from 'fastify';
import { cadenzaError } from '../../common/errors.ts';
import { realClock, type ApiContext } from '../context.ts';
import { agencyGrant } from './agency.ts';
import { findApiKey } from './api-keys.ts';
import { findSession, SESSION_COOKIE } from './sessions.ts';
import { safeEqual } from './tokens.ts';

/**
 * Roles in a workspace, weakest first. A viewer is a client's person in an agency's client
 * workspace (the read-only client portal): only routes open to 'viewer' answer them, so every
 * write route, all of which need 'member' or more, refuses them on the server.
 */
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];
const rank: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export function roleAtLeast(role: Role, min: Role): boolean {
  return rank[role] >= rank[min];
}

export type Principal =
  | { kind: 'session'; accountId: string; sessionToken: string; csrfToken: string }
  | { kind: 'api_key'; keyId: string; workspaceId: string; role: 'admin' | 'member'; readOnly: boolean };

/** What the caller may do in the workspace named by the URL. */
export interface WorkspaceAccess {
  workspaceId: string;
  role: Role;
  /** The caller's membership (app_user) in this workspace; null for an API key or an agency's admin in a client. */
  userId: string | null;
  /** Set when the access comes from the caller's role in the agency that owns this client workspace. */
  viaAgency?: string;
  /** Whose inbox the caller reads: their own mailboxes', or every mailbox's. */
  inboxScope: 'own' | 'all';
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The caller from `Authorization: Bearer cdz_…` or the session cookie; undefined when neither is valid. */
export async function authenticate(req: FastifyRequest, ctx: ApiContext): Promise<Principal | undefined> {
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    // A presented key that is wrong is an error even if a cookie is also there: scripts should learn their key is bad.
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    const key = m ? await findApiKey(ctx.store.db, m[1]!, realClock(ctx)) : undefined;
    if (!key) throw cadenzaError('UNAUTHENTICATED', 'the API key is unknown or revoked');
    return { kind: 'api_key', ...key };
  }
  const token = req.cookies[SESSION_COOKIE];
  if (!token) return undefined;
  const s = await findSession(ctx.store.db, token, realClock(ctx));
  return s && { kind: 'session', accountId: s.accountId, sessionToken: token, csrfToken: s.csrfToken };
}

/**
 * A browser sends the cookie with any request a page makes, including a forged form on another
 * site; only our own page can read the CSRF token (from /api/auth/me) and put it in a header.
 * API keys are not sent automatically by browsers, so they need no token.
 */
export function checkCsrf(req: FastifyRequest, p: Principal): void {
  if (p.kind !== 'session' || !UNSAFE.has(req.method)) return;
  const sent = req.headers['x-csrf-token'];
  if (typeof sent !== 'string' || !safeEqual(sent, p.csrfToken)) {
    throw cadenzaError('FORBIDDEN', 'missing or wrong x-csrf-token header (read it from GET /api/auth/me)');
  }
}

/** A read-only API key makes safe requests only: anything that could change something is refused, whatever its role. */
export function checkKeyScope(req: FastifyRequest, p: Principal): void {
  if (p.kind === 'api_key' && p.readOnly && UNSAFE.has(req.method)) throw cadenzaError('FORBIDDEN', 'this API key is read-only: it may only read (GET); make a read-and-write key to change anything');
}

/**
 * The caller's access to a workspace, refused unless they belong to it with at least `min`. A
 * workspace the caller does not belong to reads as not found, so ids cannot be probed.
 */
export async function workspaceAccess(ctx: ApiContext, p: Principal, workspaceId: string, min: Role): Promise<WorkspaceAccess> {
  const notFound = () => cadenzaError('NOT_FOUND', 'no such workspace');
  if (!UUID.test(workspaceId)) throw notFound();
  let access: WorkspaceAccess;
  if (p.kind === 'api_key') {
    if (p.workspaceId !== workspaceId.toLowerCase()) throw notFound();
    access = { workspaceId: p.workspaceId, role: p.role, userId: null, inboxScope: p.role === 'admin' ? 'all' : 'own' };
  } else {
    const m = await ctx.store.db
      .selectFrom('app_user')
      .select(['id', 'role', 'inbox_scope'])
      .where('account_id', '=', p.accountId)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!m) {
      // No membership here: an admin or owner of the agency that owns this client workspace is an admin in it.
      const grant = await agencyGrant(ctx.store.db, p.accountId, workspaceId);
      if (!grant) throw notFound();
      access = { workspaceId, role: grant.role, userId: null, inboxScope: 'all', viaAgency: grant.agencyId };
      if (!roleAtLeast(access.role, min)) throw cadenzaError('FORBIDDEN', `this needs the ${min} role in the workspace; the caller is ${access.role}`);
      return access;
    }
    // Admins and owners read every mailbox's inbox; a member what they were granted.
    access = { workspaceId, role: m.role, userId: m.id, inboxScope: m.role === 'member' || m.role === 'viewer' ? m.inbox_scope : 'all' };
  }
  if (!roleAtLeast(access.role, min)) throw cadenzaError('FORBIDDEN', `this needs the ${min} role in the workspace; the caller is ${access.role}`);
  return access;
}
