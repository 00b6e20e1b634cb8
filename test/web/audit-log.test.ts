import { describe, expect, it } from 'vitest';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * The audit log and the API key list in Settings, in headless Chromium against the real app: a
 * failed sign-in from another browser and a settings change show up with who and from where; the
 * filter narrows the list; the CSV link carries the filter; an API key shows who made it. An admin
 * makes a member-role key on the screen (shown once, working as a member's) and revokes it after
 * the in-page confirmation. Screenshots and axe at 1440×900 and 390×844 (`audit-03-filtered-*`,
 * `api-keys-*`).
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'audrey@cadenza.test', password: 'a long enough password', workspace: 'Audited' };

describe.skipIf(skip !== null)(`the audit log in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // The wrong password's 401 and the refused phone number's 400 are logged by the browser all the same.
  const web = webSuite({ prefix: 'web-audit', roles: ['api'], expectedConsole: /status of (401|400)/ });

  it('shows sign-ins and changes with who did them, filters them, and lists API keys with their creator', async () => {
    const { errors } = web;
    const page = await web.newPage();
    await web.setupOwner(page, OWNER);

    // Someone else tries the owner's address with a wrong password.
    const other = await web.newPage();
    await other.goto(web.app.url!);
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();
    await other.getByLabel('Email').fill(OWNER.email);
    await other.getByLabel('Password').fill('not the password at all');
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.getByRole('alert').filter({ hasText: 'wrong email or password' }).waitFor();
    await other.close();

    // The owner changes a setting and makes an API key (as a script would, with the session).
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByLabel('Holidays country').fill('FR');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const made = await page.evaluate(async () => {
      const me = (await (await fetch('/api/auth/me')).json()) as { csrfToken: string; workspaces: { id: string }[] };
      const r = await fetch(`/api/workspaces/${me.workspaces[0]!.id}/api-keys`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrfToken }, body: JSON.stringify({ name: 'crm sync' }) });
      return r.status;
    });
    expect(made).toBe(201);

    // The owner gives themselves a trunk number: a national one is refused with the reason, then the international one is kept as E.164.
    const phone = page.getByLabel(`Phone number of ${OWNER.email}`, { exact: true });
    await phone.fill('020 7946 0123');
    await page.getByRole('button', { name: `Save the phone number of ${OWNER.email}` }).click();
    await page.getByRole('alert').filter({ hasText: 'international form' }).waitFor();
    await phone.fill('+44 20 7946 0123');
    await page.getByRole('button', { name: `Save the phone number of ${OWNER.email}` }).click();
    await expect.poll(() => phone.inputValue()).toBe('+442079460123');
    await page.reload();

    const keys = page.getByRole('table', { name: 'API keys' });
    await keys.getByRole('row').filter({ hasText: 'crm sync' }).filter({ hasText: OWNER.email }).waitFor();
    expect(await keys.getByRole('row').filter({ hasText: 'crm sync' }).textContent()).toContain('never');

    const log = page.getByRole('table', { name: 'Audit events' });
    await log.getByRole('row').filter({ hasText: 'Sign-in failed' }).waitFor();
    await log.getByRole('row').filter({ hasText: 'Settings changed' }).filter({ hasText: OWNER.email }).waitFor();
    await log.getByRole('row').filter({ hasText: 'API key created' }).waitFor();
    await log.getByRole('row').filter({ hasText: 'Phone number changed' }).waitFor();
    await page.locator('#settings-audit').scrollIntoViewIfNeeded();
    await screenshot(page, 'audit-01-log');

    // Only sign-ins.
    await page.getByLabel('What').selectOption({ label: 'Sign-ins' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(async () => (await log.getByRole('row').allTextContents()).slice(1).every((t) => /Sign-in failed|Signed in/.test(t))).toBe(true);
    await log.getByRole('row').filter({ hasText: 'Sign-in failed' }).waitFor();
    expect(await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')).toMatch(/audit-log\.csv\?action=signin$/);
    await screenshot(page, 'audit-02-filtered');
    const a11y = await blockingViolations(page, 'settings with the audit log');
    await page.locator('#settings-audit').scrollIntoViewIfNeeded();
    await atBothWidths(page, 'audit', '03-filtered', a11y);
    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('makes a read-only API key with a role from the screen, shows it once, and revokes it after asking', async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(web.app.url!);
    await web.signIn(page, OWNER);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings', exact: true }).click();
    const section = page.getByRole('region', { name: 'API keys' });
    const found: string[] = [];
    await section.getByLabel('Key name').fill('reporting script');
    await section.getByLabel('Key role').selectOption('member');
    await section.getByLabel('Key access').selectOption('read_only');
    await section.getByRole('button', { name: 'Create key' }).click();
    const shown = section.getByRole('textbox', { name: 'New API key reporting script' });
    await shown.waitFor();
    const key = await shown.inputValue();
    expect(key).toMatch(/^cdz_/);
    await section.locator('#settings-api-keys').scrollIntoViewIfNeeded();
    await atBothWidths(page, 'api-keys', '01-made', found);

    // A member's key: a member's route answers, an admin's refuses; a revoked key is refused everywhere.
    const ws = await web.app.store.db.selectFrom('workspace').select('id').where('name', '=', OWNER.workspace).executeTakeFirstOrThrow();
    const withKey = async (path: string) => (await fetch(`${web.app.url}/api/workspaces/${ws.id}/${path}`, { headers: { authorization: `Bearer ${key}` } })).status;
    expect(await withKey('leads')).toBe(200);
    expect(await withKey('api-keys')).toBe(403);
    // Read only: a change a member may make is refused to this key.
    const write = await fetch(`${web.app.url}/api/workspaces/${ws.id}/leads`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ email: 'new@lead.test' }) });
    expect(write.status).toBe(403);
    expect(((await write.json()) as { error: { message: string } }).error.message).toMatch(/read-only/);
    await section.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: 'reporting script' });
    await row.filter({ hasText: OWNER.email }).waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('member read only');
    expect(await row.textContent()).not.toContain('never');
    // Once shown, never again: the page holds its prefix only.
    expect(await page.content()).not.toContain(key);

    // Revoke asks first: Cancel keeps the key working.
    const revoke = row.getByRole('button', { name: 'Revoke the API key reporting script' });
    await revoke.click();
    const ask = page.getByRole('alertdialog', { name: 'Revoke the API key reporting script?' });
    await ask.getByText('Scripts and integrations that use it are refused from now on.', { exact: false }).waitFor();
    await atBothWidths(page, 'api-keys', '02-revoke-asked', found);
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(await withKey('leads')).toBe(200);
    await revoke.click();
    await ask.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();
    expect(await withKey('leads')).toBe(401);
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
    await page.close();
  }, 120_000);
});
