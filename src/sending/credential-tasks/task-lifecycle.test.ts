import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { OAuthClients } from '../../mailbox/oauth/client.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { makeWorld } from '../../../test/fixtures/world.ts';
import { askCredentialTask } from './ask-task.ts';
import { CredentialTaskRunner } from './task-runner.ts';
import { claimTask, RUNNER_ROLE } from './task-queue.ts';

/**
 * A credential task's life on a simulated clock, against the real queries (PGlite) and Google's
 * OAuth server emulated: what an asker does when no sender takes its task (withdrawn at 10 s) or
 * a sender takes it and never answers (given up at 60 s); what a new runner does with the tasks a
 * dead one left running (a reply failed, never redone on a guess; a revocation done again); how a
 * revocation the provider refuses for a while is retried with its backoff, one the provider says
 * is already dead is not retried at all; and that ended tasks are deleted after a week.
 */
const client = { id: 'cadenza-lifecycle', secret: 'lifecycle-secret', redirectUris: ['http://127.0.0.1/oauth/callback'] };

describe('credential tasks on a simulated clock', () => {
  let store: TestStore;
  let emu: OAuthEmulator;
  let vault: Vault;
  let workspaceId: string;
  let clock: SimClock;
  const random = seededRandom(4646);
  const runners: CredentialTaskRunner[] = [];

  beforeAll(async () => {
    store = await freshStore('pglite');
    emu = await startOAuthEmulator({ flavour: 'google', clients: [client], users: [{ email: 'grant@gmail.test' }] });
    vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    workspaceId = (await makeWorld(store, { leads: 0, mailboxes: 0, nowMs: Date.now(), random, zones: ['UTC'], countries: [null] })).workspaceId;
  });
  afterAll(async () => {
    for (const r of runners) await r.stop();
    await emu?.close();
    await store?.destroy();
  });
  beforeEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
    await store.db.deleteFrom('credential_task').execute();
    await store.db.deleteFrom('member').execute();
    await store.db.deleteFrom('mailbox').execute();
    // The revocation trigger stamps run_after with the database's now(): the simulated clock starts there.
    clock = new SimClock(Date.now());
  });

  const task = (id: string) => store.db.selectFrom('credential_task').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tasks = () => store.db.selectFrom('credential_task').selectAll().orderBy('created_at').execute();
  /** A runner's heartbeat, as membership writes it, without a runner (the asker's check). */
  const aliveRunner = () =>
    store.db.insertInto('member').values({ id: `runner-${randomUUID()}`, role: RUNNER_ROLE, host: 'elsewhere', pid: 1, joined_at: new Date(clock.now()), heartbeat_at: new Date(clock.now()) }).execute();

  /** Runs `p` to its end, moving the simulated clock to each timer it sets; `each` sees every step. */
  async function drive<T>(p: Promise<T>, each?: () => Promise<void>): Promise<{ ok: true; value: T } | { ok: false; error: Error & { code?: string; details?: Record<string, unknown> }; atMs: number }> {
    const started = clock.now();
    let out: { ok: true; value: T } | { ok: false; error: Error } | undefined;
    p.then(
      (value) => void (out = { ok: true, value }),
      (error: Error) => void (out = { ok: false, error }),
    );
    for (let i = 0; i < 1000 && !out; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await each?.();
      if (out) break;
      const next = clock.nextTimerAt();
      if (next !== undefined) clock.advanceTo(next);
    }
    if (!out) throw new Error('the asker neither answered nor failed');
    return out.ok ? out : { ...out, atMs: clock.now() - started };
  }

  async function oauthMailbox(email = 'grant@gmail.test'): Promise<{ mailboxId: string; refreshToken: string }> {
    const mailboxId = randomUUID();
    await store.db.insertInto('mailbox').values({ id: mailboxId, workspace_id: workspaceId, email, provider: 'gmail', settings: JSON.stringify({ oauth: { provider: 'google', mode: 'api' } }) }).execute();
    const grant = emu.grants.newGrant(client.id, { email, sub: 'emu-grant' }, ['https://mail.google.com/']);
    const refreshToken = emu.grants.newRefreshToken(grant);
    await vault.put(workspaceId, mailboxId, { kind: 'oauth', accessToken: 'access', refreshToken });
    return { mailboxId, refreshToken };
  }
  /** The mailbox's removal as the API does it: the credential's deletion leaves the revocation task (trigger). */
  async function remove(mailboxId: string): Promise<string> {
    await store.db.deleteFrom('mailbox_credential').where('mailbox_id', '=', mailboxId).execute();
    const t = await store.db.selectFrom('credential_task').select('id').where('mailbox_id', '=', mailboxId).where('kind', '=', 'revoke').executeTakeFirstOrThrow();
    clock.advance(1_000);
    return t.id;
  }
  function runner(): CredentialTaskRunner {
    const oauthClients = new OAuthClients({ google: { clientId: client.id, clientSecret: client.secret, discoveryBase: emu.issuer } }, { clock });
    const r = new CredentialTaskRunner({ store, clock, random: random.fork('runner'), vault, oauthClients, owner: `runner-${randomUUID()}`, heartbeatMs: 3_600_000, idleMs: 3_600_000 });
    runners.push(r);
    return r;
  }
  /** Waits (real time) until the task reaches one of `states`. */
  async function until(id: string, states: string[]): Promise<Awaited<ReturnType<typeof task>>> {
    for (let i = 0; i < 400; i++) {
      const t = await task(id);
      if (states.includes(t.state)) return t;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never reached ${states.join(' or ')}`);
  }

  it('no runner alive: the asker says so at once and writes nothing', async () => {
    const r = await drive(askCredentialTask({ db: store.db, clock, random }, { workspaceId, mailboxId: randomUUID(), kind: 'test' }));
    expect(r).toMatchObject({ ok: false, atMs: 0, error: { code: 'SENDER_UNAVAILABLE', message: expect.stringMatching(/^No sender process is running/) } });
    expect(await tasks()).toEqual([]);
  });

  it('a runner alive but none claims the task: withdrawn at 10 s, nothing done, said in plain words', async () => {
    await aliveRunner();
    const r = await drive(askCredentialTask({ db: store.db, clock, random }, { workspaceId, mailboxId: randomUUID(), kind: 'test' }));
    expect(r).toMatchObject({ ok: false, atMs: 10_000, error: { code: 'SENDER_UNAVAILABLE', message: expect.stringMatching(/took this within 10 s .* withdrawn: nothing was done/) } });
    const [t] = await tasks();
    expect(t).toMatchObject({ state: 'cancelled', attempts: 0 });
    // A runner that comes late finds nothing to do: a withdrawn task is never claimed.
    expect(await claimTask(store.db, clock.now(), 60_000)).toBeUndefined();
  });

  it('a runner claims the task and never answers: the asker gives up at 60 s; a reply says how to send it again safely', async () => {
    await aliveRunner();
    // The stuck runner: claims whatever is queued, and is never heard of again.
    const stuck = async () => void (await claimTask(store.db, clock.now(), 10 * 60_000));
    const test = await drive(askCredentialTask({ db: store.db, clock, random }, { workspaceId, mailboxId: randomUUID(), kind: 'test' }), stuck);
    expect(test).toMatchObject({ ok: false, atMs: 60_000, error: { code: 'SENDER_UNAVAILABLE', message: expect.stringMatching(/took the test but gave no answer within 60 s/) } });
    await aliveRunner();
    const reply = await drive(askCredentialTask({ db: store.db, clock, random }, { workspaceId, mailboxId: randomUUID(), kind: 'reply', input: { messageId: randomUUID(), text: 'Tuesday works.', idempotencyKey: 'reply-1' } }), stuck);
    expect(reply).toMatchObject({ ok: false, atMs: 60_000, error: { code: 'SEND_UNCONFIRMED', details: { retrySafe: true }, message: expect.stringMatching(/same idempotency key is safe/) } });
    expect((await tasks()).map((t) => t.state)).toEqual(['running', 'running']);
  });

  it('a runner that died mid-task: the next one fails the reply (never sent again on a guess) and revokes the grant again', async () => {
    const { mailboxId, refreshToken } = await oauthMailbox();
    const revokeId = await remove(mailboxId);
    const replyId = randomUUID();
    await store.db.insertInto('credential_task').values({ id: replyId, workspace_id: workspaceId, mailbox_id: mailboxId, kind: 'reply', input: JSON.stringify({ text: 'Tuesday works.', idempotencyKey: 'reply-2' }), run_after: new Date(clock.now()) }).execute();
    // The dead runner's claims: 10 minutes each, then it is gone.
    expect(await claimTask(store.db, clock.now(), 10 * 60_000)).toBeDefined();
    expect(await claimTask(store.db, clock.now(), 10 * 60_000)).toBeDefined();
    // Before the claims run out, a new runner leaves them alone.
    const first = runner();
    await first.start();
    await first.nudge();
    expect((await tasks()).map((t) => t.state)).toEqual(['running', 'running']);
    expect(emu.grants.grantOfRefreshToken(refreshToken)).toBeDefined();

    clock.advance(10 * 60_000 + 1);
    await first.nudge();
    expect(await until(replyId, ['failed'])).toMatchObject({ input: {}, result: { ok: false, error: { code: 'SEND_UNCONFIRMED', details: { retrySafe: false } } } });
    expect(await until(revokeId, ['done'])).toMatchObject({ attempts: 2, sealed: null, result: { ok: true, value: 'revoked' } });
    expect(emu.grants.grantOfRefreshToken(refreshToken)).toBeUndefined();
  });

  it('a revocation the provider refuses is retried after 1 min, then 2 min, and done when it answers; one already revoked is not retried', async () => {
    const { mailboxId, refreshToken } = await oauthMailbox();
    emu.faults.inject('revoke', { kind: 'respond', status: 503, body: { error: 'backendError' } }, 2);
    const id = await remove(mailboxId);
    const r = runner();
    await r.start();
    await r.nudge();
    const t1 = await until(id, ['queued']);
    expect(t1).toMatchObject({ attempts: 1, result: { ok: false } });
    expect(t1.run_after.getTime() - clock.now()).toBe(60_000);
    expect(t1.sealed).not.toBeNull();

    clock.advanceTo(t1.run_after.getTime());
    await r.nudge();
    const t2 = await until(id, ['queued']);
    expect(t2.attempts).toBe(2);
    expect(t2.run_after.getTime() - clock.now()).toBe(120_000);

    // The runner's own timer wakes it when the retry falls due.
    clock.advanceTo(t2.run_after.getTime());
    expect(await until(id, ['done'])).toMatchObject({ attempts: 3, sealed: null, result: { ok: true, value: 'revoked' } });
    expect(emu.grants.grantOfRefreshToken(refreshToken)).toBeUndefined();
    expect(emu.faults.pending()).toBe(0);

    // The user revoked it at Google first: Google answers 400 invalid_token, and the grant is dead already.
    const other = await oauthMailbox('grant2@gmail.test');
    emu.revokeUser('grant2@gmail.test');
    const id2 = await remove(other.mailboxId);
    await r.nudge();
    expect(await until(id2, ['done', 'failed'])).toMatchObject({ state: 'done', attempts: 1, sealed: null, result: { ok: true, value: 'already_revoked' } });
  });

  it('ended tasks are deleted a week after they ended; queued and running ones stay', async () => {
    const at = (days: number) => new Date(clock.now() - days * 86_400_000);
    const rows = [
      { state: 'done', updated_at: at(8) },
      { state: 'failed', updated_at: at(8) },
      { state: 'cancelled', updated_at: at(8) },
      { state: 'done', updated_at: at(6) },
      { state: 'queued', updated_at: at(8), run_after: new Date(clock.now() + 86_400_000) },
      { state: 'running', updated_at: at(8), claimed_until: new Date(clock.now() + 60_000) },
    ] as const;
    for (const row of rows) await store.db.insertInto('credential_task').values({ id: randomUUID(), workspace_id: workspaceId, mailbox_id: randomUUID(), kind: 'test', ...row }).execute();
    const r = runner();
    await r.start();
    await r.nudge();
    expect((await tasks()).map((t) => t.state).sort()).toEqual(['done', 'queued', 'running']);
  });
});
