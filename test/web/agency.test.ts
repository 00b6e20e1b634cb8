import { describe, expect, it } from 'vitest';
import { setDomain } from '../../src/tracking/domains/sql/tracking-domain.ts';
import { seedMember } from '../api.ts';
import { chromiumSkipReason } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * Issue 19: the Agency screen in headless Chromium against the real app: create a client, see its
 * usage, edit its branding with the live preview, open it; then a client's viewer signs in and
 * sees the read-only portal alone. Then the client's own host: its sign-in page (before any sign-in)
 * wears the client's name, logo and colours, the installation's own host does not; the agency
 * removes the logo and the page shows the name alone. Screenshots and axe at 1440×900 and 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'agency@cadenza.test', password: 'a long enough password', workspace: 'Agency One' };
const CLIENT_HOST = 'app.northwind.test';

describe.skipIf(skip !== null)(`the agency screen and client portal in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // The client's own host, resolved by Chromium to this machine (no DNS): the app answers it as the client's.
  const web = webSuite({ prefix: 'web-agency', roles: ['api'], chromiumArgs: async () => [`--host-resolver-rules=MAP ${CLIENT_HOST} 127.0.0.1`] });

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
    // The logo uploaded from the form: a real PNG that Chromium draws (a bar of the accent colour).
    const painter = await web.newPage({ viewport: { width: 200, height: 200 } });
    await painter.setContent('<body style="margin:0"><div style="width:120px;height:48px;background:#ff6f00"></div></body>');
    const png = await painter.screenshot({ clip: { x: 0, y: 0, width: 120, height: 48 } });
    await painter.close();
    await form.getByLabel('Logo').setInputFiles({ name: 'northwind.png', mimeType: 'image/png', buffer: png });
    await atBothWidths(page, 'agency', '02-branding', found);
    await form.getByRole('button', { name: 'Save branding' }).click();
    await table.getByRole('cell', { name: 'Northwind Sales', exact: true }).waitFor();
    // Saved with the branding: the preview shows it, and the store holds those bytes.
    await page.getByRole('img', { name: 'Preview' }).locator('img').waitFor();
    const stored = await app.store.db.selectFrom('workspace_branding').innerJoin('workspace', 'workspace.id', 'workspace_branding.workspace_id').select(['logo_type']).where('workspace.name', '=', 'Northwind').executeTakeFirstOrThrow();
    expect(stored.logo_type).toBe('image/png');

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

  it("the sign-in page on the client's own host shows its name, logo and colours; the logo is removed from the Agency screen", async () => {
    const { app } = web;
    const found: string[] = [];
    const client = await app.store.db.selectFrom('workspace').select('id').where('name', '=', 'Northwind').executeTakeFirstOrThrow();
    expect(await setDomain(app.store.db, client.id, CLIENT_HOST, Date.now(), 'app')).toBe('set');
    // The logo is the one the first test uploaded from the Branding form.
    const port = new URL(app.url!).port;
    const branded = `http://${CLIENT_HOST}:${port}/signin`;

    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(branded);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    const logo = page.getByRole('img', { name: 'Northwind Sales logo' });
    await logo.waitFor();
    expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(120);
    const band = page.locator('.auth-brand-band');
    expect(await band.innerText()).toBe('Northwind Sales');
    const css = (sel: string, prop: string) => page.locator(sel).first().evaluate((el, p) => getComputedStyle(el).getPropertyValue(p), prop);
    expect(await css('.auth-brand-band', 'background-color')).toBe('rgb(26, 35, 126)');
    expect(await css('.auth-brand-band', 'color')).toBe('rgb(255, 255, 255)');
    expect(await css('.auth-card .btn-primary', 'background-color')).toBe('rgb(26, 35, 126)');
    expect(await css('.auth-card', 'border-top-color')).toMatch(/^rgb\(\d+, \d+, \d+\)$/);
    expect(await page.getByText('Cadenza', { exact: true }).count()).toBe(0);
    expect(await page.title()).toBe('Sign in · Northwind Sales');
    await atBothWidths(page, 'agency', '04-signin-branded', found);
    // The SSO form on that host wears it too.
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in with SSO' }).waitFor();
    expect(await page.locator('.auth-brand-band').innerText()).toBe('Northwind Sales');

    // The installation's own host: Cadenza's sign-in page, nobody's branding.
    const plain = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await plain.goto(new URL('/signin', app.url!).toString());
    await plain.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await plain.locator('.brand').innerText()).toBe('Cadenza');
    expect(await plain.getByText('Northwind Sales').count()).toBe(0);

    // The agency removes the logo: gone from the preview, and from the client's sign-in page.
    await plain.getByLabel('Email').fill(OWNER.email);
    await plain.getByLabel('Password').fill(OWNER.password);
    await plain.getByRole('button', { name: 'Sign in' }).click();
    await plain.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agency' }).click();
    await plain.getByRole('button', { name: 'Branding of Northwind' }).click();
    const form = plain.getByRole('region', { name: 'Branding of Northwind' });
    const preview = plain.getByRole('img', { name: 'Preview' });
    await preview.locator('img').waitFor();
    await form.getByRole('button', { name: 'Remove logo' }).click();
    await plain.getByRole('alertdialog', { name: 'Remove the logo of Northwind Sales?' }).getByRole('button', { name: 'Remove logo' }).click();
    await form.getByRole('button', { name: 'Remove logo' }).waitFor({ state: 'detached' });
    expect(await preview.locator('img').count()).toBe(0);
    await atBothWidths(plain, 'agency', '05-logo-removed', found);
    const row = await app.store.db.selectFrom('workspace_branding').select(['logo_type', 'display_name']).where('workspace_id', '=', client.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ logo_type: null, display_name: 'Northwind Sales' });
    await page.goto(branded);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page.locator('.auth-brand-band').getByText('Northwind Sales').waitFor();
    expect(await page.locator('.auth-brand-band img').count()).toBe(0);
    await atBothWidths(page, 'agency', '06-signin-branded-no-logo', found);
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
  }, 180_000);
});
