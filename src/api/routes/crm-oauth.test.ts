import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, joinByInvitation, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { openConnection } from '../../crm/connections.ts';
import { crmOAuthAppsFrom } from '../../crm/oauth/apps.ts';
import { parseOAuthCredential } from '../../crm/oauth/credential.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../../sim/emulators/hubspot/emulator.ts';
import { startPipedriveEmulator, type PipedriveEmulator } from '../../sim/emulators/pipedrive/emulator.ts';
import { startSalesforceEmulator, type SalesforceEmulator } from '../../sim/emulators/salesforce/emulator.ts';
import { makeConnector } from '../../crm/connectors.ts';
import { parseCredentials } from '../../crm/salesforce/credentials.ts';

/**
 * Connecting a CRM with OAuth through the API (crm/oauth/flow.ts, api/crm-oauth-callback.ts)
 * against the HubSpot and Pipedrive emulators' consent and token endpoints: the start (admins of
 * the workspace only, signed in), the consent, the callback in the starting session (connected,
 * the grant sealed), and every refusal as CRM_AUTH_FAILED in plain words: a replayed, foreign,
 * expired or missing state, a declined consent, a refused code. A re-authorization resumes a
 * connection paused for refused credentials.
 */
const CALLBACK = 'http://localhost:8080/oauth/crm/callback';

