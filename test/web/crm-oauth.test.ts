import { afterAll, describe, expect, it } from 'vitest';
import { crmOAuthAppsFrom } from '../../src/crm/oauth/apps.ts';
import { REFRESH_MARGIN_MS } from '../../src/crm/oauth/credential.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../../src/sim/emulators/hubspot/emulator.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * Connecting HubSpot with OAuth from Settings → Integrations in headless Chromium, against the
 * real app (its CRM sync loop included) and the HubSpot emulator's consent and token endpoints:
 * "Connect with HubSpot" beside the pasted-token form, the consent at the emulator, back on
 * Settings connected; an open written to HubSpot with the OAuth token (the emulator issued no
 * other); the token near its expiry refreshed by the writer and stored; the app uninstalled in
 * HubSpot, the connection pauses itself with the reason in words and offers "Re-authorize
 * HubSpot", which resumes it and writes what queued; a declined consent said in words. axe and
 * screenshots at 1440×900 and 390×844 on the connect form and on the paused card
 * (crm-oauth-00-connect-form-*, crm-oauth-02-paused-*); crm-oauth-01-connected-1440.
 */
const skip = chromiumSkipReason();

describe.skipIf(skip !== null)(`CRM OAuth connect in settings${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let hub: HubSpotEmulator | undefined;
  const web = webSuite({
    prefix: 'crm-oauth',
    roles: ['api'],
    // The HubSpot API on loopback: allowed as the webhook destination rules allow it in tests.
    appOptions: async (publicUrl) => {
      // Tokens that live 2 s past the refresh margin: the writer refreshes within the test, as it would after 29 minutes.
      hub = await startHubSpotEmulator({ oauthClients: [{ id: 'cadenza-app', secret: 'app-secret', redirectUris: [`${publicUrl}/oauth/crm/callback`] }], accessTokenTtlS: REFRESH_MARGIN_MS / 1000 + 2 });
      return {
        webhooks: { allowPrivate: true },
        crmOAuth: crmOAuthAppsFrom({ CADENZA_HUBSPOT_CLIENT_ID: 'cadenza-app', CADENZA_HUBSPOT_CLIENT_SECRET: 'app-secret', CADENZA_HUBSPOT_OAUTH_URL: hub.baseUrl }),
      };
    },
  });
  afterAll(() => hub?.close());

  const queueOpen = async (n: number, email: string) => {
    const conn = await web.app.store.db.selectFrom('crm_connection').select(['id', 'workspace_id']).executeTakeFirstOrThrow();
    const at = new Date();
    await web.app.store.db
      .insertInto('crm_activity')
      .values({ connection_id: conn.id, workspace_id: conn.workspace_id, external_id: `cadenza:tracking:${n}`, kind: 'email_opened', email, payload: JSON.stringify({ verdict: 'human' }), occurred_at: at, next_attempt_at: at })
      .execute();
    return conn.id;
  };

  it('connects HubSpot with OAuth, writes with its token, refreshes it, pauses on a revoked grant and is re-authorized', async () => {
    const emu = hub!;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await web.setupOwner(page, { name: 'Inès', email: 'ines@cadenza.test', password: 'a long enough password', workspace: 'CRM Co' });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    const section = page.getByRole('region', { name: 'Integrations' });
    await section.getByText('No CRM connected yet.').waitFor();
    // The token path stays the alternative.
    await section.getByLabel('Or connect with a token').waitFor();
    const found: string[] = [];
    await atBothWidths(page, 'crm-oauth', '00-connect-form', found);
    expect(found, 'serious or critical axe violations').toEqual([]);

    // A declined consent comes back in words, nothing connected.
    emu.oauth.denyNext();
    await section.getByLabel('API address').fill(emu.baseUrl);
    await section.getByRole('button', { name: 'Connect with HubSpot' }).click();
    await section.getByText('The CRM was not connected: HubSpot access was not granted (you declined, or your HubSpot account may not install apps)').waitFor();
    expect(new URL(page.url()).search).toBe('');

    await section.getByLabel('API address').fill(emu.baseUrl);
    await section.getByRole('button', { name: 'Connect with HubSpot' }).click();
    await section.getByText('Connected HubSpot: activities are written from now on.').waitFor();
    const card = section.getByRole('article', { name: 'HubSpot' });
    await card.getByText('active', { exact: true }).waitFor();
    expect(await card.getByText(emu.baseUrl).count()).toBe(1);
    await screenshot(page, 'crm-oauth-01-connected-1440');

    // An open of a contact HubSpot has is written by the sync loop, with the OAuth token (the emulator issued no other).
    emu.addContact({ email: 'known@prospects.test' });
    const id = await queueOpen(900, 'known@prospects.test');
    const written = card.locator('.crm-outbox > div').filter({ has: page.getByText('Written', { exact: true }) }).locator('dd');
    await expect.poll(() => written.textContent(), { timeout: 25_000 }).toBe('1');
    const sealed = async () => Buffer.from((await web.app.store.db.selectFrom('crm_connection').select('credentials').where('id', '=', id).executeTakeFirstOrThrow()).credentials).toString('hex');
    const before = await sealed();
    const issued = () => [...emu.oauth.grants.accessTokens.keys()];

    // Past the refresh margin (2 s after the consent): the next write refreshes first and the new grant is stored sealed.
    await new Promise((r) => setTimeout(r, 2_500));
    await queueOpen(901, 'known@prospects.test');
    await expect.poll(() => written.textContent(), { timeout: 25_000 }).toBe('2');
    expect(emu.oauth.tokenRequests.filter((g) => g === 'refresh_token').length).toBeGreaterThanOrEqual(1);
    expect(issued().length).toBeGreaterThanOrEqual(2);
    expect(emu.tokens.check(`Bearer ${issued().at(-1)}`)).toMatchObject({ ok: true });
    expect(await sealed()).not.toBe(before);

    // The app uninstalled in HubSpot: the next write is refused, the connection pauses itself and says why.
    emu.oauth.revokeAll();
    await queueOpen(902, 'known@prospects.test');
    await card.getByText('paused', { exact: true }).waitFor({ timeout: 25_000 });
    const paused = await web.app.store.db.selectFrom('crm_connection').select(['state', 'paused_reason']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(paused.state).toBe('paused');
    expect(paused.paused_reason).toMatch(/HubSpot/);
    await card.getByRole('button', { name: 'Re-authorize HubSpot' }).waitFor();
    // Refused at the API (401) or at the refresh (BAD_REFRESH_TOKEN), whichever the writer met first: either way, re-authorizing is what the words ask.
    expect(await card.locator('.note-warn').textContent()).toMatch(/Re-authorize HubSpot( \(or replace the token\))? to resume\./);
    await atBothWidths(page, 'crm-oauth', '02-paused', found);
    expect(found, 'serious or critical axe violations').toEqual([]);

    await card.getByRole('button', { name: 'Re-authorize HubSpot' }).click();
    await section.getByText('HubSpot re-authorized: the connection is active and the queued activities are written now.').waitFor();
    await card.getByText('active', { exact: true }).waitFor();
    await expect.poll(() => written.textContent(), { timeout: 25_000 }).toBe('3');
    expect(await web.app.store.db.selectFrom('crm_connection').select('id').execute()).toHaveLength(1);
  }, 150_000);
});
