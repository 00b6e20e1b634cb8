import type { Role } from '../src/api/auth/access.ts';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { systemClock, type Clock } from '../src/common/clock.ts';
import { seededRandom } from '../src/common/random.ts';
import { localKeyWrapper, Vault } from '../src/mailbox/vault.ts';
import { erasureKey } from '../src/common/erasure-key.ts';
import { addMembership } from '../src/api/auth/accounts.ts';
import { hashPassword } from '../src/api/auth/passwords.ts';
import { issueSetupToken } from '../src/api/auth/setup-token.ts';
import { defaultAuthSettings, type ApiContext } from '../src/api/context.ts';
import { newId } from '../src/common/ids.ts';
import { buildServer, type ApiDeps } from '../src/api/server.ts';
import { SESSION_COOKIE } from '../src/api/auth/sessions.ts';
import type { Store } from '../src/store/store.ts';
import { freshStore, type TestStore } from './stores.ts';
import { CredentialTaskRunner, type TaskRunnerOptions } from '../src/sending/credential-tasks/task-runner.ts';
import { WorkNudges } from '../src/ops/work-nudge.ts';
import { applyDefinition } from '../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../src/sequence/definition.ts';

/** A server on a fresh store, with the /api routes, and helpers to act as a signed-in person. */
export interface ApiHarness {
  app: FastifyInstance;
  store: TestStore;
  ctx: Omit<ApiContext, 'store' | 'clock'>;
  /** The one-time token POST /api/setup takes on this store (src/api/auth/setup-token.ts). */
  setupToken: string;
  close(): Promise<void>;
}

/**
 * `sender`: how the harness's in-process sender role carries out credential tasks (a mailbox
 * test, a reply from the inbox, a revocation: src/sending/credential-tasks/), as `cadenza start`
 * runs it beside the API; `sender: false` runs none (the API then answers SENDER_UNAVAILABLE).
 */
export type HarnessSender = false | Partial<Pick<TaskRunnerOptions, 'replySettle' | 'oauthClients' | 'revocation' | 'connectors'>>;

