import { z } from 'zod';
import { ROLES } from '../auth/access.ts';
import { cadenzaError, isCadenzaError } from '../../common/errors.ts';
import { isValidZone } from '../../calendar/index.ts';
import { accountWithWorkspaces, firstRunSetup, hasAnyAccount, passwordHashOf, setPasswordHash } from '../auth/accounts.ts';
import { DEVICE_COOKIE, DEVICE_COOKIE_PATH, DEVICE_TTL_MS, rememberDevice } from '../auth/devices.ts';
import { MIN_PASSWORD_LENGTH, hashPassword, verifyPassword } from '../auth/passwords.ts';
import { isKnownDevice, signIn } from '../auth/sign-in.ts';
import { createSession, deleteSession, endOtherSessions, SESSION_COOKIE } from '../auth/sessions.ts';
import { realClock, type ApiContext } from '../context.ts';
import { defineRoute, type RouteContext } from '../http/route.ts';

const email = z.email().max(320);
/** A new password: the one rule for setup, a password change and an invitee's new account. */
export const password = z.string().min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`).max(1024);

export const meBody = z
  .object({
    account: z.object({ id: z.uuid(), email: z.string(), name: z.string().nullable() }),
    csrfToken: z.string().describe('Send in x-csrf-token on POST, PUT, PATCH and DELETE made with the session cookie'),
    workspaces: z.array(
      z.object({
        id: z.uuid(),
        name: z.string(),
        role: z.enum(ROLES),
        agencyId: z.uuid().nullable().describe('The agency workspace this one is a client of; null for any other'),
        viaAgency: z.boolean().describe("Reached as an admin through the caller's admin role in its agency, not a membership here"),
      }),
    ),
  })
  .meta({ id: 'Me' });

export async function me(ctx: ApiContext, accountId: string, csrfToken: string): Promise<z.output<typeof meBody>> {
  const { account, workspaces } = await accountWithWorkspaces(ctx.store.db, accountId);
  return { account, csrfToken, workspaces };
}

/**
 * Whether cookies set on this answer are Secure: always when the installation's public URL is
 * https, and also for a request that came in over TLS on another name (an agency client's app
 * host, served by the HTTPS listener of custom hosts while the public URL may be plain http).
 * Behind a proxy, Fastify's protocol follows its trustProxy setting.
 */
export function cookiesSecure(ctx: ApiContext, req: { protocol: string }): boolean {
  return ctx.publicUrl.startsWith('https:') || req.protocol === 'https';
}

/** Signs the browser in with a fresh session, dropping the one it had (rotation on sign-in). */
export async function startSession(c: RouteContext<unknown, unknown, unknown>, accountId: string, knownDevice?: string): Promise<z.output<typeof meBody>> {
  const { ctx, req, reply } = c;
  const old = req.cookies[SESSION_COOKIE];
  if (old) await deleteSession(ctx.store.db, old);
  const s = await createSession(ctx.store.db, accountId, realClock(ctx), ctx.sessionTtlMs);
  const secure = cookiesSecure(ctx, req);
  reply.setCookie(SESSION_COOKIE, s.token, { httpOnly: true, sameSite: 'lax', secure, path: '/', expires: s.expiresAt });
  // This browser gave the right password: from now on its sign-ins are counted apart (devices.ts).
  const device = await rememberDevice(ctx.store.db, realClock(ctx), accountId, knownDevice);
  if (device) reply.setCookie(DEVICE_COOKIE, device, { httpOnly: true, sameSite: 'strict', secure, path: DEVICE_COOKIE_PATH, maxAge: DEVICE_TTL_MS / 1000 });
  return me(ctx, accountId, s.csrfToken);
}

export const authRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/setup',
    summary: 'Whether first-run setup is still needed',
    tags: ['auth'],
    access: 'public',
    response: z.object({ needed: z.boolean() }),
    handler: async ({ ctx }) => ({ needed: !(await hasAnyAccount(ctx.store)) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/setup',
    summary: 'First run: with the setup token `cadenza start` printed, create the first owner and workspace, and sign in',
    tags: ['auth'],
    access: 'public',
    status: 201,
    body: z.object({
      setupToken: z.string().trim().min(1).max(200).describe('The one-time token `cadenza start` printed, also in the file setup-token in its data folder'),
      email,
      password,
      name: z.string().min(1).max(200).optional(),
      workspaceName: z.string().min(1).max(200),
      timeZone: z.string().refine(isValidZone, 'an IANA time zone such as Europe/Paris').optional(),
    }),
    example: () => ({ body: { setupToken: 'printed-by-cadenza-start', email: 'owner@example.test', password: 'correct horse battery', workspaceName: 'Acme' } }),
    response: meBody,
    // Each attempt costs an argon2 hash and tries a token: limited per IP like sign-in.
    rateLimit: (ctx) => ({ max: ctx.loginLimit.perIp, windowMs: ctx.loginLimit.windowMs }),
    handler: async (c) => {
      const r = await firstRunSetup(c.ctx.store, c.ctx, c.body);
      return startSession(c as RouteContext<unknown, unknown, unknown>, r.accountId);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/auth/login',
    summary: 'Sign in with email and password; sets the session cookie',
    tags: ['auth'],
    access: 'public',
    body: z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
    example: () => ({ body: { email: 'owner@example.test', password: 'correct horse battery' } }),
    response: meBody,
    // The per-IP count spares the account's known devices: behind a shared address (a proxy
    // without trustProxy, an office NAT) a guesser must not use up the owner's requests.
    rateLimit: (ctx) => ({
      max: ctx.loginLimit.perIp,
      windowMs: ctx.loginLimit.windowMs,
      allow: (req) => isKnownDevice(ctx, (req.body as { email?: unknown } | undefined)?.email, req.cookies[DEVICE_COOKIE]),
    }),
    handler: async (c) => {
      const { ctx, body, req } = c;
      try {
        const r = await signIn(ctx, { email: body.email, password: body.password, deviceCookie: req.cookies[DEVICE_COOKIE], ip: req.ip });
        return await startSession(c as RouteContext<unknown, unknown, unknown>, r.accountId, r.device);
      } catch (e) {
        if (isCadenzaError(e, 'RATE_LIMITED')) c.reply.header('retry-after', String(e.details.retryAfterSeconds ?? 60));
        throw e;
      }
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/auth/logout',
    summary: 'Sign out: ends the session',
    tags: ['auth'],
    access: 'account',
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, principal, reply }) => {
      if (principal?.kind === 'session') await deleteSession(ctx.store.db, principal.sessionToken);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { ok: true as const };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/auth/me',
    summary: 'The signed-in person, their workspaces and roles, and the CSRF token',
    tags: ['auth'],
    access: 'account',
    response: meBody,
    handler: async ({ ctx, principal }) => {
      if (principal?.kind !== 'session') throw cadenzaError('UNAUTHENTICATED', 'not signed in');
      return me(ctx, principal.accountId, principal.csrfToken);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/auth/password',
    summary: "Change the signed-in person's password; their other sessions end",
    tags: ['auth'],
    access: 'account',
    body: z.object({ currentPassword: z.string().min(1).max(1024), newPassword: password }),
    example: () => ({ body: { currentPassword: 'correct horse battery', newPassword: 'a new long password' } }),
    response: z.object({ ok: z.literal(true), otherSessionsEnded: z.number().int() }),
    handler: async ({ ctx, principal, body }) => {
      if (principal?.kind !== 'session') throw cadenzaError('UNAUTHENTICATED', 'not signed in');
      const db = ctx.store.db;
      const accountId = principal.accountId;
      if (!(await verifyPassword(await passwordHashOf(db, accountId), body.currentPassword))) {
        // A 403, not a 401: the session is fine, the proof of knowing the password is not.
        throw cadenzaError('FORBIDDEN', 'the current password is wrong', { field: 'currentPassword' });
      }
      await setPasswordHash(db, accountId, await hashPassword(body.newPassword));
      // Whoever else held a session (a stolen cookie, a forgotten laptop) is signed out.
      const ended = await endOtherSessions(db, accountId, principal.sessionToken);
      return { ok: true as const, otherSessionsEnded: ended };
    },
  }),
];
