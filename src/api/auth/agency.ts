import type { Db } from '../../store/store.ts';
import type { Role } from './access.ts';

/**
 * The agency rule of authorization (docs/security.md "Agencies"), in one place:
 *
 * - An account that is an admin or owner of an agency workspace is an **admin** in each of its
 *   client workspaces, without a membership there (so removing them from the agency removes
 *   their access to every client at once). Never owner: a client's ownership stays with its
 *   own people, and an agency member (role member or viewer) gets nothing in the clients.
 * - Access only flows down, one level: a client's people reach neither the agency nor a sibling
 *   client (their membership is in the client alone, and nothing grants upward or sideways).
 * - API keys stay in their own workspace; an agency's key does not reach its clients.
 */
export const AGENCY_ROLES_THAT_REACH_CLIENTS: readonly Role[] = ['admin', 'owner'];
export const ROLE_IN_CLIENT: Role = 'admin';

export async function agencyGrant(db: Db, accountId: string, workspaceId: string): Promise<{ agencyId: string; role: Role } | undefined> {
  const row = await db
    .selectFrom('workspace as c')
    .innerJoin('app_user as u', 'u.workspace_id', 'c.agency_id')
    .select(['c.agency_id', 'u.role'])
    .where('c.id', '=', workspaceId)
    .where('u.account_id', '=', accountId)
    .where('u.role', 'in', [...AGENCY_ROLES_THAT_REACH_CLIENTS])
    .executeTakeFirst();
  return row?.agency_id ? { agencyId: row.agency_id, role: ROLE_IN_CLIENT } : undefined;
}
