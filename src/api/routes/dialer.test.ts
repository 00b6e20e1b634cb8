import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { ephemeralCredential } from '../../dialer/sip-credentials.ts';

const NOW = Date.UTC(2026, 2, 2, 8, 0, 0);
const fixedClock = { ...systemClock, now: () => NOW };
const DIALER = {
  wsUrl: 'wss://sip.example.com:8443/ws',
  domain: 'sip.example.com',
  sipSecret: 'the sip shared secret',
  turnUrls: ['turn:turn.example.com:3478?transport=udp'],
  turnSecret: 'the turn shared secret',
  ttlSeconds: 3600,
};

/** Any bytes do for the route: it serves the file start validated (src/dialer/recording/ingest.ts readAnnouncement). */
const ANNOUNCEMENT = new Uint8Array([0x52, 0x49, 0x46, 0x46, 1, 2, 3, 4]);

describe.each(testBackends())('GET /api/workspaces/:id/dialer/config (%s)', (backend) => {
  let on: ApiHarness;
  let off: ApiHarness;
  let rep: Browser;
  let repOff: Browser;
  let ws: string;
  let wsOff: string;
  let userId: string;

  beforeAll(async () => {
    on = await apiHarness(backend, { dialer: DIALER, realClock: fixedClock, consentAnnouncement: ANNOUNCEMENT });
    const s = await seedWorkspace(on.store, 'Dialer Co', 'rep@example.test');
    ws = s.workspaceId;
    userId = s.userId;
    rep = await login(on.app, 'rep@example.test', s.password);
    off = await apiHarness(backend);
    const t = await seedWorkspace(off.store, 'No Phones Co', 'rep@example.test');
    wsOff = t.workspaceId;
    repOff = await login(off.app, 'rep@example.test', t.password);
  }, 60_000);
  afterAll(async () => {
    await on?.close();
    await off?.close();
  });

  it('issues the member a SIP and a TURN credential valid for the configured time', async () => {
    const r = await rep.call('GET', `/api/workspaces/${ws}/dialer/config`);
    expect(r.statusCode, r.body).toBe(200);
    const expiry = NOW / 1000 + 3600;
    expect(r.json()).toEqual({
      enabled: true,
      recorded: false,
      phoneNumber: null,
      wsUrl: DIALER.wsUrl,
      sipUri: `sip:${userId}@sip.example.com`,
      authorizationUser: `${expiry}:${userId}`,
      password: ephemeralCredential(DIALER.sipSecret, userId, expiry).password,
      expiresAt: '2026-03-02T09:00:00.000Z',
      iceServers: [{ urls: DIALER.turnUrls, username: `${expiry}:${userId}`, credential: ephemeralCredential(DIALER.turnSecret, userId, expiry).password }],
    });
    expect(r.headers['cache-control'] ?? '').not.toMatch(/public/);
  });

  it("signs the recording flag into the username when the workspace records calls, so the browser cannot change it", async () => {
    await on.store.db.updateTable('workspace').set({ settings: JSON.stringify({ callRecording: true }) }).where('id', '=', ws).execute();
    try {
      const r = (await rep.call('GET', `/api/workspaces/${ws}/dialer/config`)).json();
      const expiry = NOW / 1000 + 3600;
      expect(r).toMatchObject({ recorded: true, authorizationUser: `${expiry}:${userId}:rec`, password: ephemeralCredential(DIALER.sipSecret, `${userId}:rec`, expiry).password, sipUri: `sip:${userId}@sip.example.com` });
      // TURN has no business with recording: its credential is the plain one.
      expect(r.iceServers[0].username).toBe(`${expiry}:${userId}`);
    } finally {
      await on.store.db.updateTable('workspace').set({ settings: JSON.stringify({}) }).where('id', '=', ws).execute();
    }
  });

  it("signs the rep's trunk number into the username once an admin set it, and says it", async () => {
    await on.store.db.updateTable('app_user').set({ phone_number: '+442079460199' }).where('id', '=', userId).execute();
    try {
      const r = (await rep.call('GET', `/api/workspaces/${ws}/dialer/config`)).json();
      expect(r.phoneNumber).toBe('+442079460199');
      expect(r.authorizationUser).toBe(`${NOW / 1000 + 3600}:${userId}:+442079460199`);
    } finally {
      await on.store.db.updateTable('app_user').set({ phone_number: null }).where('id', '=', userId).execute();
    }
  });

  it("lets the web app connect to exactly the SIP WebSocket's origin, no other wss: host", async () => {
    const page = await on.app.inject({ method: 'GET', url: '/' });
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toMatch(/connect-src 'self' wss:\/\/sip\.example\.com:8443(;|$)/);
    expect(csp).not.toMatch(/wss:(\s|;|$)/);
    const plain = await off.app.inject({ method: 'GET', url: '/' });
    expect(String(plain.headers['content-security-policy'])).toMatch(/connect-src 'self';/);
  });

  it('answers enabled: false with the reason when the server has no dialer', async () => {
    const r = await repOff.call('GET', `/api/workspaces/${wsOff}/dialer/config`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ enabled: false, reason: expect.stringMatching(/CADENZA_SIP_WS_URL/) });
  });

  it('is for members of the workspace only', async () => {
    for (const path of ['dialer/config', 'dialer/announcement']) {
      const anon = await on.app.inject({ method: 'GET', url: `/api/workspaces/${ws}/${path}` });
      expect(anon.statusCode).toBe(401);
      const other = await repOff.call('GET', `/api/workspaces/${ws}/${path}`);
      expect([401, 403, 404]).toContain(other.statusCode);
    }
  });

  it("serves the consent announcement the rep's browser plays on a recorded call, the very file the media relay plays; 404 when the server has none", async () => {
    const r = await rep.call('GET', `/api/workspaces/${ws}/dialer/announcement`);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('audio/wav');
    expect(new Uint8Array(r.rawPayload)).toEqual(ANNOUNCEMENT);
    expect(r.headers['cache-control']).toMatch(/^private/);
    const none = await repOff.call('GET', `/api/workspaces/${wsOff}/dialer/announcement`);
    expect(none.statusCode).toBe(404);
    expect(none.json().error.message).toMatch(/CADENZA_RECORDING_ANNOUNCEMENT/);
  });
});