export async function apiHarness(
  backend: 'pglite' | 'postgres',
  over: Partial<ApiContext> = {},
  server: Pick<ApiDeps, 'trustProxy'> & { sender?: HarnessSender; clock?: Clock } = {},
): Promise<ApiHarness> {
  const store = await freshStore(backend);
  const random = seededRandom(`api-${backend}`);
  const vault = over.vault ?? new Vault(store, localKeyWrapper(Buffer.alloc(32, 7)));
  const nudges = new WorkNudges({ origin: 'harness' });
  // `clock`: the server's (a world written at simulated times reads its analytics on the same clock).
  const { sender, clock = systemClock, ...deps } = server;
  const runner = sender === false ? undefined : new CredentialTaskRunner({ store, clock: systemClock, random, vault, owner: `tasks:harness-${backend}`, onDone: (id) => nudges.taskDone(id), ...sender });
  nudges.on('credentials', () => void runner?.nudge());
  const ctx = {
    random,
    vault,
    erasure: erasureKey(Buffer.alloc(32, 7)),
    publicUrl: 'http://localhost:8080',
    credentialTasks: { signals: { nudge: () => nudges.nudge('credentials'), onDone: (fn: (id: string) => void) => nudges.onTaskDone(fn) } },
    ...defaultAuthSettings,
    ...over,
  };
  const app = buildServer({ store, clock, version: 'test', api: ctx, ...deps });
  await app.ready();
  await runner?.start();
  const setupToken = (await issueSetupToken(store)) ?? '';
  return {
    app,
    store,
    ctx,
    setupToken,
    async close() {
      await runner?.stop();
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
export async function seedWorkspace(store: Store, name: string, ownerEmail: string, password = 'a long password 123'): Promise<{ workspaceId: string; accountId: string; userId: string; password: string }> {
  const random = seededRandom(`seed-${name}`);
  const workspaceId = newId(Date.now(), random);
  await store.db.insertInto('workspace').values({ id: workspaceId, name, time_zone: 'UTC' }).execute();
  return { workspaceId, ...(await seedMember(store, workspaceId, ownerEmail, 'owner', password, name)) };
}

/** A new account, member of an existing workspace (one a simulation built), who can sign in. */
export async function seedMember(store: Store, workspaceId: string, email: string, role: Role, password = 'a long password 123', name = email): Promise<{ accountId: string; userId: string; password: string }> {
  const random = seededRandom(`member-${workspaceId}-${email}`);
  const accountId = newId(Date.now(), random);
  await store.db.insertInto('account').values({ id: accountId, email, name, password_hash: await hashPassword(password) }).execute();
  const userId = await addMembership(store.db, { clock: systemClock, random }, { accountId, workspaceId, email, name, role });
  return { accountId, userId, password };
}

/** Ids of one of each object in a workspace, by the URL parameter name that takes them. */
export type ObjectIds = Record<string, string>;

/**
 * One of each object a workspace route can name: a mailbox owned by `ownerUserId`, a lead
 * enrolled in a two-step sequence (a call, then an email), the call's task, an inbound reply held
 * for review, and a suppressed address. Built with the domain code (applyDefinition, bulkEnroll).
 */
export async function seedGraph(store: Store, workspaceId: string, tag: string, ownerUserId: string | null): Promise<ObjectIds> {
  const random = seededRandom(`graph-${tag}`);
  const clock = systemClock;
  const id = () => newId(clock.now(), random);
  const db = store.db;
  const mailboxId = id();
  const mailboxEmail = `rep-${tag}@example.test`;
  await db.insertInto('mailbox').values({ id: mailboxId, workspace_id: workspaceId, user_id: ownerUserId, email: mailboxEmail, provider: 'smtp_imap' }).execute();
  const leadId = id();
  const leadEmail = `lead-${tag}@prospects.test`;
  await db.insertInto('lead').values({ id: leadId, workspace_id: workspaceId, email: leadEmail, email_norm: leadEmail, first_name: `Lead ${tag}` }).execute();
  const def = validateDefinition({
    key: `seq-${tag}`,
    name: `Sequence ${tag}`,
    window: 'any',
    holidays: false,
    jitter_minutes: 0,
    mailboxes: [mailboxEmail],
    steps: [
      { key: 'call', type: 'call', delay: '0 minutes', title: 'Call them' },
      { key: 'intro', type: 'email', delay: '1 days', subject: 'Hi', body: 'Hello {{first_name}}' },
    ],
  });
  const seq = await applyDefinition(store, { clock, random }, workspaceId, def);
  await bulkEnroll(store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds: [leadId] });
  const enrollment = await db.selectFrom('enrollment').select('id').where('lead_id', '=', leadId).executeTakeFirstOrThrow();
  const step = await db.selectFrom('step').select('id').where('sequence_id', '=', seq.sequenceId).where('key', '=', 'call').executeTakeFirstOrThrow();
  const taskId = id();
  await db.insertInto('task').values({ id: taskId, workspace_id: workspaceId, enrollment_id: enrollment.id, step_id: step.id, kind: 'call', title: 'Call them', due_at: new Date(clock.now()) }).execute();
  const messageId = id();
  await db
    .insertInto('message')
    .values({
      id: messageId, workspace_id: workspaceId, mailbox_id: mailboxId, enrollment_id: enrollment.id, direction: 'inbound', message_id: `<reply-${tag}@prospects.test>`,
      subject: 'Re: Hi', from_addr: leadEmail, at: new Date(clock.now()), folder: 'inbox', label: 'human_reply', confidence: 0.4, reason: 'model: unsure',
      rung: 'model', action: 'needs_review', needs_review: true, excerpt: `maybe later (${tag})`,
    })
    .execute();
  await db.insertInto('suppression').values({ workspace_id: workspaceId, email_norm: `gone-${tag}@prospects.test`, reason: 'manual', source: 'seed' }).execute();
  return { mailboxId, leadId, sequenceId: seq.sequenceId, stepId: step.id, enrollmentId: enrollment.id, taskId, messageId, email: `gone-${tag}@prospects.test` };
}

/** What most route tests start from: one workspace, its seeded objects, and its owner signed in. */
export interface OwnerFixture {
  h: ApiHarness;
  ws: string;
  owner: Browser;
  g: ObjectIds;
}

export async function ownerFixture(backend: 'pglite' | 'postgres'): Promise<OwnerFixture> {
  const h = await apiHarness(backend);
  const w = await seedWorkspace(h.store, 'A', 'owner@example.test');
  const g = await seedGraph(h.store, w.workspaceId, 'a', w.userId);
  const owner = await login(h.app, 'owner@example.test', w.password);
  return { h, ws: w.workspaceId, owner, g };
}

/** An owner and a rep (a plain member), each signed in with a mailbox of their own: for who-may-change-whose-mailbox tests. */
export interface OwnerAndRep {
  h: ApiHarness;
  ws: string;
  owner: Browser;
  rep: Browser;
  ownersMailbox: ObjectIds;
  repsMailbox: ObjectIds;
}

export async function ownerAndRep(backend: 'pglite' | 'postgres'): Promise<OwnerAndRep> {
  const h = await apiHarness(backend);
  const w = await seedWorkspace(h.store, 'A', 'owner@example.test');
  const accountId = newId(Date.now(), seededRandom('rep-account'));
  await h.store.db.insertInto('account').values({ id: accountId, email: 'rep@example.test', name: 'rep', password_hash: await hashPassword('member password 1') }).execute();
  const repUser = await addMembership(h.store.db, { clock: systemClock, random: seededRandom('m') }, { accountId, workspaceId: w.workspaceId, email: 'rep@example.test', name: 'rep', role: 'member' });
  return {
    h,
    ws: w.workspaceId,
    ownersMailbox: await seedGraph(h.store, w.workspaceId, 'o', w.userId),
    repsMailbox: await seedGraph(h.store, w.workspaceId, 'r', repUser),
    owner: await login(h.app, 'owner@example.test', w.password),
    rep: await login(h.app, 'rep@example.test', 'member password 1'),
  };
}

/**
 * A new person joins a workspace as a member of `role`, the one way there is: `by` (an admin)
 * invites the address, and the invitee signs up through the link with a name and a password.
 * Returns the invitee's signed-in browser.
 */
export async function joinByInvitation(app: FastifyInstance, by: Browser, workspaceId: string, email: string, role: 'owner' | 'admin' | 'member', password = 'initial password 1'): Promise<Browser> {
  const inv = await by.call('POST', `/api/workspaces/${workspaceId}/invitations`, { email, role });
  if (inv.statusCode !== 201) throw new Error(`invite ${email}: ${inv.statusCode} ${inv.body}`);
  const link = inv.json<{ link: string }>().link;
  const token = link.slice(link.lastIndexOf('/') + 1);
  const r = await app.inject({ method: 'POST', url: '/api/invitations/signup', payload: { token, name: email.split('@')[0], password } });
  if (r.statusCode !== 201) throw new Error(`signup ${email}: ${r.statusCode} ${r.body}`);
  const c = r.cookies.find((x) => x.name === SESSION_COOKIE)!;
  const me = r.json<{ me: { account: { id: string }; csrfToken: string } }>().me;
  return browser(app, me.account.id, `${SESSION_COOKIE}=${c.value}`, me.csrfToken);
}
