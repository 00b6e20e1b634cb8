import type { Db } from '../../store/store.ts';
import type { Role } from './access.ts';

/**
 * What a member leaves behind when they are removed or demoted: the API keys they created and the
 * invitations they sent still pending. A removed admin's key would otherwise keep their access
 * after the removal (the key belongs to the workspace, not to the person), and their invitation
 * would still bring someone in on their word.
 */
export interface Departure {
  apiKeysRevoked: number;
  apiKeysCapped: number;
  invitationsRevoked: number;
}

/** Removal: every live key the member created is revoked, every pending invitation they sent withdrawn. */
export async function revokeWhatTheyLeft(db: Db, o: { workspaceId: string; userId: string; now: Date }): Promise<Departure> {
  const keys = await liveKeysOf(db, o).set({ revoked_at: o.now }).executeTakeFirst();
  const invitationsRevoked = await withdrawInvitations(db, o, ['owner', 'admin', 'member']);
  return { apiKeysRevoked: Number(keys.numUpdatedRows), apiKeysCapped: 0, invitationsRevoked };
}

/**
 * Demotion: their keys are capped at the new role (an admin key of a new member becomes a member
 * key), and their pending invitations for a role above it are withdrawn, all of them when the new
 * role may not invite at all (a member).
 */
export async function capAtRole(db: Db, o: { workspaceId: string; userId: string; role: Role; now: Date }): Promise<Departure> {
  let apiKeysCapped = 0;
  if (o.role === 'member') {
    const r = await liveKeysOf(db, o).set({ role: 'member' }).where('role', '=', 'admin').executeTakeFirst();
    apiKeysCapped = Number(r.numUpdatedRows);
  }
  const above: Role[] = o.role === 'owner' ? [] : o.role === 'admin' ? ['owner'] : ['owner', 'admin', 'member'];
  const invitationsRevoked = above.length ? await withdrawInvitations(db, o, above) : 0;
  return { apiKeysRevoked: 0, apiKeysCapped, invitationsRevoked };
}

/** The live API keys the member created in the workspace, to revoke or cap. */
function liveKeysOf(db: Db, o: { workspaceId: string; userId: string }) {
  return db.updateTable('api_key').where('workspace_id', '=', o.workspaceId).where('created_by', '=', o.userId).where('revoked_at', 'is', null);
}

async function withdrawInvitations(db: Db, o: { workspaceId: string; userId: string; now: Date }, roles: Role[]): Promise<number> {
  const r = await db
    .updateTable('invitation')
    .set({ revoked_at: o.now })
    .where('workspace_id', '=', o.workspaceId)
    .where('invited_by', '=', o.userId)
    .where('role', 'in', roles)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', o.now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
