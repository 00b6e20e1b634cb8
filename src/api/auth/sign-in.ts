import { sql } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import { recordAudit, type AuditEntry } from '../audit/audit-log.ts';
import { realClock, type ApiContext } from '../context.ts';
import { normalizeAccountEmail } from './accounts.ts';
import { knownDevice } from './devices.ts';
import { checkLogin, clearFailures, recordFailure, type Client } from './login-limiter.ts';
import { verifyPassword } from './passwords.ts';
import { passwordRefusedBy } from './sso/settings.ts';

/** The account a sign-in names, and whether the browser is one of its known devices. */
async function whoTries(ctx: ApiContext, email: string, deviceCookie: string | undefined) {
  const norm = normalizeAccountEmail(email);
  const account = await ctx.store.db.selectFrom('account').select(['id', 'email', 'password_hash']).where(sql<string>`lower(email)`, '=', norm).executeTakeFirst();
  return { norm, account, device: await knownDevice(ctx.store.db, account?.id, deviceCookie) };
}

/** For the per-IP limiter: a known device of the account signing in is not counted with its IP. */
export async function isKnownDevice(ctx: ApiContext, email: unknown, deviceCookie: string | undefined): Promise<boolean> {
  if (typeof email !== 'string' || !deviceCookie) return false;
  return !!(await whoTries(ctx, email, deviceCookie)).device;
}

/**
 * Checks a password under the sign-in limits (login-limiter.ts) and records the outcome in the
 * audit log of every workspace the account belongs to. One answer for a wrong password and an
 * unknown address; a refused try is not checked at all, so a guesser learns nothing while waiting.
 */
export async function signIn(ctx: ApiContext, o: { email: string; password: string; deviceCookie: string | undefined; ip: string }): Promise<{ accountId: string; device: string | undefined }> {
  const clock = realClock(ctx);
  const db = ctx.store.db;
  const { norm, account, device } = await whoTries(ctx, o.email, o.deviceCookie);
  const client: Client = device ? { kind: 'device', hash: device } : { kind: 'ip', ip: o.ip };
  const verdict = await checkLogin(db, norm, client, clock, ctx.loginLimit);
  if (verdict.retryAfterMs > 0) {
    const s = Math.ceil(verdict.retryAfterMs / 1000);
    throw cadenzaError('RATE_LIMITED', `too many failed sign-ins for this address${verdict.reason === 'client' ? ' from here' : ''}; try again in ${s} s`, { retryAfterSeconds: s, reason: verdict.reason });
  }
  // The same work whether or not the address exists (passwords.ts).
  const ok = await verifyPassword(account?.password_hash, o.password);
  const audit = async (action: 'signin.succeeded' | 'signin.failed') => {
    if (!account) return;
    const memberships = await db.selectFrom('app_user').select(['id', 'workspace_id']).where('account_id', '=', account.id).execute();
    const entries: AuditEntry[] = memberships.map((m) => ({
      workspaceId: m.workspace_id,
      action,
      actor: action === 'signin.succeeded' ? { kind: 'session', userId: m.id, label: account.email, ip: o.ip } : { kind: 'anonymous', label: o.email.trim().slice(0, 320), ip: o.ip },
      target: account.email,
      detail: { knownDevice: !!device },
    }));
    await recordAudit(db, { clock, random: ctx.random }, ...entries);
  };
  if (!account || !ok) {
    await recordFailure(db, norm, client, clock, ctx.loginLimit.windowMs);
    await audit('signin.failed');
    throw cadenzaError('UNAUTHENTICATED', 'wrong email or password');
  }
  await clearFailures(db, norm, client);
  // Asked only of a right password, so the answer tells a guesser nothing new.
  const ssoOnly = await passwordRefusedBy(db, account.id);
  if (ssoOnly) {
    await audit('signin.failed');
    throw cadenzaError('FORBIDDEN', `${ssoOnly} signs in with single sign-on only: use "Sign in with SSO"`, { sso: true });
  }
  await audit('signin.succeeded');
  return { accountId: account.id, device };
}
