import { sql } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Db, Store } from '../../store/store.ts';
import { roleAtLeast, type Role } from './access.ts';
import { addMembership, normalizeAccountEmail } from './accounts.ts';
import { hashPassword } from './passwords.ts';
import { newSecret, secretHash } from './tokens.ts';

/**
 * Invitations by email (migration 0014). The token is handed out once, in the link, and only its
 * hash is kept; it names one workspace, one address and one role, works once, and for seven days.
 * Nothing here logs or returns a token except createInvitation, to its caller.
 */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface Invitation {
  id: string;
  workspaceId: string;
  email: string;
  role: Role;
  status: InvitationStatus;
  /** The inviter's name, or their address; null once they left the workspace (or for an API key). */
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
}

type Deps = { clock: Clock; random: Random };

const a = (role: Role) => (role === 'member' ? `a ${role}` : `an ${role}`);

function selectInvitations(db: Db) {
  return db
    .selectFrom('invitation as i')
    .leftJoin('app_user as u', 'u.id', 'i.invited_by')
    .select(['i.id', 'i.workspace_id', 'i.email', 'i.role', 'i.created_at', 'i.expires_at', 'i.accepted_at', 'i.revoked_at', sql<string | null>`coalesce(u.name, u.email)`.as('invited_by')]);
}
type Row = Awaited<ReturnType<ReturnType<typeof selectInvitations>['executeTakeFirstOrThrow']>>;

function statusOf(r: { accepted_at: Date | null; revoked_at: Date | null; expires_at: Date }, now: number): InvitationStatus {
  if (r.accepted_at) return 'accepted';
  if (r.revoked_at) return 'revoked';
  return r.expires_at.getTime() <= now ? 'expired' : 'pending';
}

function toInvitation(r: Row, now: number): Invitation {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    email: r.email,
    role: r.role,
    status: statusOf(r, now),
    invitedBy: r.invited_by,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    acceptedAt: r.accepted_at,
  };
}

/**
 * Invites an address. The inviter may grant at most their own role. A pending invitation to the
 * same address is revoked: "invite again" is how a lost or expired link is replaced, and only the
 * newest link works.
 */
export async function createInvitation(
  store: Store,
  deps: Deps,
  o: { workspaceId: string; email: string; role: Role; inviterRole: Role; invitedBy: string | null },
): Promise<{ invitation: Invitation; token: string }> {
  if (!roleAtLeast(o.inviterRole, o.role)) throw cadenzaError('FORBIDDEN', `${a(o.inviterRole)} cannot invite ${a(o.role)}`, { field: 'role' });
  const email = o.email.trim();
  const norm = normalizeAccountEmail(email);
  const token = newSecret();
  const now = deps.clock.now();
  const id = newId(now, deps.random);
  await store.db.transaction().execute(async (tx) => {
    const member = await tx
      .selectFrom('app_user as u')
      .leftJoin('account as a', 'a.id', 'u.account_id')
      .select('u.id')
      .where('u.workspace_id', '=', o.workspaceId)
      .where('u.account_id', 'is not', null)
      .where((eb) => eb.or([eb(sql<string>`lower(u.email)`, '=', norm), eb(sql<string>`lower(a.email)`, '=', norm)]))
      .executeTakeFirst();
    if (member) throw cadenzaError('CONFLICT', `${email} is a member of this workspace already`, { field: 'email' });
    await tx
      .updateTable('invitation')
      .set({ revoked_at: new Date(now) })
      .where('workspace_id', '=', o.workspaceId)
      .where(sql<string>`lower(email)`, '=', norm)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .execute();
    await tx
      .insertInto('invitation')
      .values({ id, workspace_id: o.workspaceId, email, role: o.role, token_hash: secretHash(token), invited_by: o.invitedBy, created_at: new Date(now), expires_at: new Date(now + INVITATION_TTL_MS) })
      .execute();
  });
  const row = await selectInvitations(store.db).where('i.id', '=', id).executeTakeFirstOrThrow();
  return { invitation: toInvitation(row, now), token };
}

