import { afterEach, describe, expect, it } from 'vitest';
import { startHubSpotEmulator, type HubSpotEmulator } from '../../sim/emulators/hubspot/emulator.ts';
import { startPipedriveEmulator, type PipedriveEmulator } from '../../sim/emulators/pipedrive/emulator.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { CrmAuthError, CrmTransientError, type CrmActivity } from '../connector.ts';
import { makeConnector } from '../connectors.ts';
import { parseOAuthCredential, REFRESH_MARGIN_MS, type OAuthCredential } from './credential.ts';
import { tokenRequest, type TokenClient } from './token-endpoint.ts';

/**
 * An OAuth connection's token against the HubSpot and Pipedrive emulators on one simulated clock:
 * the connector writes with the access token the consent gave, refreshes it when it is about to
 * expire (the emulator refuses it from its expiry on) and stores each refresh; a revoked grant is
 * a CrmAuthError (the writer pauses the connection with it); Pipedrive's rotation kills the old
 * refresh token, so the stored one is the only one that works.
 */
const T0 = Date.parse('2026-03-02T09:00:00Z');
const REDIRECT = 'http://localhost:8080/oauth/crm/callback';
const clients = [{ id: 'cadenza-app', secret: 'app-secret', redirectUris: [REDIRECT] }];
let hub: HubSpotEmulator | undefined;
let pd: PipedriveEmulator | undefined;

afterEach(async () => {
  await hub?.close();
  await pd?.close();
  hub = pd = undefined;
});

const activity = (n: number, email: string): CrmActivity => ({ externalId: `cadenza:event:${n}`, kind: 'email_sent', email, occurredAt: '2026-03-02T09:00:00.000Z', title: `Email sent ${n}`, body: `body ${n}` });

/** The consent (the emulator consents at once) and the code exchange, as the callback does them. */
async function consent(authorizeUrl: string, client: TokenClient, clock: SimClock, kind: 'hubspot' | 'pipedrive'): Promise<OAuthCredential> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  await res.body?.cancel();
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
  const r = await tokenRequest(client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { clock });
  if (!r.ok) throw new Error(r.error);
  return { oauth: kind, ...client, accessToken: r.answer.accessToken, refreshToken: r.answer.refreshToken!, expiresAt: clock.now() + r.answer.expiresIn! * 1000 };
}

