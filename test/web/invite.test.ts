import { describe, expect, it } from 'vitest';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * A second workspace and a teammate, in headless Chromium against the real app with no mailer:
 * the owner creates a workspace from the shell, switches between the two, invites by email and
 * copies the link the app shows; the invitee opens it in a browser of their own, sets a name and
 * password and lands in the workspace; the spent link then says so. The invite page (to accept, and
 * spent) is audited by axe and photographed at 1440×900 and 390×844. Screenshots in test-results/screens/.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'olivia@cadenza.test', password: 'a long enough password', workspace: 'Acme' };
const INVITEE = { email: 'ivan@cadenza.test', name: 'Ivan Invitee', password: 'another long password' };

describe.skipIf(skip !== null)(`workspaces and invitations in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // Refusals the page expects and shows (the spent link's 409, /me before sign-in) are logged by the browser all the same.
  const web = webSuite({ prefix: 'web-invite', roles: ['api'], expectedConsole: /status of (401|409)/ });
  /** Serious or critical axe violations (WCAG A/AA) at the moments audited. */
  const a11y: string[] = [];

  it('creates a workspace, switches, invites, and the invitee joins from the copied link', async () => {
    const { app, errors } = web;
    const page = await web.newPage({ permissions: ['clipboard-read', 'clipboard-write'] });
    await web.setupOwner(page, OWNER);

    // A second workspace from the shell; the app switches to it and opens its settings.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'New workspace' }).click();
    await page.getByRole('heading', { level: 1, name: 'New workspace' }).waitFor();
    await page.getByLabel('Workspace name').fill('Acme EMEA');
    await page.getByLabel('Time zone').fill('Europe/Paris');
    await screenshot(page, 'invite-01-new-workspace');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const switcher = nav.getByLabel('Workspace');
    await expect.poll(() => switcher.inputValue()).not.toBe('');
    expect(await switcher.locator('option:checked').textContent()).toBe('Acme EMEA');
    await expect.poll(() => page.getByLabel('Workspace name').inputValue()).toBe('Acme EMEA');
    // Switching shows the other workspace's settings, and the choice survives a reload.
    await switcher.selectOption({ label: 'Acme' });
    await expect.poll(() => page.getByLabel('Workspace name').inputValue()).toBe('Acme');
    await page.reload();
    await expect.poll(() => page.getByLabel('Workspace name').inputValue()).toBe('Acme');
    await switcher.selectOption({ label: 'Acme EMEA' });
    await expect.poll(() => page.getByLabel('Workspace name').inputValue()).toBe('Acme EMEA');

    // No mailer here: the app shows the link to copy.
    await page.getByLabel('Email to invite').fill(INVITEE.email);
    await page.getByLabel('Invited role').selectOption('admin');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const linkBox = page.getByLabel(`Invitation link for ${INVITEE.email}`);
    await linkBox.waitFor();
    await page.getByText('This server sends no email').waitFor();
    const link = await linkBox.inputValue();
    expect(link).toMatch(new RegExp(`^${app.url}/invite/[A-Za-z0-9_-]{43}$`));
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await page.getByRole('row').filter({ hasText: INVITEE.email }).getByRole('button', { name: `Withdraw the invitation to ${INVITEE.email}` }).waitFor();
    await screenshot(page, 'invite-02-link-to-copy');
    // A second invitation, withdrawn: asked first, then gone from the list (the first one's link stays good).
    await page.getByLabel('Email to invite').fill('spare@acme.test');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const spare = page.getByRole('row').filter({ hasText: 'spare@acme.test' });
    await spare.getByRole('button', { name: 'Withdraw the invitation to spare@acme.test' }).click();
    await page.getByRole('alertdialog', { name: 'Withdraw the invitation to spare@acme.test?' }).getByRole('button', { name: 'Withdraw invitation' }).click();
    await spare.waitFor({ state: 'detached' });

    // The invitee, in a browser of their own, with no account.
    const ipage = await web.newPage();
    await ipage.goto(link);
    await ipage.getByRole('heading', { name: 'Join Acme EMEA' }).waitFor();
    await ipage.getByText(`invited ${INVITEE.email} to join Acme EMEA as an admin`).waitFor();
    expect(await ipage.getByLabel('Email').inputValue()).toBe(INVITEE.email);
    await ipage.getByLabel('Your name').fill(INVITEE.name);
    await ipage.getByLabel('Password').fill('short');
    await atBothWidths(ipage, 'invite', '03-accept-page', a11y);
    await ipage.getByLabel('Password').fill(INVITEE.password);
    await ipage.getByRole('button', { name: 'Create account and join Acme EMEA' }).click();
    await ipage.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    await ipage.getByRole('navigation', { name: 'Main' }).getByText('Acme EMEA').waitFor();
    await ipage.getByRole('navigation', { name: 'Main' }).getByText(INVITEE.email).waitFor();
    await screenshot(ipage, 'invite-04-joined');

    // The link is spent: opening it again says so.
    await ipage.goto(link);
    await ipage.getByRole('alert').filter({ hasText: 'accepted already' }).waitFor();
    await atBothWidths(ipage, 'invite', '05-link-spent', a11y);

    // The owner sees the new admin among the members, and the invitation gone from the pending list.
    await page.reload();
    await page.getByRole('cell', { name: new RegExp(INVITEE.name) }).waitFor();
    await page.getByText('No pending invitations.').waitFor();
    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(errors).toEqual([]);
    await ipage.close();
    await page.close();
  }, 180_000);
});