describe.each(testBackends())('CRM OAuth connect (%s)', (backend) => {
  let h: ApiHarness;
  let hub: HubSpotEmulator;
  let pd: PipedriveEmulator;
  let sf: SalesforceEmulator;
  let ws: string;
  let owner: Browser;
  let rep: Browser;
  let otherAdmin: Browser;

  beforeAll(async () => {
    const clients = [{ id: 'cadenza-app', secret: 'app-secret', redirectUris: [CALLBACK] }];
    hub = await startHubSpotEmulator({ oauthClients: clients });
    pd = await startPipedriveEmulator({ oauthClients: clients });
    sf = await startSalesforceEmulator({ callbackUrls: [CALLBACK] });
    const apps = crmOAuthAppsFrom({
      CADENZA_HUBSPOT_CLIENT_ID: 'cadenza-app',
      CADENZA_HUBSPOT_CLIENT_SECRET: 'app-secret',
      CADENZA_HUBSPOT_OAUTH_URL: hub.baseUrl,
      CADENZA_PIPEDRIVE_CLIENT_ID: 'cadenza-app',
      CADENZA_PIPEDRIVE_CLIENT_SECRET: 'app-secret',
      CADENZA_PIPEDRIVE_OAUTH_URL: pd.baseUrl,
      CADENZA_SALESFORCE_CLIENT_ID: sf.client.id,
      CADENZA_SALESFORCE_CLIENT_SECRET: sf.client.secret,
      CADENZA_SALESFORCE_LOGIN_URL: sf.baseUrl,
    });
    h = await apiHarness(backend, { crmOAuth: apps, webhooks: { allowPrivate: true } });
    const w = await seedWorkspace(h.store, 'Acme', 'owner@example.test');
    ws = w.workspaceId;
    owner = await login(h.app, 'owner@example.test', w.password);
    rep = await joinByInvitation(h.app, owner, ws, 'rep@example.test', 'member');
    const other = await seedWorkspace(h.store, 'Other', 'other@example.test');
    otherAdmin = await login(h.app, 'other@example.test', other.password);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await hub?.close();
    await pd?.close();
    await sf?.close();
  });

  const start = (who: Browser, kind: string, body: object = {}, workspace = ws) => who.call('POST', `/api/workspaces/${workspace}/crm/oauth/${kind}/start`, body);
  /** The admin's browser at the consent page: the emulator consents at once and sends it back. */
  async function consent(url: string): Promise<URL> {
    const res = await fetch(url, { redirect: 'manual' });
    await res.body?.cancel();
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }
  const callback = (who: Browser | null, back: URL, accept = 'text/html') =>
    h.app.inject({ method: 'GET', url: `/oauth/crm/callback${back.search}`, headers: { accept, ...(who ? { cookie: who.cookie } : {}) } });
  const landed = (r: { statusCode: number; headers: Record<string, unknown> }) => {
    expect(r.statusCode).toBe(303);
    const u = new URL(String(r.headers.location));
    expect(u.pathname).toBe('/settings');
    return u.searchParams;
  };

  it('lists the CRMs with an OAuth app; only an admin of the workspace, signed in, may start', async () => {
    const list = await owner.call('GET', `/api/workspaces/${ws}/crm/connections`);
    expect(list.json().oauth).toEqual(['hubspot', 'pipedrive', 'salesforce']);
    const asRep = await start(rep, 'hubspot');
    expect([asRep.statusCode, asRep.json().error.code]).toEqual([403, 'FORBIDDEN']);
    const elsewhere = await start(otherAdmin, 'hubspot');
    expect(elsewhere.statusCode).toBe(404);
    const unknown = await start(owner, 'twenty');
    expect(unknown.statusCode).toBe(400);
    const key = await owner.call('POST', `/api/workspaces/${ws}/api-keys`, { name: 'ci', role: 'admin' });
    expect(key.statusCode, key.body).toBe(201);
    const withKey = await h.app.inject({ method: 'POST', url: `/api/workspaces/${ws}/crm/oauth/hubspot/start`, headers: { authorization: `Bearer ${key.json().key}` }, payload: {} });
    expect([withKey.statusCode, withKey.json().error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('HubSpot: consent, callback, connected with the grant sealed; the same state again, another session, none: CRM_AUTH_FAILED', async () => {
    const started = await start(owner, 'hubspot', { baseUrl: hub.baseUrl });
    expect(started.statusCode, started.body).toBe(200);
    const url = new URL(started.json().url);
    expect(url.origin + url.pathname).toBe(`${hub.baseUrl}/oauth/authorize`);
    expect(url.searchParams.get('redirect_uri')).toBe(CALLBACK);
    expect(url.searchParams.get('scope')!.split(' ')).toContain('oauth');
    expect(url.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
    // HubSpot documents no PKCE: none sent.
    expect(url.searchParams.has('code_challenge')).toBe(false);
    const back = await consent(url.href);
    expect(back.searchParams.get('state')).toBe(url.searchParams.get('state'));

    // Another admin's session bringing this callback is refused, and leaves the flow for its own.
    const foreign = await callback(otherAdmin, back, 'application/json');
    expect([foreign.statusCode, foreign.json().error.code]).toEqual([422, 'CRM_AUTH_FAILED']);
    expect(foreign.json().error.message).toMatch(/started by someone else/);
    const anonymous = landed(await callback(null, back));
    expect(anonymous.get('crmError')).toMatch(/someone else, or in another browser session/);

    const ok = landed(await callback(owner, back));
    expect(ok.get('crmConnected')).toBe('hubspot');
    const conns = (await owner.call('GET', `/api/workspaces/${ws}/crm/connections`)).json().connections;
    expect(conns).toEqual([expect.objectContaining({ kind: 'hubspot', baseUrl: hub.baseUrl, state: 'active' })]);
    const opened = await openConnection(h.store.db, h.ctx.vault!, conns[0].id);
    const cred = parseOAuthCredential(opened.token)!;
    expect(cred).toMatchObject({ oauth: 'hubspot', clientId: 'cadenza-app', clientAuth: 'post', tokenUrl: `${hub.baseUrl}/oauth/v1/token` });
    // The access token is one the HubSpot API accepts.
    expect(hub.tokens.check(`Bearer ${cred.accessToken}`)).toMatchObject({ ok: true });
    // Sealed: the stored bytes hold no token.
    const raw = await h.store.db.selectFrom('crm_connection').select('credentials').where('id', '=', conns[0].id).executeTakeFirstOrThrow();
    expect(Buffer.from(raw.credentials).toString('latin1')).not.toContain(cred.refreshToken);

    const replay = landed(await callback(owner, back));
    expect(replay.get('crmError')).toMatch(/already completed/);
    const noState = await h.app.inject({ method: 'GET', url: '/oauth/crm/callback?code=x', headers: { cookie: owner.cookie } });
    expect([noState.statusCode, noState.json().error.code]).toEqual([422, 'CRM_AUTH_FAILED']);
    const audit = await h.store.db.selectFrom('audit_event').select(['action', 'detail']).where('workspace_id', '=', ws).where('action', '=', 'crm.connected').execute();
    expect(audit).toHaveLength(1);
  });

  it('HubSpot: a declined consent, a refused code and an expired state change nothing; a re-authorization resumes a paused connection', async () => {
    const before = (await owner.call('GET', `/api/workspaces/${ws}/crm/connections`)).json().connections[0];
    hub.oauth.denyNext();
    const declined = landed(await callback(owner, await consent((await start(owner, 'hubspot', { baseUrl: hub.baseUrl })).json().url)));
    expect(declined.get('crmError')).toBe('HubSpot access was not granted (you declined, or your HubSpot account may not install apps)');

    const back = await consent((await start(owner, 'hubspot', { baseUrl: hub.baseUrl })).json().url);
    back.searchParams.set('code', 'emu-code-forged');
    const refused = await callback(owner, back, 'application/json');
    expect(refused.json().error).toMatchObject({ code: 'CRM_AUTH_FAILED', message: expect.stringMatching(/^HubSpot refused the authorization code \(400 BAD_AUTH_CODE/) });

    const late = await consent((await start(owner, 'hubspot', { baseUrl: hub.baseUrl })).json().url);
    await h.store.db.updateTable('oauth_flow').set({ expires_at: new Date(Date.now() - 1000) }).where('state', '=', late.searchParams.get('state')!).execute();
    expect(landed(await callback(owner, late)).get('crmError')).toMatch(/more than 10 minutes and expired/);
    expect((await owner.call('GET', `/api/workspaces/${ws}/crm/connections`)).json().connections[0]).toMatchObject({ id: before.id, state: 'active' });

    // Paused for refused credentials (as the writer pauses it), then re-authorized: the same connection, a new grant, active.
    await h.store.db.updateTable('crm_connection').set({ state: 'paused', paused_reason: "HubSpot's token endpoint answered 400 BAD_REFRESH_TOKEN" }).where('id', '=', before.id).execute();
    const old = parseOAuthCredential((await openConnection(h.store.db, h.ctx.vault!, before.id)).token)!;
    const again = landed(await callback(owner, await consent((await start(owner, 'hubspot', { baseUrl: hub.baseUrl })).json().url)));
    expect(again.get('crmConnected')).toBe('hubspot');
    expect(again.get('reauthorized')).toBe('1');
    const after = (await owner.call('GET', `/api/workspaces/${ws}/crm/connections`)).json().connections;
    expect(after).toEqual([expect.objectContaining({ id: before.id, state: 'active', pausedReason: null })]);
    expect(parseOAuthCredential((await openConnection(h.store.db, h.ctx.vault!, before.id)).token)!.refreshToken).not.toBe(old.refreshToken);
  });

  it("Pipedrive: HTTP Basic at the token endpoint, the company's API host from the answer", async () => {
    const started = await start(owner, 'pipedrive');
    const url = new URL(started.json().url);
    expect(url.origin + url.pathname).toBe(`${pd.baseUrl}/oauth/authorize`);
    expect(url.searchParams.has('scope')).toBe(false);
    const ok = landed(await callback(owner, await consent(url.href)));
    expect(ok.get('crmConnected')).toBe('pipedrive');
    const c = (await owner.call('GET', `/api/workspaces/${ws}/crm/connections`)).json().connections.find((x: { kind: string }) => x.kind === 'pipedrive');
    expect(c).toMatchObject({ baseUrl: pd.baseUrl, state: 'active' });
    const cred = parseOAuthCredential((await openConnection(h.store.db, h.ctx.vault!, c.id)).token)!;
    expect(cred).toMatchObject({ oauth: 'pipedrive', clientAuth: 'basic' });
    expect(pd.tokens.check(`Bearer ${cred.accessToken}`)).toMatchObject({ ok: true, user: 'integration@acme.test' });
  });

  it('Salesforce: PKCE S256, the instance from the answer, the credential the connector refreshes from; a declined consent in plain words', async () => {
    sf.denyNext();
    const declined = landed(await callback(owner, await consent((await start(owner, 'salesforce')).json().url)));
    expect(declined.get('crmError')).toBe('Salesforce access was not granted (you declined, or your Salesforce account may not install apps)');
    const url = new URL((await start(owner, 'salesforce')).json().url);
    expect(url.origin + url.pathname).toBe(`${sf.baseUrl}/services/oauth2/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('scope')).toBe('api refresh_token');
    const ok = landed(await callback(owner, await consent(url.href)));
    expect(ok.get('crmConnected')).toBe('salesforce');
    const c = (await owner.call('GET', `/api/workspaces/${ws}/crm/connections`)).json().connections.find((x: { kind: string }) => x.kind === 'salesforce');
    expect(c).toMatchObject({ baseUrl: sf.baseUrl, state: 'active' });
    const opened = await openConnection(h.store.db, h.ctx.vault!, c.id);
    expect(parseCredentials(opened.token)).toMatchObject({ clientId: sf.client.id, instanceUrl: sf.baseUrl, refreshToken: expect.stringMatching(/^5Aep861/) });
    // The connector's own refresh-token flow takes the grant: it acts as the user who consented.
    const crm = makeConnector('salesforce', { baseUrl: opened.baseUrl, token: opened.token });
    expect(await (crm as unknown as { integrationUserId(): Promise<string | null> }).integrationUserId()).toBe(sf.integrationUserId);
  });
});
