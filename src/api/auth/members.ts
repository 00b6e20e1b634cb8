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
  /** Their number on the SIP trunk (E.164, src/dialer/rep-number.ts), or null. */
  phone_number: string | null;
}

const MEMBER_COLUMNS = ['u.id', 'u.email', 'u.name', 'u.role', 'u.inbox_scope', 'u.account_id', 'u.phone_number'] as const;

/** The workspace's members, oldest first. */
export async function listMembers(db: Db, workspaceId: string): Promise<MemberRow[]> {
  return db.selectFrom('app_user as u').select(MEMBER_COLUMNS).where('u.workspace_id', '=', workspaceId).orderBy('u.created_at').execute();
}

/** The workspace's member, or undefined (another workspace's is not found). */
export async function findMember(db: Db, workspaceId: string, memberId: string): Promise<MemberRow | undefined> {
  return db.selectFrom('app_user as u').select(MEMBER_COLUMNS).where('u.id', '=', memberId).where('u.workspace_id', '=', workspaceId).executeTakeFirst();
}

/**
 * Sets the member's role, inbox scope and trunk number, those given (phoneNumber null clears it).
 * CONFLICT when the number is another member's, in any workspace: one trunk serves them all.
 */
export async function changeMember(db: Db, memberId: string, change: { role?: Role | undefined; inboxScope?: 'own' | 'all' | undefined; phoneNumber?: string | null | undefined }): Promise<void> {
  const set = { ...(change.role ? { role: change.role } : {}), ...(change.inboxScope ? { inbox_scope: change.inboxScope } : {}), ...(change.phoneNumber !== undefined ? { phone_number: change.phoneNumber } : {}) };
  if (Object.keys(set).length === 0) return;
  try {
    await db.updateTable('app_user').set(set).where('id', '=', memberId).execute();
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw cadenzaError('CONFLICT', `${change.phoneNumber} is already the number of another member (a number rings one person)`, { field: 'phoneNumber' });
    throw e;
  }
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
