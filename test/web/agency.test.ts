import { describe, expect, it } from 'vitest';
import { seedMember } from '../api.ts';
import { chromiumSkipReason } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * Issue 19: the Agency screen in headless Chromium against the real app: create a client, see its
 * usage, edit its branding with the live preview, open it; then a client's viewer signs in and
 * sees the read-only portal alone. Screenshots and axe at 1440×900 and 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'agency@cadenza.test', password: 'a long enough password', workspace: 'Agency One' };

describe.skipIf(skip !== null)(`the agency screen and client portal in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-agency', roles: ['api'] });

  it('creates a client, brands it with a preview, opens it; its viewer sees the portal only', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await web.setupOwner(page, OWNER);
    const found: string[] = [];
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agency' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agency' }).waitFor();
    await page.getByText('No clients yet').waitFor();
    await page.getByLabel('New client').fill('Northwind');
    await page.getByRole('button', { name: 'Create client' }).click();
    const table = page.getByRole('table', { name: /Clients and their usage/ });
    await table.getByRole('cell', { name: 'Northwind', exact: true }).waitFor();
    expect(await table.locator('tbody tr').first().innerText()).toMatch(/Northwind\s+0\s+0\s+0\s+0\s+0/);
    await atBothWidths(page, 'agency', '01-clients', found);

    await page.getByRole('button', { name: 'Branding of Northwind' }).click();
    const form = page.getByRole('region', { name: 'Branding of Northwind' });
    await form.getByLabel('Display name').fill('Northwind Sales');
    await form.getByLabel('Primary colour').fill('#1a237e');
    expect(await page.getByRole('img', { name: 'Preview' }).innerText()).toContain('Northwind Sales');
    await atBothWidths(page, 'agency', '02-branding', found);
    await form.getByRole('button', { name: 'Save branding' }).click();
    await table.getByRole('cell', { name: 'Northwind Sales', exact: true }).waitFor();

    await page.getByRole('button', { name: 'Open Northwind' }).click();
    await page.getByRole('heading', { level: 1, name: 'Analytics' }).waitFor();

    // A client's person with the viewer role: the portal, nothing else.
    const client = await app.store.db.selectFrom('workspace').select('id').where('name', '=', 'Northwind').executeTakeFirstOrThrow();
    await seedMember(app.store, client.id, 'cfo@northwind.test', 'viewer', 'a long enough password');
    const viewer = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await viewer.goto(new URL('/signin', page.url()).toString());
    await viewer.getByRole('heading', { name: 'Sign in' }).waitFor();
    await viewer.getByLabel('Email').fill('cfo@northwind.test');
    await viewer.getByLabel('Password').fill('a long enough password');
    await viewer.getByRole('button', { name: 'Sign in' }).click();
    await viewer.getByText('Northwind Sales · read-only reports').waitFor();
    const links = await viewer.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();
    expect(links.filter((l) => l !== 'New workspace')).toEqual(['Reports']);
    await atBothWidths(viewer, 'agency', '03-portal', found);
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
  }, 180_000);
});
