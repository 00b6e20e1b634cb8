import { afterAll, describe, expect, it } from 'vitest';
import { startTestDnsServer, type TestDnsServer } from '../dns-server.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * The Domains screen in headless Chromium against the real app, its checks asking a DNS server on
 * loopback: a Google Workspace domain without DMARC shows a red DMARC chip and the exact record to
 * publish with a Copy button; once published, Re-check turns it ok and the recovery shows as an
 * alert. A table at 1440 px, cards on a phone (nothing wider than the screen). Screenshots
 * domains-01..03.
 */
const skip = chromiumSkipReason();

describe.skipIf(skip !== null)(`domains screen${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let dns: TestDnsServer | undefined;
  const web = webSuite({
    prefix: 'domains',
    roles: ['api'],
    appOptions: async () => {
      dns = await startTestDnsServer();
      return { domains: { resolver: dns.address, blocklists: { ip: [], domain: ['dbl.bl.test'] } } };
    },
  });
  afterAll(() => dns?.close());
  const OWNER = { email: 'dora@cadenza.test', password: 'a long enough password' };

  it('shows each check with the record to publish, re-checks, and reads on a phone', async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 1000 } });
    await web.setupOwner(page, { name: 'Dora', ...OWNER, workspace: 'Domains Co' });
    const ws = await web.app.store.db.selectFrom('workspace').select('id').where('name', '=', 'Domains Co').executeTakeFirstOrThrow();
    await web.app.store.db.insertInto('mailbox').values({ id: '00000000-0000-4000-8000-00000000d0d0', workspace_id: ws.id, email: 'dora@acme.test', provider: 'gmail' }).execute();
    dns!.setTxt('acme.test', ['v=spf1 include:_spf.google.com ~all']);
    dns!.setTxt('google._domainkey.acme.test', ['v=DKIM1; k=rsa; p=MIIB']);
    dns!.setMx('acme.test', [{ exchange: 'smtp.google.com', priority: 1 }]);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains' }).click();
    await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor();
    const table = page.locator('.domains-table');
    await table.getByText('Not checked yet').waitFor();
    await table.getByRole('button', { name: 'Re-check acme.test' }).click();
    await table.getByText('DMARC missing').first().waitFor();
    expect(await table.getByText('SPF ok').count()).toBe(1);
    const value = table.getByLabel('TXT value');
    expect(await value.inputValue()).toBe('v=DMARC1; p=none; rua=mailto:dmarc@acme.test');
    expect(await table.getByLabel('TXT name').inputValue()).toBe('_dmarc.acme.test');
    expect(await page.locator('.domain-cards').isVisible()).toBe(false);
    await screenshot(page, 'domains-01-broken-1440');
    expect(await blockingViolations(page, 'domains, broken')).toEqual([]);

    dns!.setTxt('_dmarc.acme.test', ['v=DMARC1; p=none; rua=mailto:dmarc@acme.test']);
    await table.getByRole('button', { name: 'Re-check acme.test' }).click();
    await page.getByText('acme.test is healthy again').waitFor();
    expect(await table.getByText('DMARC ok').count()).toBe(1);
    await screenshot(page, 'domains-02-recovered-1440');

    const phone = await web.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.goto(web.app.url!);
    await web.signIn(phone, OWNER);
    await phone.goto(`${web.app.url!}/domains`);
    const cards = phone.locator('.domain-cards');
    await cards.getByRole('button', { name: 'Re-check acme.test' }).waitFor();
    expect(await phone.locator('.domains-table').isVisible()).toBe(false);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390 + 1);
    await screenshot(phone, 'domains-03-phone');
    expect(web.errors).toEqual([]);
  }, 120_000);
});
