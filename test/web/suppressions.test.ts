import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chromiumSkipReason } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * Issue 19: the Suppression list screen in headless Chromium against the real app: add an address,
 * search, import a CSV (a row that is not an address listed), export it as CSV, and lift one behind
 * a dialog that asks why (focus on Cancel; the reason lands in the audit log with the lift).
 * Screenshots and axe at 1440×900 and 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'supp@cadenza.test', password: 'a long enough password', workspace: 'Suppressors' };

describe.skipIf(skip !== null)(`the suppression list in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-suppressions', roles: ['api'] });

  it('adds, searches, imports, exports and lifts with a reason', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    await web.setupOwner(page, OWNER);
    const found: string[] = [];
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Suppressions' }).click();
    await page.getByRole('heading', { level: 1, name: 'Suppression list' }).waitFor();
    await page.getByText('No address is suppressed yet.').waitFor();

    // One by hand; a second time it says so.
    const add = page.getByRole('form', { name: 'Add an address' });
    await add.getByLabel('Email address').fill('Ann@Acme.test');
    await add.getByLabel('Why').selectOption('unsubscribe');
    await add.getByRole('button', { name: 'Suppress' }).click();
    await page.getByRole('status').getByText('ann@acme.test suppressed.').waitFor();
    const table = page.getByRole('table', { name: 'Suppressed addresses' });
    await table.getByRole('cell', { name: 'ann@acme.test', exact: true }).waitFor();
    await add.getByLabel('Email address').fill('ann@acme.test');
    await add.getByRole('button', { name: 'Suppress' }).click();
    await page.getByText('ann@acme.test was suppressed already.').waitFor();

    // A CSV: two addresses and a row that is not one.
    const imp = page.getByRole('form', { name: 'Import a CSV' });
    await imp.getByLabel('CSV file').setInputFiles({ name: 'old.csv', mimeType: 'text/csv', buffer: Buffer.from('name,email\nBo,bo@beta.test\nCy,not an address\nDi,di@delta.test\n') });
    await imp.getByRole('button', { name: 'Import old.csv' }).click();
    await page.getByText('old.csv: 2 addresses read, 2 newly suppressed, 0 running enrollments stopped.').waitFor();
    expect(await imp.getByRole('list', { name: 'Rows that were not addresses' }).innerText()).toMatch(/^Line 3: “not an address”/);
    await table.getByRole('cell', { name: 'di@delta.test', exact: true }).waitFor();
    await atBothWidths(page, 'suppressions', '01-list', found);

    // Search narrows the list.
    await page.getByRole('searchbox', { name: 'Search addresses' }).fill('beta');
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Suppressed addresses"] tbody tr').length === 1);
    expect(await table.locator('tbody tr').first().innerText()).toContain('bo@beta.test');
    await page.getByRole('searchbox', { name: 'Search addresses' }).fill('');
    await table.getByRole('cell', { name: 'ann@acme.test', exact: true }).waitFor();

    // The export is the server's CSV.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe('email,reason,source,created_at');
    expect(csv.slice(1).map((l) => l.split(',').slice(0, 2).join(','))).toEqual(['ann@acme.test,unsubscribe', 'bo@beta.test,manual', 'di@delta.test,manual']);

    // Lift: a dialog, focus on Cancel; cancelling lifts nothing.
    await page.getByRole('button', { name: 'Lift the suppression of ann@acme.test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Lift the suppression of ann@acme.test?' });
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    expect(await dialog.getByRole('button', { name: 'Lift suppression' }).isDisabled()).toBe(true);
    await atBothWidths(page, 'suppressions', '02-lift-dialog', found);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await table.getByRole('cell', { name: 'ann@acme.test', exact: true }).waitFor();

    await page.getByRole('button', { name: 'Lift the suppression of ann@acme.test' }).click();
    await dialog.getByLabel('Reason for lifting').fill('Asked to hear from us again by phone');
    await dialog.getByRole('button', { name: 'Lift suppression' }).click();
    await page.getByText('ann@acme.test may be emailed again. The lift and its reason are in the audit log.').waitFor();
    await table.getByRole('cell', { name: 'ann@acme.test', exact: true }).waitFor({ state: 'detached' });
    const log = await app.store.db.selectFrom('audit_event').select(['target', 'detail', 'actor_label']).where('action', '=', 'suppression.lifted').execute();
    expect(log).toEqual([{ target: 'ann@acme.test', detail: { suppressedFor: 'unsubscribe', reason: 'Asked to hear from us again by phone' }, actor_label: OWNER.email }]);
    await atBothWidths(page, 'suppressions', '03-lifted', found);
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
  }, 120_000);
});
