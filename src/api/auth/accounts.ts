import { clientsReachedBy } from '../../agency/sql/agency.ts';
import { AGENCY_ROLES_THAT_REACH_CLIENTS, ROLE_IN_CLIENT } from './agency.ts';
import { sql } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Db, Store } from '../../store/store.ts';
import type { Role } from './access.ts';
import { hashPassword } from './passwords.ts';
import { SETUP_TOKEN_FILE, setupTokenValid, spendSetupTokens } from './setup-token.ts';

const SETUP_LOCK = 0x0cade08;

export function normalizeAccountEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function hasAnyAccount(store: Store): Promise<boolean> {
  return !!(await store.db.selectFrom('account').select('id').limit(1).executeTakeFirst());
}

/**
 * First run: the first person becomes the owner of the first workspace. The workspace `cadenza
 * start` made on a fresh install (workspace/workspaces.ts) is adopted and renamed, so what the CLI put
 * there stays reachable. Refused once any account exists; two setups racing are serialised by a
 * transaction-level advisory lock and the second one is refused. The caller must present a live
 * setup token (setup-token.ts), spent by this transaction.
 */
export async function firstRunSetup(
  store: Store,
  deps: { clock: Clock; random: Random },
  o: { email: string; password: string; name?: string | undefined; workspaceName: string; timeZone?: string | undefined; setupToken: string },
): Promise<{ accountId: string; workspaceId: string; userId: string }> {
  const passwordHash = await hashPassword(o.password);
  return store.db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${SETUP_LOCK})`.execute(tx);
    if (await tx.selectFrom('account').select('id').limit(1).executeTakeFirst()) {
      throw cadenzaError('CONFLICT', 'setup is done already: sign in instead');
    }
    if (!(await setupTokenValid(tx, o.setupToken))) {
      throw cadenzaError('FORBIDDEN', `wrong setup token: \`cadenza start\` printed it on its console, and it is in the file ${SETUP_TOKEN_FILE} in the data folder`, { field: 'setupToken' });
    }
    await spendSetupTokens(tx);
    const id = () => newId(deps.clock.now(), deps.random);
    const accountId = id();
    await tx.insertInto('account').values({ id: accountId, email: o.email.trim(), name: o.name ?? null, password_hash: passwordHash }).execute();
    const existing = await tx.selectFrom('workspace').select('id').orderBy('created_at').executeTakeFirst();
    const workspaceId = existing?.id ?? id();
    if (existing) {
      await tx.updateTable('workspace').set({ name: o.workspaceName, ...(o.timeZone ? { time_zone: o.timeZone } : {}) }).where('id', '=', workspaceId).execute();
    } else {
      await tx.insertInto('workspace').values({ id: workspaceId, name: o.workspaceName, time_zone: o.timeZone ?? 'UTC' }).execute();
    }
    const userId = await addMembership(tx, deps, { accountId, workspaceId, email: o.email.trim(), name: o.name ?? null, role: 'owner' });
    return { accountId, workspaceId, userId };
  });
}

/**
 * Makes an account a member of a workspace. A workspace user row with the same address made
 * before accounts existed (a mailbox owner from the CLI) is linked rather than duplicated.
 */
export async function addMembership(
  db: Store['db'],
  deps: { clock: Clock; random: Random },
  o: { accountId: string; workspaceId: string; email: string; name: string | null; role: Role },
): Promise<string> {
  const prior = await db
    .selectFrom('app_user')
    .select(['id', 'account_id'])
    .where('workspace_id', '=', o.workspaceId)
    .where(sql<string>`lower(email)`, '=', normalizeAccountEmail(o.email))
    .executeTakeFirst();
  if (prior?.account_id) throw cadenzaError('CONFLICT', `${o.email} is a member of this workspace already`);
  if (prior) {
    await db.updateTable('app_user').set({ account_id: o.accountId, role: o.role }).where('id', '=', prior.id).execute();
    return prior.id;
  }
  const userId = newId(deps.clock.now(), deps.random);
  await db.insertInto('app_user').values({ id: userId, workspace_id: o.workspaceId, account_id: o.accountId, email: o.email, name: o.name, role: o.role }).execute();
  return userId;
}

/** A new workspace made by a signed-in person, who becomes its owner. */
export async function createWorkspace(
  store: Store,
  deps: { clock: Clock; random: Random },
  o: { accountId: string; name: string; timeZone?: string | undefined },
): Promise<{ workspaceId: string; userId: string }> {
  return store.db.transaction().execute(async (tx) => {
    const account = await tx.selectFrom('account').select(['email', 'name']).where('id', '=', o.accountId).executeTakeFirstOrThrow();
    const workspaceId = newId(deps.clock.now(), deps.random);
    await tx.insertInto('workspace').values({ id: workspaceId, name: o.name, time_zone: o.timeZone ?? 'UTC' }).execute();
    const userId = await addMembership(tx, deps, { accountId: o.accountId, workspaceId, email: account.email, name: account.name, role: 'owner' });
    return { workspaceId, userId };
  });
}

/** The account (id, address, name) and its workspaces with its role in each, oldest workspace first: who is signed in. */
export async function accountWithWorkspaces(db: Db, accountId: string) {
  const account = await db.selectFrom('account').select(['id', 'email', 'name']).where('id', '=', accountId).executeTakeFirstOrThrow();
  const workspaces = await db
    .selectFrom('app_user as u')
    .innerJoin('workspace as w', 'w.id', 'u.workspace_id')
    .select(['w.id', 'w.name', 'u.role', 'w.agency_id'])
    .where('u.account_id', '=', accountId)
    .orderBy('w.created_at')
    .execute();
  // And the client workspaces it reaches as an agency's admin (agency.ts has the rule), after its own.
  const own = new Set(workspaces.map((w) => w.id));
  const clients = (await clientsReachedBy(db, accountId, AGENCY_ROLES_THAT_REACH_CLIENTS)).filter((c) => !own.has(c.id));
  return {
    account,
    workspaces: [
      ...workspaces.map((w) => ({ id: w.id, name: w.name, role: w.role, agencyId: w.agency_id, viaAgency: false })),
      ...clients.map((c) => ({ id: c.id, name: c.name, role: ROLE_IN_CLIENT, agencyId: c.agency_id, viaAgency: true })),
    ],
  };
}

/** The account's password hash (argon2, passwords.ts), to check a password against. */
export async function passwordHashOf(db: Db, accountId: string): Promise<string> {
  const r = await db.selectFrom('account').select('password_hash').where('id', '=', accountId).executeTakeFirstOrThrow();
  return r.password_hash;
}

/** Replaces the account's password hash; the caller ends the other sessions (sessions.ts). */
export async function setPasswordHash(db: Db, accountId: string, passwordHash: string): Promise<void> {
  await db.updateTable('account').set({ password_hash: passwordHash }).where('id', '=', accountId).execute();
}
