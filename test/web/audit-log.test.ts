import { describe, expect, it } from 'vitest';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * The audit log and the API key list in Settings, in headless Chromium against the real app: a
 * failed sign-in from another browser and a settings change show up with who and from where; the
 * filter narrows the list; the CSV link carries the filter; an API key shows who made it.
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
    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});