/** The workspace's invitations, newest first: pending and expired ones, and the last 50 accepted or revoked. */
export async function listInvitations(db: Db, workspaceId: string, clock: Clock): Promise<Invitation[]> {
  const now = clock.now();
  const open = await selectInvitations(db).where('i.workspace_id', '=', workspaceId).where('i.accepted_at', 'is', null).where('i.revoked_at', 'is', null).orderBy('i.created_at', 'desc').limit(500).execute();
  const closed = await selectInvitations(db)
    .where('i.workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('i.accepted_at', 'is not', null), eb('i.revoked_at', 'is not', null)]))
    .orderBy('i.created_at', 'desc')
    .limit(50)
    .execute();
  return [...open, ...closed].sort((a, b) => b.created_at.getTime() - a.created_at.getTime()).map((r) => toInvitation(r, now));
}

/** Withdraws a pending invitation: its link stops working. An invitation for a role above the caller's is not theirs to withdraw. */
export async function revokeInvitation(db: Db, clock: Clock, o: { workspaceId: string; invitationId: string; revokerRole: Role }): Promise<Invitation> {
  const now = clock.now();
  const row = await selectInvitations(db).where('i.id', '=', o.invitationId).where('i.workspace_id', '=', o.workspaceId).executeTakeFirst();
  if (!row) throw cadenzaError('NOT_FOUND', 'no such invitation in this workspace');
  if (!roleAtLeast(o.revokerRole, row.role)) throw cadenzaError('FORBIDDEN', `${a(o.revokerRole)} cannot withdraw an invitation for ${a(row.role)}`);
  const status = statusOf(row, now);
  if (status === 'accepted') throw cadenzaError('CONFLICT', `${row.email} accepted this invitation already: remove the member instead`, { reason: 'accepted' });
  if (status === 'pending') await db.updateTable('invitation').set({ revoked_at: new Date(now) }).where('id', '=', row.id).where('revoked_at', 'is', null).execute();
  return toInvitation(await selectInvitations(db).where('i.id', '=', row.id).executeTakeFirstOrThrow(), now);
}

export interface OpenInvitation extends Invitation {
  workspaceName: string;
  /** Whether an account with the invited address exists: the invitee signs in rather than signs up. */
  accountExists: boolean;
}

/**
 * The pending invitation a token names, or a clear refusal: unknown, accepted, withdrawn or
 * expired. With `lock`, the row is held for the caller's transaction, so one token is accepted
 * once even by two clicks at the same moment.
 */
export async function openInvitation(db: Db, token: string, clock: Clock, lock = false): Promise<OpenInvitation> {
  const now = clock.now();
  let q = db.selectFrom('invitation').select(['id', 'accepted_at', 'revoked_at', 'expires_at']).where('token_hash', '=', secretHash(token));
  if (lock) q = q.forUpdate();
  const head = await q.executeTakeFirst();
  if (!head) throw cadenzaError('NOT_FOUND', 'this invitation link is not valid: check that it was copied whole, or ask for a new one');
  const row = await selectInvitations(db).where('i.id', '=', head.id).executeTakeFirstOrThrow();
  const status = statusOf(row, now);
  if (status === 'accepted') throw cadenzaError('CONFLICT', 'this invitation was accepted already: sign in to reach the workspace', { reason: 'accepted' });
  if (status === 'revoked') throw cadenzaError('CONFLICT', `this invitation was withdrawn: ask ${row.invited_by ?? 'an admin of the workspace'} for a new one`, { reason: 'revoked' });
  if (status === 'expired') {
    throw cadenzaError('CONFLICT', `this invitation expired on ${row.expires_at.toISOString().slice(0, 10)}: ask ${row.invited_by ?? 'an admin of the workspace'} for a new one`, { reason: 'expired', expiresAt: row.expires_at.toISOString() });
  }
  const workspace = await db.selectFrom('workspace').select('name').where('id', '=', row.workspace_id).executeTakeFirstOrThrow();
  const account = await db.selectFrom('account').select('id').where(sql<string>`lower(email)`, '=', normalizeAccountEmail(row.email)).executeTakeFirst();
  return { ...toInvitation(row, now), workspaceName: workspace.name, accountExists: !!account };
}

/** The signed-in account joins the workspace with the invitation's role; the account's address must be the invited one. */
export interface Joined {
  workspaceId: string;
  /** The new membership (app_user). */
  userId: string;
  email: string;
  role: Role;
  invitationId: string;
}

export async function acceptInvitation(store: Store, deps: Deps, o: { token: string; accountId: string }): Promise<Joined> {
  return store.db.transaction().execute((tx) => acceptIn(tx, deps, o));
}

async function acceptIn(tx: Db, deps: Deps, o: { token: string; accountId: string }): Promise<Joined> {
  const inv = await openInvitation(tx, o.token, deps.clock, true);
  const account = await tx.selectFrom('account').select(['id', 'email', 'name']).where('id', '=', o.accountId).executeTakeFirstOrThrow();
  if (normalizeAccountEmail(account.email) !== normalizeAccountEmail(inv.email)) {
    throw cadenzaError('FORBIDDEN', `this invitation is for ${inv.email}, and you are signed in as ${account.email}: sign out, then open the link again`, { reason: 'other_account' });
  }
  const userId = await addMembership(tx, deps, { accountId: account.id, workspaceId: inv.workspaceId, email: account.email, name: account.name, role: inv.role });
  await tx.updateTable('invitation').set({ accepted_at: new Date(deps.clock.now()), accepted_by: account.id }).where('id', '=', inv.id).execute();
  return { workspaceId: inv.workspaceId, userId, email: account.email, role: inv.role, invitationId: inv.id };
}

/**
 * An invitee without an account makes one (the invited address, their name and password) and
 * joins, in one transaction: a failed join leaves no orphan account behind.
 */
export async function signUpWithInvitation(store: Store, deps: Deps, o: { token: string; name: string; password: string }): Promise<Joined & { accountId: string }> {
  const passwordHash = await hashPassword(o.password);
  return store.db.transaction().execute(async (tx) => {
    const inv = await openInvitation(tx, o.token, deps.clock, true);
    if (inv.accountExists) throw cadenzaError('CONFLICT', `an account for ${inv.email} exists already: sign in to accept`, { reason: 'account_exists' });
    const accountId = newId(deps.clock.now(), deps.random);
    await tx.insertInto('account').values({ id: accountId, email: inv.email, name: o.name.trim(), password_hash: passwordHash }).execute();
    return { accountId, ...(await acceptIn(tx, deps, { token: o.token, accountId })) };
  });
}

/** The invitation email: plain text, the link on a line of its own so every client makes it clickable. */
export function invitationMail(o: { workspaceName: string; invitedBy: string | null; role: Role; link: string; expiresAt: Date }): { subject: string; text: string } {
  // A header is one line: a name with a line break in it must not start a new header.
  const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
  const who = o.invitedBy ? oneLine(o.invitedBy) : 'An admin';
  const subject = `${who} invited you to ${oneLine(o.workspaceName)} on Cadenza`;
  const text = [
    `${who} invited you to join the workspace "${oneLine(o.workspaceName)}" on Cadenza as ${a(o.role)}.`,
    '',
    'Open this link to join:',
    '',
    o.link,
    '',
    `The link works once, for this address only, until ${o.expiresAt.toUTCString()}.`,
    'If you did not expect this invitation, ignore this message.',
    '',
  ].join('\n');
  return { subject, text };
}

/** Where the invitee opens the invitation: the web app's /invite/<token> page. */
export function invitationLink(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/invite/${token}`;
}
