import { afterAll, describe, expect, it } from 'vitest';
import { startOAuthEmulator, type OAuthEmulator } from '../../src/sim/emulators/oauth/emulator.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * The Mailboxes screen in headless Chromium against the real app and the Google OAuth emulator:
 * "Connect Google" goes through the consent page and back to the screen with the new mailbox,
 * in the signed-in person's workspace; "Remove" opens a dialog that says what will happen
 * (a dry run), and confirming removes the mailbox and revokes its grant. The connect form, the
 * dialog and the list after the removal are audited by axe and photographed at 1440×900 and 390×844
 * (test-results/screens/mailbox-remove-00..03).
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'rhea@cadenza.test', password: 'a long enough password', workspace: 'Acme' };
const REP = 'rhea.rep@gmail.test';

describe.skipIf(skip !== null)(`connecting and removing a mailbox in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let emu: OAuthEmulator | undefined;
  const web = webSuite({
    prefix: 'web-mailbox',
    // The sender role revokes a removed mailbox's grant (sending/credential-tasks/).
    roles: ['api', 'sender'],
    // The emulator redirects to the app, so it starts once the app's URL is known, before the app.
    appOptions: async (publicUrl) => {
      emu = await startOAuthEmulator({ flavour: 'google', clients: [{ id: 'cadenza-web', secret: 'web-secret', redirectUris: [`${publicUrl}/oauth/callback`] }], users: [{ email: REP }] });
      return { oauth: { google: { clientId: 'cadenza-web', clientSecret: 'web-secret', discoveryBase: emu.issuer } } };
    },
  });
  afterAll(() => emu?.close());
  /** Serious or critical axe violations (WCAG A/AA) at the moments audited. */
  const a11y: string[] = [];

  it('connects a Google mailbox through the consent page, then removes it from a dialog that says what happens', async () => {
    const { app, errors } = web;
    const page = await web.newPage();
    await web.setupOwner(page, OWNER);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Mailboxes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Mailboxes' }).waitFor();
    // The form for a mailbox by SMTP and IMAP, beside the OAuth buttons.
    await page.getByRole('button', { name: 'Add mailbox' }).click();
    await page.getByRole('button', { name: 'Close' }).waitFor();
    await atBothWidths(page, 'mailbox-remove', '00-connect-form', a11y);
    await page.getByRole('button', { name: 'Close' }).click();

    // The consent page of the emulator agrees at once and sends the browser back to the screen.
    await page.getByRole('link', { name: 'Connect Google' }).click();
    await page.getByRole('status').filter({ hasText: `Connected ${REP}.` }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/mailboxes');
    expect(new URL(page.url()).search).toBe('');
    const row = page.getByRole('row').filter({ hasText: REP });
    await row.waitFor();
    const owner = await app.store.db
      .selectFrom('mailbox as m')
      .innerJoin('app_user as u', 'u.id', 'm.user_id')
      .innerJoin('account as a', 'a.id', 'u.account_id')
      .select(['a.email', 'm.provider', 'm.workspace_id', 'u.workspace_id as member_of'])
      .where('m.email', '=', REP)
      .executeTakeFirstOrThrow();
    expect(owner).toMatchObject({ email: OWNER.email, provider: 'gmail' });
    expect(owner.workspace_id).toBe(owner.member_of);
    await screenshot(page, 'mailbox-remove-01-connected');

    await row.getByRole('button', { name: `Remove mailbox ${REP}` }).click();
    const dialog = page.getByRole('dialog', { name: `Remove ${REP}?` });
    await dialog.getByText('0 enrollments reassigned').waitFor();
    // Cancel has the focus: Enter pressed by habit removes nothing.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await expect(dialog.getByText('0 enrollments paused with the reason “mailbox removed”').count()).resolves.toBe(1);
    await atBothWidths(page, 'mailbox-remove', '02-dialog', a11y);
    // Cancel changes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog.count()).resolves.toBe(0);
    await expect(row.count()).resolves.toBe(1);

    await row.getByRole('button', { name: `Remove mailbox ${REP}` }).click();
    await dialog.getByText('0 enrollments reassigned').waitFor();
    await dialog.getByRole('button', { name: 'Remove mailbox' }).click();
    await page.getByRole('status').filter({ hasText: `Removed ${REP}. Its access to the account is being revoked.` }).waitFor();
    // The list is read again after the message shows: wait for the row to go, not a count at once.
    await page.getByRole('row').filter({ hasText: REP }).waitFor({ state: 'detached', timeout: 15_000 });
    await atBothWidths(page, 'mailbox-remove', '03-removed', a11y);
    const removed = await app.store.db.selectFrom('mailbox').select(['removed_at']).where('email', '=', REP).executeTakeFirstOrThrow();
    expect(removed.removed_at).not.toBeNull();
    // The grant was revoked at the provider, by the sender role after the removal, once.
    await expect.poll(() => emu!.requests.filter((r) => r.route === 'revoke').map((r) => r.outcome), { timeout: 30_000 }).toEqual([200]);
    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
