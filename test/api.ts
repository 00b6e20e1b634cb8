import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { systemClock } from '../src/common/clock.ts';
import { seededRandom } from '../src/common/random.ts';
import { localKeyWrapper, Vault } from '../src/mailbox/vault.ts';
import { addMembership } from '../src/api/auth/accounts.ts';
import { hashPassword } from '../src/api/auth/passwords.ts';
import { defaultAuthSettings, type ApiContext } from '../src/api/context.ts';
import { newId } from '../src/common/ids.ts';
import { buildServer } from '../src/api/server.ts';
import { SESSION_COOKIE } from '../src/api/auth/sessions.ts';
import { freshStore, type TestStore } from './stores.ts';

/** A server on a fresh store, with the /api routes, and helpers to act as a signed-in person. */
export interface ApiHarness {
  app: FastifyInstance;
  store: TestStore;
  ctx: Omit<ApiContext, 'store' | 'clock'>;
  close(): Promise<void>;
}

export async function apiHarness(backend: 'pglite' | 'postgres', over: Partial<ApiContext> = {}): Promise<ApiHarness> {
  const store = await freshStore(backend);
  const random = seededRandom(`api-${backend}`);
  const ctx = {
    random,
    vault: new Vault(store, localKeyWrapper(Buffer.alloc(32, 7))),
    publicUrl: 'http://localhost:8080',
    ...defaultAuthSettings,
    ...over,
  };
  const app = buildServer({ store, clock: systemClock, version: 'test', api: ctx });
  await app.ready();
  return {
    app,
    store,
    ctx,
    async close() {
      await app.close();
      await store.destroy();
    },
  };
}

/** A signed-in browser: its cookie and CSRF token, sent on every call. */
export interface Browser {
  accountId: string;
  cookie: string;
  csrf: string;
  call(method: InjectOptions['method'], url: string, body?: unknown, opts?: { csrf?: string | null }): Promise<LightMyRequestResponse>;
}

export async function login(app: FastifyInstance, email: string, password: string): Promise<Browser> {
  const r = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
  if (r.statusCode !== 200) throw new Error(`login ${email}: ${r.statusCode} ${r.body}`);
  const c = r.cookies.find((x) => x.name === SESSION_COOKIE);
  if (!c) throw new Error('login set no session cookie');
  const me = r.json<{ account: { id: string }; csrfToken: string }>();
  return browser(app, me.account.id, `${SESSION_COOKIE}=${c.value}`, me.csrfToken);
}

export function browser(app: FastifyInstance, accountId: string, cookie: string, csrf: string): Browser {
  return {
    accountId,
    cookie,
    csrf,
    call(method, url, body, opts = {}) {
      const token = opts.csrf === undefined ? csrf : opts.csrf;
      return app.inject({
        method,
        url,
        headers: { cookie, ...(token !== null ? { 'x-csrf-token': token } : {}) },
        ...(body !== undefined ? { payload: body as object } : {}),
      });
    },
  };
}

/**
 * A workspace with an owner who can sign in, made directly in the store (setup makes only the
 * first). Returns ids and the owner's password.
 */
export async function seedWorkspace(store: TestStore, name: string, ownerEmail: string, password = 'a long password 123'): Promise<{ workspaceId: string; accountId: string; userId: string; password: string }> {
  const random = seededRandom(`seed-${name}`);
  const deps = { clock: systemClock, random };
  const workspaceId = newId(Date.now(), random);
  const accountId = newId(Date.now(), random);
  await store.db.insertInto('workspace').values({ id: workspaceId, name, time_zone: 'UTC' }).execute();
  await store.db.insertInto('account').values({ id: accountId, email: ownerEmail, name, password_hash: await hashPassword(password) }).execute();
  const userId = await addMembership(store.db, deps, { accountId, workspaceId, email: ownerEmail, name, role: 'owner' });
  return { workspaceId, accountId, userId, password };
}