describe('OAuth CRM tokens', () => {
  it('HubSpot: written with the consent’s token, refreshed after 30 minutes and stored, a revoked grant refused as CrmAuthError', async () => {
    const clock = new SimClock(T0);
    hub = await startHubSpotEmulator({ clock, oauthClients: clients });
    const client: TokenClient = { tokenUrl: `${hub.baseUrl}/oauth/v1/token`, clientId: 'cadenza-app', clientSecret: 'app-secret', clientAuth: 'post' };
    const cred = await consent(`${hub.baseUrl}/oauth/authorize?client_id=cadenza-app&redirect_uri=${encodeURIComponent(REDIRECT)}&scope=oauth%20crm.objects.contacts.write&state=s1`, client, clock, 'hubspot');
    expect(cred.expiresAt - T0).toBe(1800_000);
    hub.addContact({ email: 'ana@acme.test' });
    const saved: string[] = [];
    const crm = makeConnector('hubspot', { baseUrl: hub.baseUrl, token: JSON.stringify(cred), clock, saveToken: async (t) => void saved.push(t) });
    await crm.prepare();
    expect((await crm.writeActivities([activity(1, 'ana@acme.test')])).map((r) => r.status)).toEqual(['written']);
    expect(saved).toEqual([]);

    // Past the expiry: the emulator refuses the old token, the connector refreshes first.
    clock.advance(30 * 60_000 + 1000);
    expect(hub.tokens.check(`Bearer ${cred.accessToken}`)).toEqual({ ok: false, why: 'expired' });
    expect((await crm.writeActivities([activity(2, 'ana@acme.test')])).map((r) => r.status)).toEqual(['written']);
    expect(hub.oauth.tokenRequests.filter((g) => g === 'refresh_token')).toHaveLength(1);
    expect(saved).toHaveLength(1);
    const stored = parseOAuthCredential(saved[0]!)!;
    expect(stored.accessToken).not.toBe(cred.accessToken);
    // HubSpot does not rotate: the refresh token stays.
    expect(stored.refreshToken).toBe(cred.refreshToken);
    expect(stored.expiresAt).toBe(clock.now() + 1800_000);
    expect(hub.records('emails')).toHaveLength(2);

    // The app uninstalled: the access token dies at once, the refresh is refused.
    hub.oauth.revokeAll();
    clock.advance(30 * 60_000);
    const refused = await crm.writeActivities([activity(3, 'ana@acme.test')]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CrmAuthError);
    expect((refused as Error).message).toMatch(/^HubSpot's token endpoint answered 400 BAD_REFRESH_TOKEN .*an admin must re-authorize HubSpot$/);
    expect((refused as Error).message).not.toContain(stored.refreshToken);
  });

  it('Pipedrive: a bearer token, refreshed before its hour ends; the rotated refresh token is stored and the old one is dead', async () => {
    const clock = new SimClock(T0);
    pd = await startPipedriveEmulator({ clock, oauthClients: clients });
    const client: TokenClient = { tokenUrl: `${pd.baseUrl}/oauth/token`, clientId: 'cadenza-app', clientSecret: 'app-secret', clientAuth: 'basic' };
    const cred = await consent(`${pd.baseUrl}/oauth/authorize?client_id=cadenza-app&redirect_uri=${encodeURIComponent(REDIRECT)}&state=s1`, client, clock, 'pipedrive');
    pd.addPerson({ email: 'ana@acme.test' });
    const saved: string[] = [];
    const crm = makeConnector('pipedrive', { baseUrl: pd.baseUrl, token: JSON.stringify(cred), clock, saveToken: async (t) => void saved.push(t) });
    expect((await crm.writeActivities([activity(1, 'ana@acme.test')])).map((r) => r.status)).toEqual(['written']);
    // Within the margin before the expiry: refreshed though the emulator would still take it.
    clock.advance(3599_000 - REFRESH_MARGIN_MS + 1);
    expect(pd.tokens.check(`Bearer ${cred.accessToken}`)).toMatchObject({ ok: true });
    expect((await crm.writeActivities([activity(2, 'ana@acme.test')])).map((r) => r.status)).toEqual(['written']);
    expect(saved).toHaveLength(1);
    const stored = parseOAuthCredential(saved[0]!)!;
    expect(stored.refreshToken).not.toBe(cred.refreshToken);
    // The store failing after a rotation: the request fails for now, the new grant is kept and stored at the next request.
    let down = true;
    const kept: string[] = [];
    const flaky = makeConnector('pipedrive', { baseUrl: pd.baseUrl, token: saved[0]!, clock, saveToken: async (t) => { if (down) throw new Error('store unavailable'); kept.push(t); } });
    clock.advance(3599_000);
    const failed = await flaky.writeActivities([activity(3, 'ana@acme.test')]).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(CrmTransientError);
    down = false;
    expect((await flaky.writeActivities([activity(3, 'ana@acme.test')])).map((r) => r.status)).toEqual(['written']);
    expect(kept).toHaveLength(1);
    expect(parseOAuthCredential(kept[0]!)!.refreshToken).not.toBe(stored.refreshToken);
    expect(pd.oauth.tokenRequests.filter((g) => g === 'refresh_token')).toHaveLength(2);

    const old = await tokenRequest(client, { grant_type: 'refresh_token', refresh_token: cred.refreshToken }, { clock });
    expect(old).toMatchObject({ ok: false, kind: 'refused', error: expect.stringMatching(/^400 invalid_grant/) });
    const fresh = await tokenRequest(client, { grant_type: 'refresh_token', refresh_token: parseOAuthCredential(kept[0]!)!.refreshToken }, { clock });
    expect(fresh.ok).toBe(true);
  });

  it('the token endpoints are strict: HubSpot refuses a wrong secret, Pipedrive the secret in the form', async () => {
    const clock = new SimClock(T0);
    hub = await startHubSpotEmulator({ clock, oauthClients: clients });
    pd = await startPipedriveEmulator({ clock, oauthClients: clients });
    const wrong = await tokenRequest({ tokenUrl: `${hub.baseUrl}/oauth/v1/token`, clientId: 'cadenza-app', clientSecret: 'nope', clientAuth: 'post' }, { grant_type: 'refresh_token', refresh_token: 'x' }, { clock });
    expect(wrong).toMatchObject({ ok: false, kind: 'refused', error: '400 BAD_CLIENT_SECRET (missing or invalid client secret)' });
    const inForm = await tokenRequest({ tokenUrl: `${pd.baseUrl}/oauth/token`, clientId: 'cadenza-app', clientSecret: 'app-secret', clientAuth: 'post' }, { grant_type: 'refresh_token', refresh_token: 'x' }, { clock });
    expect(inForm).toMatchObject({ ok: false, kind: 'refused', error: expect.stringMatching(/^401 invalid_client/) });
  });

  it('a pasted token is not an OAuth credential; a damaged OAuth one says to reconnect', () => {
    expect(parseOAuthCredential('pat-na1-00000000')).toBeNull();
    expect(parseOAuthCredential('{"refreshToken":"r","clientId":"c","clientSecret":"s"}')).toBeNull();
    expect(() => parseOAuthCredential('{"oauth":"hubspot","accessToken":"a"}')).toThrow(/lacks refreshToken: reconnect it/);
  });
});
