import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../api/server.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { ensureDefaultWorkspace } from '../../ops/workspace.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { consent } from '../../sim/emulators/oauth/browser.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { localKeyWrapper, Vault } from '../vault.ts';
import { OAuthClients } from './client.ts';

const publicUrl = 'https://cadenza.acme.test';
const client = { id: 'cadenza-web', secret: 'web-secret', redirectUris: [`${publicUrl}/oauth/callback`] };

describe('OAuth routes (/oauth/:provider/start, /oauth/callback)', () => {
  let store: TestStore;
  let emu: OAuthEmulator;
  let app: FastifyInstance;

  beforeAll(async () => {
    store = await freshStore('pglite');
    const random = seededRandom(5);
    await ensureDefaultWorkspace(store, { clock: systemClock, random });
    emu = await startOAuthEmulator({ flavour: 'google', clients: [client], users: [{ email: 'rep@acme.test' }] });
    const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    const clients = new OAuthClients({ google: { clientId: client.id, clientSecret: client.secret, discoveryBase: emu.issuer } });
    app = buildServer({ store, clock: systemClock, version: 'test', oauth: { store, vault, clients, clock: systemClock, random, publicUrl } });
  });
  afterAll(async () => {
    await app?.close();
    await emu?.close();
    await store?.destroy();
  });

  it('start redirects to the consent page; the callback connects the mailbox once and answers no token', async () => {
    const start = await app.inject({ method: 'GET', url: '/oauth/google/start?mode=imap&email=rep%40acme.test' });
    expect(start.statusCode).toBe(302);
    expect(start.headers['cache-control']).toBe('no-store');
    const location = new URL(String(start.headers.location));
    expect(location.origin).toBe(emu.origin);
    expect(location.searchParams.get('redirect_uri')).toBe(`${publicUrl}/oauth/callback`);
    expect(location.searchParams.get('scope')).toBe('openid email https://mail.google.com/');
    expect(location.searchParams.get('login_hint')).toBe('rep@acme.test');

    const back = await consent(location);
    expect(`${back.origin}${back.pathname}`).toBe(`${publicUrl}/oauth/callback`);
    const cb = await app.inject({ method: 'GET', url: `/oauth/callback${back.search}` });
    expect(cb.statusCode).toBe(200);
    const body = cb.json() as Record<string, unknown>;
    expect(body).toMatchObject({ email: 'rep@acme.test', provider: 'smtp_imap', mode: 'imap', created: true });
    expect(cb.body).not.toMatch(/emu-rt-|emu\.gmail|access_token|refresh/i);

    const replay = await app.inject({ method: 'GET', url: `/oauth/callback${back.search}` });
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toMatchObject({ error: 'INVALID_INPUT' });
  });

  it('answers bad requests with clear errors', async () => {
    expect((await app.inject({ method: 'GET', url: '/oauth/yahoo/start' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/oauth/google/start?mode=pop3' })).statusCode).toBe(400);
    const ms = await app.inject({ method: 'GET', url: '/oauth/microsoft/start' });
    expect(ms.statusCode).toBe(503);
    expect(ms.json()).toMatchObject({ error: 'CONFIG_INVALID', message: expect.stringContaining('CADENZA_MICROSOFT_CLIENT_ID') });
    emu.denyNext();
    const start = await app.inject({ method: 'GET', url: '/oauth/google/start' });
    const back = await consent(String(start.headers.location));
    const denied = await app.inject({ method: 'GET', url: `/oauth/callback${back.search}` });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ error: 'MAILBOX_AUTH_FAILED', message: expect.stringContaining('access_denied') });
  });
});
