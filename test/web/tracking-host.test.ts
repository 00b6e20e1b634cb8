import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts, pebbleInstalled, startPebble, type Pebble } from '../acme/pebble.ts';
import { startTestDnsServer, type TestDnsServer } from '../dns-server.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * The custom tracking host's panel on the Domains screen, in headless Chromium against the real
 * app, its DNS a server on loopback and its certificate authority Pebble (a real HTTP-01
 * validation against the app's port): an owner sets the host and is shown the exact CNAME to
 * publish; a CNAME to the wrong name is named in words; once right, "Check now" verifies it and
 * the certificate is issued, shown with its end and last renewal; the Domains list then checks the
 * host's CNAME and certificate. Pleasant at 1440 px and on a phone (nothing wider than the screen).
 * Removing the host asks in the page first (a cancel keeps it). Screenshots tracking-host-01..05.
 */
const skip = chromiumSkipReason() ?? (pebbleInstalled() || process.env.CI ? null : 'no pebble (apt-get install -y pebble)');
const HOST = 'track.shop.test';
const PUBLIC_HOST = 'cadenza.test';

describe.skipIf(skip !== null)(`custom tracking host panel${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let dns: TestDnsServer | undefined;
  let pebble: Pebble | undefined;
  const web = webSuite({
    prefix: 'tracking-host',
    roles: ['api'],
    appOptions: async (publicUrl) => {
      dns = await startTestDnsServer();
      // Pebble validates HTTP-01 on the app's own port (its challenge route answers there).
      pebble = await startPebble({ dnsServer: dns.address, httpPort: Number(new URL(publicUrl).port) });
      const [httpsPort] = await freePorts(1);
      return {
        domains: { resolver: dns.address, blocklists: { ip: [], domain: [] } },
        trackingDomains: {
          httpsPort: httpsPort!,
          httpsHost: '127.0.0.1',
          publicHost: PUBLIC_HOST,
          acme: { directoryUrl: pebble.directoryUrl, directoryCa: pebble.directoryCa, pollMinMs: 100 },
          dnsServers: [dns.address],
        },
      };
    },
  });
  afterAll(async () => {
    await pebble?.close();
    await dns?.close();
  });
  const OWNER = { email: 'tia@cadenza.test', password: 'a long enough password' };

  it('sets the host, shows the CNAME, verifies it, shows the certificate, and reads on a phone', async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 1000 } });
    await web.setupOwner(page, { name: 'Tia', ...OWNER, workspace: 'Shop Co' });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains' }).click();
    const panel = page.getByRole('region', { name: 'Custom tracking host' });
    await panel.getByLabel('Tracking host').fill(' Track.Shop.TEST ');
    await panel.getByRole('button', { name: 'Set tracking host' }).click();

    // Pending: the exact record to publish, and what the job found (nothing yet) in words.
    await panel.getByText('waiting for the CNAME').waitFor();
    expect(await panel.getByLabel('CNAME name').inputValue()).toBe(HOST);
    expect(await panel.getByLabel('CNAME value').inputValue()).toBe(PUBLIC_HOST);
    await panel.getByText(`${HOST} has no CNAME record yet`).waitFor({ timeout: 15_000 });
    await screenshot(page, 'tracking-host-01-pending-1440');
    expect(await blockingViolations(page, 'tracking host, pending')).toEqual([]);

    // A CNAME to the wrong name: said in words after Check now.
    dns!.setCname(HOST, 'old-tracker.example.test');
    await panel.getByRole('button', { name: 'Check now' }).click();
    await panel.getByText(`${HOST} is a CNAME to old-tracker.example.test, not to ${PUBLIC_HOST}`).waitFor({ timeout: 15_000 });

    // Right: verified, a certificate from Pebble, shown with its end and last renewal.
    dns!.setCname(HOST, PUBLIC_HOST);
    dns!.setA(PUBLIC_HOST, ['127.0.0.1']);
    await panel.getByRole('button', { name: 'Check now' }).click();
    await panel.getByText('active', { exact: true }).waitFor({ timeout: 30_000 });
    await panel.getByText(`verified: ${HOST} points to ${PUBLIC_HOST}`).waitFor();
    await panel.getByText(/^issued, valid until /).waitFor();
    await panel.getByText(`your mail's links use https://${HOST}`).waitFor();
    expect(await panel.getByText('Issued or renewed').count()).toBe(1);
    expect(await panel.getByLabel('CNAME name').count()).toBe(0);
    await screenshot(page, 'tracking-host-02-active-1440');
    expect(await blockingViolations(page, 'tracking host, active')).toEqual([]);

    // The Domains list checks the host like the others: its CNAME and its certificate.
    await page.reload();
    const table = page.locator('.domains-table');
    await table.getByRole('button', { name: `Re-check ${HOST}` }).click();
    await table.getByText('Certificate ok').waitFor();
    expect(await table.getByText('CNAME ok').count()).toBe(1);
    await screenshot(page, 'tracking-host-03-domains-1440');

    const phone = await web.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.goto(web.app.url!);
    await web.signIn(phone, OWNER);
    await phone.goto(`${web.app.url!}/domains`);
    const small = phone.getByRole('region', { name: 'Custom tracking host' });
    await small.getByRole('button', { name: 'Check now' }).waitFor();
    await small.getByRole('button', { name: 'Change host' }).click();
    await small.getByLabel('Tracking host').waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390 + 1);
    await screenshot(phone, 'tracking-host-04-phone');

    // Removing asks in the page first: Cancel keeps the host; "Remove tracking host" removes it.
    const hosts = async () => (await sql<{ host: string }>`select host from tracking_domain where purpose = 'tracking'`.execute(web.app.store.db)).rows.map((r) => r.host);
    await phone.reload();
    await small.getByRole('button', { name: 'Remove', exact: true }).click();
    const ask = phone.getByRole('alertdialog', { name: `Remove ${HOST}?` });
    await ask.getByText("Links go back to the server's own address").waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390 + 1);
    await screenshot(phone, 'tracking-host-05-remove-asked-phone');
    expect(await blockingViolations(phone, 'tracking host, removal asked, phone')).toEqual([]);
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(await hosts()).toEqual([HOST]);
    await page.reload();
    await panel.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('alertdialog', { name: `Remove ${HOST}?` }).getByRole('button', { name: 'Remove tracking host' }).click();
    await panel.getByLabel('Tracking host').waitFor();
    expect(await hosts()).toEqual([]);
    expect(web.errors).toEqual([]);
  }, 180_000);
});
