import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { ensureDefaultWorkspace } from '../../workspace/workspaces.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { connectThroughEmulator } from '../../sim/emulators/oauth/connect.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { localKeyWrapper, Vault } from '../vault.ts';
import { OAuthClients } from './client.ts';
import type { OAuthFlowDeps } from './flow.ts';
import { MailboxTokens } from './mailbox-tokens.ts';

const client = { id: 'cadenza-test', secret: 'client-secret-1', redirectUris: ['http://127.0.0.1/oauth/callback'] };
const MIN = 60_000;
const master = randomBytes(32);

/** Lets real I/O (the emulator over loopback) run, moving the simulated clock past each backoff, until p settles. */
async function drive<T>(clock: SimClock, p: Promise<T>, stepMs = 1_000): Promise<T> {
  let settled = false;
  const watched = p.finally(() => (settled = true));
  watched.catch(() => undefined);
  for (let i = 0; i < 500 && !settled; i++) {
    await new Promise((r) => setTimeout(r, 5));
    if (!settled) clock.advance(stepMs);
  }
  return watched;
}

describe('MailboxTokens (access tokens for OAuth mailboxes)', () => {
  let store: TestStore;
  let workspaceId: string;
  const random = seededRandom(11);
  let clock: SimClock;
  let emu: OAuthEmulator;
  let deps: OAuthFlowDeps;
  let tokens: MailboxTokens;

  beforeAll(async () => {
    store = await freshStore('pglite');
    workspaceId = await ensureDefaultWorkspace(store, { clock: new SimClock(Date.now()), random });
  });
  afterAll(async () => {
    await store?.destroy();
  });

  async function setup(flavour: 'google' | 'microsoft', over: { secret?: string; rotate?: boolean } = {}) {
    // One simulated clock for the emulator (expiry) and Cadenza (refresh ahead, backoff), started
    // at the wall clock so the ID token's iat is plausible to oauth4webapi.
    clock = new SimClock(Date.now());
    emu = await startOAuthEmulator({ flavour, clock, clients: [client], users: [{ email: `rep-${flavour}@acme.test` }], ...(over.rotate !== undefined ? { rotateRefreshTokens: over.rotate } : {}) });
    const settings = { clientId: client.id, clientSecret: client.secret, discoveryBase: emu.origin, ...(flavour === 'microsoft' ? { tenant: 'common' } : {}) };
    const vault = new Vault(store, localKeyWrapper(master));
    deps = { store, vault, clock, random, clients: new OAuthClients({ [flavour]: settings }, { clock }) };
    const connected = await connectThroughEmulator(deps, { workspaceId, provider: flavour, mode: 'api' });
    const clients = over.secret ? new OAuthClients({ [flavour]: { ...settings, clientSecret: over.secret } }, { clock }) : deps.clients;
    tokens = new MailboxTokens({ store, vault, clients, clock, random, backoffMs: 1_000, coolDownMs: 30_000 });
    return connected.mailboxId;
  }

  beforeEach(async () => {
    await store.db.deleteFrom('mailbox').execute();
  });
  afterEach(async () => {
    await emu?.close();
  });

  it('hands out the stored token, refreshes once 5 minutes before expiry with concurrent callers sharing one request', async () => {
    const id = await setup('google');
    const first = await tokens.accessToken(id);
    expect(emu.registry('gmail').check(`Bearer ${first}`)).toMatchObject({ ok: true });
    expect(emu.tokenRequests('refresh_token')).toBe(0);

    clock.advance(3599_000 - 6 * MIN);
    expect(await tokens.accessToken(id)).toBe(first);
    expect(emu.tokenRequests('refresh_token')).toBe(0);

    clock.advance(2 * MIN); // now 4 minutes before expiry
    const many = await Promise.all(Array.from({ length: 25 }, () => tokens.accessToken(id)));
    expect(new Set(many).size).toBe(1);
    expect(many[0]).not.toBe(first);
    expect(emu.tokenRequests('refresh_token')).toBe(1);
    expect(tokens.refreshes).toBe(1);

    // The new token is in the vault (another process reuses it), and good until its own expiry.
    const cred = await deps.vault.get(id);
    expect(cred).toMatchObject({ kind: 'oauth', accessToken: many[0] });
    clock.advance(5 * MIN);
    expect(emu.registry('gmail').check(`Bearer ${first}`)).toEqual({ ok: false, why: 'expired' });
    expect(emu.registry('gmail').check(`Bearer ${many[0]}`)).toMatchObject({ ok: true });
    const other = new MailboxTokens({ store, vault: deps.vault, clients: deps.clients, clock, random });
    expect(await other.accessToken(id)).toBe(many[0]);
    expect(emu.tokenRequests('refresh_token')).toBe(1);

    // forceRefresh (the API refused the token) refreshes, but not twice within 30 s.
    const forced = await tokens.accessToken(id, { forceRefresh: true });
    expect(forced).not.toBe(many[0]);
    expect(await tokens.accessToken(id, { forceRefresh: true })).toBe(forced);
    expect(emu.tokenRequests('refresh_token')).toBe(2);
    // Google did not rotate: the original refresh token is still the one stored.
    expect((await deps.vault.get(id)) as { refreshToken: string }).toMatchObject({ refreshToken: (cred as { refreshToken: string }).refreshToken });
  });

  it("keeps Microsoft's rotated refresh token, and asks for the mode's scopes again", async () => {
    const id = await setup('microsoft');
    const before = (await deps.vault.get(id)) as { refreshToken: string };
    await tokens.accessToken(id, { forceRefresh: true });
    const after1 = (await deps.vault.get(id)) as { refreshToken: string; scope: string };
    expect(after1.refreshToken).not.toBe(before.refreshToken);
    expect(after1.scope).toContain('https://graph.microsoft.com/Mail.Send');
    clock.advance(MIN);
    await tokens.accessToken(id, { forceRefresh: true });
    const after2 = (await deps.vault.get(id)) as { refreshToken: string };
    expect(after2.refreshToken).not.toBe(after1.refreshToken);
    // The grant knows all three; the one stored is the newest.
    const grant = [...emu.grants.grants.values()].find((g) => g.refreshTokens.has(after2.refreshToken))!;
    expect([...grant.refreshTokens].at(-1)).toBe(after2.refreshToken);
    expect(grant.refreshTokens.has(before.refreshToken)).toBe(true);
  });

  it('refreshes a Microsoft grant with the scopes it holds: one made before Mail.ReadWrite was asked for keeps working', async () => {
    const id = await setup('microsoft');
    const cred = (await deps.vault.get(id)) as { kind: 'oauth'; accessToken: string; refreshToken: string; scope: string };
    // The consent of an earlier version: Mail.Read, not Mail.ReadWrite.
    const before = ['openid', 'email', 'profile', 'offline_access', 'https://graph.microsoft.com/Mail.Read', 'https://graph.microsoft.com/Mail.Send'];
    const grant = [...emu.grants.grants.values()].find((g) => g.refreshTokens.has(cred.refreshToken))!;
    grant.scopes = before;
    await deps.vault.put(workspaceId, id, { ...cred, scope: before.join(' ') });
    await tokens.accessToken(id, { forceRefresh: true });
    expect(((await deps.vault.get(id)) as { scope: string }).scope).toContain('https://graph.microsoft.com/Mail.Read');
    expect(await store.db.selectFrom('mailbox').select('health').where('id', '=', id).executeTakeFirstOrThrow()).toEqual({ health: 'ok' });
  });

  it('a revoked grant pauses the mailbox with a reason and fails fast afterwards, without asking the provider again; a reconnect restores it', async () => {
    const id = await setup('google');
    emu.revokeUser('rep-google@acme.test');
    const calls = Promise.allSettled(Array.from({ length: 10 }, () => tokens.accessToken(id, { forceRefresh: true })));
    const results = await calls;
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const e = (r as PromiseRejectedResult).reason;
      expect(isCadenzaError(e, 'MAILBOX_AUTH_FAILED')).toBe(true);
      expect((e as { transient?: unknown }).transient).toBeUndefined();
    }
    expect(emu.tokenRequests('refresh_token')).toBe(1);
    const mb = await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(mb).toEqual({ health: 'paused', health_reason: 'Google access was revoked or expired; reconnect the mailbox' });

    // An hour of callers (a sender loop, a sync loop) later: still not one more token request.
    for (let i = 0; i < 60; i++) {
      clock.advance(MIN);
      await expect(tokens.accessToken(id)).rejects.toSatisfy((e) => isCadenzaError(e, 'MAILBOX_AUTH_FAILED'));
    }
    expect(emu.tokenRequests('refresh_token')).toBe(1);

    // The user reconnects (through a flow in another process: no forget() here): noticed at the next recheck.
    await connectThroughEmulator(deps, { workspaceId, provider: 'google', mode: 'api' });
    clock.advance(2 * MIN);
    const fresh = await tokens.accessToken(id);
    expect(emu.registry('gmail').check(`Bearer ${fresh}`)).toMatchObject({ ok: true });
    const resumed = await store.db.selectFrom('mailbox').select(['health']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(resumed.health).toBe('ok');
  });

  it('retries a token endpoint outage with backoff, then reports it as transient and cools down; the mailbox stays healthy', async () => {
    const id = await setup('google');
    emu.faults.inject('token', { kind: 'respond', status: 503, body: { error: 'server_error' } }, 2);
    const ok = await drive(clock, tokens.accessToken(id, { forceRefresh: true }));
    expect(emu.registry('gmail').check(`Bearer ${ok}`)).toMatchObject({ ok: true });
    expect(emu.tokenRequests('refresh_token')).toBe(1); // the two faults answered before the handler counted
    expect(emu.requests.filter((r) => r.route === 'token').map((r) => r.outcome).slice(-3)).toEqual([503, 503, 200]);

    clock.advance(MIN);
    emu.faults.inject('token', { kind: 'drop', after: 'receiving' }, 3);
    const failed = await drive(clock, tokens.accessToken(id, { forceRefresh: true })).catch((e: unknown) => e);
    expect(isCadenzaError(failed, 'MAILBOX_UNAVAILABLE')).toBe(true);
    expect((failed as { transient?: unknown }).transient).toBe(true);
    const tries = emu.requests.filter((r) => r.route === 'token').length;
    // Within the cool-down: refused at once, nothing sent.
    await expect(tokens.accessToken(id, { forceRefresh: true })).rejects.toSatisfy((e) => isCadenzaError(e, 'MAILBOX_UNAVAILABLE'));
    expect(emu.requests.filter((r) => r.route === 'token').length).toBe(tries);
    const mb = await store.db.selectFrom('mailbox').select(['health']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(mb.health).toBe('ok');
    clock.advance(31_000);
    await expect(tokens.accessToken(id, { forceRefresh: true })).resolves.toMatch(/^emu\.gmail\./);
  });

  it("a refused client secret pauses the mailbox with the client's problem named", async () => {
    const id = await setup('google', { secret: 'rotated-away' });
    await expect(tokens.accessToken(id, { forceRefresh: true })).rejects.toSatisfy((e) => isCadenzaError(e, 'MAILBOX_AUTH_FAILED'));
    const mb = await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(mb.health).toBe('paused');
    expect(mb.health_reason).toMatch(/Google refused Cadenza's OAuth client \(invalid_client\)/);
  });
});
