import { createHash, X509Certificate } from 'node:crypto';
import { connect, type PeerCertificate } from 'node:tls';
import type { Browser, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/agency/clients.ts';
import { setLogo } from '../../src/agency/sql/agency.ts';
import { SESSION_COOKIE } from '../../src/api/auth/sessions.ts';
import { SSO_BINDING_COOKIE } from '../../src/api/sso-callback.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../src/sim/emulators/oauth/emulator.ts';
import { systemClock } from '../../src/common/clock.ts';
import { systemRandom } from '../../src/common/random.ts';
import type { DomainJob, StepOutcome } from '../../src/tracking/domains/domain-job.ts';
import { domainOfWorkspace, makeDue } from '../../src/tracking/domains/sql/tracking-domain.ts';
import { pebbleHostSettings, pebbleInstalled, startPebble, type Pebble } from '../acme/pebble.ts';
import { login, seedMember, seedWorkspace } from '../api.ts';
import { startTestDnsServer, type TestDnsServer } from '../dns-server.ts';
import { chromiumSkipReason, launchChromium } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * Issue 19 over HTTPS, end to end: an agency's client serves the app on its own domain. The agency
 * sets the client's branding and app host through the API; the test's DNS server answers the
 * host's CNAME to the installation's name; the domain job verifies it and gets a certificate from
 * Pebble (a real HTTP-01 validation against the app's port); the HTTPS listener serves it by SNI.
 * Then Chromium, told that the host is 127.0.0.1 (--host-resolver-rules) and to accept exactly
 * that certificate's key (--ignore-certificate-errors-spki-list with the leaf's SPKI hash: Pebble's
 * root is a fresh one per run, and trusting it would need a certificate store Chromium reads),
 * opens https://<client host>:<port>/ and sees the client's sign-in page; a client member signs in
 * and gets a host-only, Secure session cookie; then, in a fresh browser context, signs in there by
 * single sign-on (the OAuth emulator as the client's OpenID provider): the provider sends the
 * browser back to the client's host (its redirect URI, listed in the SSO settings beside the
 * public one), which sets its own Secure session cookie and opens the app there. The issuer and names are checked over node:tls
 * against Pebble's issuing root, and a name without a certificate gets no handshake.
 * Screenshots and axe at 1440×900 and 390×844. Pebble and Chromium are installed by .ci/run;
 * without either (a developer's machine) the file is skipped.
 */
const skip = chromiumSkipReason() ?? (pebbleInstalled() || process.env.CI ? null : 'no pebble (apt-get install -y pebble)');
const CLIENT_HOST = 'app.client-example.test';
const PUBLIC_HOST = 'cadenza.test';
const OWNER = { email: 'owner@agency.test', password: 'a long enough password' };
const MEMBER = { email: 'rep@client-example.test', password: 'a long enough password' };

describe.skipIf(skip !== null)(`an agency client's app on its own domain over HTTPS${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let dns: TestDnsServer | undefined;
  let pebble: Pebble | undefined;
  let browser: Browser | undefined;
  let idp: OAuthEmulator | undefined;
  const web = webSuite({
    prefix: 'web-agency-https',
    roles: ['api'],
    startTimeout: 180_000,
    // Pebble validates HTTP-01 on the app's own port, known here from the public URL.
    appOptions: async (publicUrl) => {
      dns = await startTestDnsServer();
      pebble = await startPebble({ dnsServer: dns.address, httpPort: Number(new URL(publicUrl).port) });
      // The test drives the job and refreshes the book itself.
      // Private destinations allowed: the SSO provider (the OAuth emulator) is on loopback.
      return { trackingDomains: pebbleHostSettings(pebble, dns.address, PUBLIC_HOST), webhooks: { allowPrivate: true } };
    },
  });

  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await pebble?.close();
    await dns?.close();
  }, 60_000);

  it("issues the client's certificate with Pebble, serves the branded app by SNI, and a member signs in there", async () => {
    const { app } = web;
    const server = app.server!;
    const db = app.store.db;
    const found: string[] = [];

    // The agency, its client, and the client's branding and app host, set through the API.
    const agency = await seedWorkspace(app.store, 'Agency One', OWNER.email, OWNER.password);
    const created = await createClient(app.store, { clock: systemClock, random: systemRandom() }, { agencyId: agency.workspaceId, name: 'Client Example', timeZone: 'Europe/Berlin' });
    if (!created.ok) throw new Error(created.message);
    const clientId = created.workspaceId;
    const owner = await login(server, OWNER.email, OWNER.password);
    const base = `/api/workspaces/${clientId}/branding`;
    expect((await owner.call('PUT', base, { displayName: 'Client Example Co', primaryColor: '#1a237e', accentColor: '#ff6f00' })).statusCode).toBe(200);
    const put = await owner.call('PUT', `${base}/domain`, { host: CLIENT_HOST });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ host: CLIENT_HOST, state: 'pending_dns', cnameTarget: PUBLIC_HOST });
    await seedMember(app.store, clientId, MEMBER.email, 'member', MEMBER.password);

    // A logo Chromium draws (120×48 of the accent colour).
    const painter = await web.newPage({ viewport: { width: 200, height: 200 } });
    await painter.setContent('<body style="margin:0"><div style="width:120px;height:48px;background:#ff6f00"></div></body>');
    await setLogo(db, clientId, { bytes: await painter.screenshot({ clip: { x: 0, y: 0, width: 120, height: 48 } }), type: 'image/png' }, new Date());
    await painter.close();

    // No CNAME yet: the job the PUT nudged leaves it pending, saying what to publish.
    await expect.poll(async () => (await domainOfWorkspace(db, clientId, 'app'))?.reason, { timeout: 15_000 }).toContain(`CNAME ${PUBLIC_HOST}.`);
    expect((await domainOfWorkspace(db, clientId, 'app'))?.state).toBe('pending_dns');
    // Published: verified, issued by Pebble, active.
    dns!.setCname(CLIENT_HOST, PUBLIC_HOST);
    dns!.setA(PUBLIC_HOST, ['127.0.0.1']);
    await makeDue(db, clientId, Date.now(), 'app');
    expect(await stepOnce(app.customHosts!.job)).toEqual([{ host: CLIENT_HOST, state: 'active', reason: null }]);
    await app.customHosts!.book.refresh();
    expect(app.customHosts!.book.isAppHost(CLIENT_HOST)).toBe(true);

    // Over node:tls, trusting only Pebble's issuing root: the client's name, Pebble's issuer.
    const port = app.trackingHttpsPort!;
    const root = await pebble!.issuingRoot();
    const leaf = await handshake(port, CLIENT_HOST, root);
    expect(leaf.authorized).toBe(true);
    expect(leaf.cert.subjectaltname).toBe(`DNS:${CLIENT_HOST}`);
    const served = new X509Certificate(leaf.cert.raw);
    expect(served.checkHost(CLIENT_HOST)).toBe(CLIENT_HOST);
    expect(served.checkHost(PUBLIC_HOST)).toBeUndefined();
    expect(served.verify(issuerKey(leaf.cert))).toBe(true);
    expect(served.issuer).toMatch(/Pebble/i);
    // A name without a certificate: no handshake, so no client's certificate either.
    await expect(handshake(port, 'other.client-example.test', root)).rejects.toThrow();
    await expect(handshake(port, PUBLIC_HOST, root)).rejects.toThrow();

    // Chromium: the client's host is this machine, and exactly this leaf's key is accepted.
    const spki = createHash('sha256').update(served.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
    const resolve = `--host-resolver-rules=MAP ${CLIENT_HOST} 127.0.0.1`;
    const origin = `https://${CLIENT_HOST}:${port}`;
    // Without that flag Chromium refuses Pebble's certificate: the flag is what lets it in, nothing broader.
    const strict = await launchChromium([resolve]);
    try {
      await expect((await strict.newPage()).goto(`${origin}/`)).rejects.toThrow(/ERR_CERT_AUTHORITY_INVALID/);
    } finally {
      await strict.close();
    }
    browser = await launchChromium([resolve, `--ignore-certificate-errors-spki-list=${spki}`]);
    const errors: string[] = [];
    const page = await watched(browser, errors);
    const first = await page.goto(`${origin}/`);
    expect(first?.status()).toBe(200);
    const security = await first!.securityDetails();
    expect(security?.subjectName).toBe(CLIENT_HOST);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).host).toBe(`${CLIENT_HOST}:${port}`);
    const logo = page.getByRole('img', { name: 'Client Example Co logo' });
    await logo.waitFor();
    expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(120);
    expect(await page.locator('.auth-brand-band').innerText()).toBe('Client Example Co');
    const css = (sel: string, prop: string) => page.locator(sel).first().evaluate((el, p) => getComputedStyle(el).getPropertyValue(p), prop);
    expect(await css('.auth-brand-band', 'background-color')).toBe('rgb(26, 35, 126)');
    expect(await css('.auth-card .btn-primary', 'background-color')).toBe('rgb(26, 35, 126)');
    expect(await page.getByText('Cadenza', { exact: true }).count()).toBe(0);
    expect(await page.title()).toBe('Sign in · Client Example Co');
    await atBothWidths(page, 'agency-https', '01-signin-branded', found);

    // A client member signs in on the client's host: the session is that host's alone, and Secure.
    await page.getByLabel('Email').fill(MEMBER.email);
    await page.getByLabel('Password').fill(MEMBER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    expect(new URL(page.url()).origin).toBe(origin);
    const session = (await page.context().cookies()).find((c) => c.name === SESSION_COOKIE);
    expect(session).toMatchObject({ domain: CLIENT_HOST, secure: true, httpOnly: true, sameSite: 'Lax', path: '/' });
    // Host-only: not sent to a sibling or parent name, nor to the installation's own host.
    expect(await page.context().cookies([`https://client-example.test:${port}/`, `https://x.${CLIENT_HOST}:${port}/`, app.url!])).toEqual([]);
    await atBothWidths(page, 'agency-https', '02-signed-in', found);

    // Single sign-on on the client's host: the provider knows the client's redirect URI (port and all).
    const clientCallback = `${origin}/oauth/sso/callback`;
    idp = await startOAuthEmulator({ flavour: 'oidc', clients: [{ id: 'client-sso', secret: 'idp-secret', redirectUris: [clientCallback] }], users: [{ email: MEMBER.email, name: 'Client Rep' }] });
    const sso = await owner.call('PUT', `/api/workspaces/${clientId}/sso`, { issuer: idp.issuer, clientId: 'client-sso', clientSecret: 'idp-secret', allowedDomains: [] });
    expect(sso.statusCode, sso.body).toBe(200);
    expect(sso.json().redirectUris).toEqual([new URL('/oauth/sso/callback', app.url!).toString(), clientCallback]);
    const ssoPage = await watched(browser, errors);
    await ssoPage.goto(`${origin}/signin/sso`);
    await ssoPage.getByRole('heading', { level: 1, name: 'Sign in with SSO' }).waitFor();
    expect(await ssoPage.locator('.auth-brand-band').innerText()).toBe('Client Example Co');
    await ssoPage.getByLabel('Work email').fill(MEMBER.email);
    await ssoPage.getByRole('button', { name: 'Continue with SSO' }).click();
    await ssoPage.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    expect(new URL(ssoPage.url()).origin).toBe(origin);
    const ssoCookies = await ssoPage.context().cookies();
    expect(ssoCookies.find((c) => c.name === SESSION_COOKIE)).toMatchObject({ domain: CLIENT_HOST, secure: true, httpOnly: true, sameSite: 'Lax', path: '/' });
    // The binding cookie was the client host's, and is gone once used.
    expect(ssoCookies.find((c) => c.name === SSO_BINDING_COOKIE)).toBeUndefined();
    expect(await ssoPage.context().cookies([app.url!])).toEqual([]);
    const signedIn = await db.selectFrom('audit_event').select('detail').where('workspace_id', '=', clientId).where('action', '=', 'signin.succeeded').where('target', '=', MEMBER.email).execute();
    expect(signedIn.some((e) => JSON.stringify(e.detail).includes('"sso":true'))).toBe(true);
    await atBothWidths(ssoPage, 'agency-https', '04-sso-signed-in', found);

    // The installation's own host, in the same browser: Cadenza's sign-in page, nobody's branding.
    const plain = await watched(browser, errors);
    await plain.goto(new URL('/signin', app.url!).toString());
    await plain.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await plain.locator('.brand').innerText()).toBe('Cadenza');
    expect(await plain.getByText('Client Example Co').count()).toBe(0);
    expect(await plain.title()).not.toContain('Client Example');
    await atBothWidths(plain, 'agency-https', '03-own-host', found);

    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(errors).toEqual([]);
    expect(web.errors).toEqual([]);
  }, 240_000);
});

