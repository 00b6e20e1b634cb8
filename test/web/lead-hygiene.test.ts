import { describe, expect, it } from 'vitest';
import { startTestDnsServer, type TestDnsServer } from '../dns-server.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * List hygiene on the leads screen, in headless Chromium against the real app whose checker asks
 * the local DNS server: an import shows its counts by verdict, the "Address check" filter narrows
 * the list, and a risky lead is approved from it; at 1440 px and on a phone. Screenshots in
 * test-results/screens/.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'hygiene@cadenza.test', password: 'a long enough password', workspace: 'Clean lists' };

describe.skipIf(skip !== null)(`leads filter by address check in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let dns: TestDnsServer | undefined;
  const web = webSuite({
    prefix: 'web-hygiene',
    roles: ['api'],
    appOptions: async () => {
      dns = await startTestDnsServer();
      dns.setMx('acme.test', [{ exchange: 'mx.acme.test', priority: 10 }]);
      dns.setMx('closed.test', [{ exchange: '.', priority: 0 }]);
      return { hygiene: { dnsServer: dns.address } };
    },
  });

  it('imports, filters to the leads to review, approves one; readable at 1440 px and 390 px', async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await web.setupOwner(page, OWNER);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads' }).click();
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const csv = 'email,first_name\nana@acme.test,Ana\ninfo@acme.test,Info desk\nbob@closed.test,Bob\n';
    await page.getByLabel('CSV file').setInputFiles({ name: 'few.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import few.csv' }).click();
    const counts = page.getByLabel('Address check', { exact: true }).filter({ hasText: '1 valid' });
    await counts.waitFor({ timeout: 30_000 });
    expect(await counts.textContent()).toMatch(/1 valid.*1 to review.*1 invalid/);

    await page.getByRole('button', { name: 'Close import' }).click();
    await page.getByRole('combobox', { name: 'Address check' }).selectOption('review');
    const rows = page.getByRole('row');
    await expect.poll(() => rows.count()).toBe(2); // the header and info@
    await page.getByRole('cell', { name: 'info@acme.test', exact: true }).waitFor();
    await screenshot(page, 'hygiene-01-review-1440');
    const a11y = await blockingViolations(page, 'the leads to review');

    await page.getByRole('button', { name: 'Approve info@acme.test' }).click();
    await page.getByText('No lead matches.').waitFor();
    await page.getByRole('combobox', { name: 'Address check' }).selectOption('invalid');
    await page.getByRole('cell', { name: 'bob@closed.test', exact: true }).waitFor();
    await page.getByText('invalid', { exact: true }).waitFor();

    // The same signed-in page on a phone's width.
    const phone = page;
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.getByRole('combobox', { name: 'Address check' }).selectOption('risky');
    await phone.getByText('approved', { exact: true }).waitFor();
    await screenshot(phone, 'hygiene-02-risky-390');
    // Nothing wider than the screen but the table's own scroll.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    a11y.push(...(await blockingViolations(phone, 'the risky leads, on a phone')));
    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
    await dns?.close();
  });
});
