/**
 * A workspace's members (app_user rows): who they are, their role and their inbox scope. An
 * account joins through an invitation (invitations.ts, accounts.ts addMembership); what a member
 * leaves behind on removal or demotion is member-departure.ts's.
 */
import { cadenzaError } from '../../common/errors.ts';
import type { Db } from '../../store/store.ts';
import type { Role } from './access.ts';

export interface MemberRow {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  inbox_scope: 'own' | 'all';
  /** null: a workspace user without an account (a mailbox owner from the CLI), who cannot sign in. */
  account_id: string | null;
}

const MEMBER_COLUMNS = ['u.id', 'u.email', 'u.name', 'u.role', 'u.inbox_scope', 'u.account_id'] as const;

/** The workspace's members, oldest first. */
export async function listMembers(db: Db, workspaceId: string): Promise<MemberRow[]> {
  return db.selectFrom('app_user as u').select(MEMBER_COLUMNS).where('u.workspace_id', '=', workspaceId).orderBy('u.created_at').execute();
}

/** The workspace's member, or undefined (another workspace's is not found). */
export async function findMember(db: Db, workspaceId: string, memberId: string): Promise<MemberRow | undefined> {
  return db.selectFrom('app_user as u').select(MEMBER_COLUMNS).where('u.id', '=', memberId).where('u.workspace_id', '=', workspaceId).executeTakeFirst();
}

/** Sets the member's role and inbox scope, those given. */
export async function changeMember(db: Db, memberId: string, change: { role?: Role | undefined; inboxScope?: 'own' | 'all' | undefined }): Promise<void> {
  await db
    .updateTable('app_user')
    .set({ ...(change.role ? { role: change.role } : {}), ...(change.inboxScope ? { inbox_scope: change.inboxScope } : {}) })
    .where('id', '=', memberId)
    .execute();
}

/** Removes the member; their mailboxes stay, unassigned, and the keys they made lose their creator (revoke them first). */
export async function deleteMember(db: Db, memberId: string): Promise<void> {
  await db.deleteFrom('app_user').where('id', '=', memberId).execute();
}

/** A workspace never loses its last owner who can sign in: nobody could then manage it. CONFLICT when `leaving` is that owner. */
export async function keepAnOwner(db: Db, workspaceId: string, leaving: string): Promise<void> {
  const other = await db.selectFrom('app_user').select('id').where('workspace_id', '=', workspaceId).where('role', '=', 'owner').where('id', '!=', leaving).where('account_id', 'is not', null).executeTakeFirst();
  if (!other) throw cadenzaError('CONFLICT', 'the workspace needs at least one owner who can sign in');
}