/** One run of the domain job, once a run the API nudged has let go of the job's lease. */
async function stepOnce(job: DomainJob): Promise<StepOutcome[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const out = await job.runOnce();
    if (out.length > 0 || Date.now() > deadline) return out;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A page of its own context in `browser`, its uncaught errors and console errors (but the 401 of /api/auth/me before sign-in) kept. */
async function watched(browser: Browser, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 401/.test(m.text())) errors.push(m.text());
  });
  return page;
}

/** The issuer's public key of a peer certificate fetched with its chain (getPeerCertificate(true)). */
function issuerKey(cert: PeerCertificate & { issuerCertificate?: PeerCertificate }): X509Certificate['publicKey'] {
  const issuer = cert.issuerCertificate;
  if (!issuer?.raw) throw new Error('the server sent no issuer certificate');
  return new X509Certificate(issuer.raw).publicKey;
}

/** A TLS handshake with 127.0.0.1:port naming `servername`, trusting only `ca`: the leaf with its chain, and whether it verified. */
function handshake(port: number, servername: string, ca: string): Promise<{ cert: PeerCertificate; authorized: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca, timeout: 5000 }, () => {
      const cert = socket.getPeerCertificate(true);
      const authorized = socket.authorized;
      socket.end();
      resolve({ cert, authorized });
    });
    socket.on('timeout', () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
  });
}
