import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { loadDefinition } from '../../src/sequence/definition-document.ts';
import { auditViewports } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * Issue 19, the email editor, in headless Chromium against the real app: a mailbox's signature
 * written in its rich-text form; in a sequence step, bold text and a link set in the Link dialog
 * (focus kept inside, Escape closes, a javascript: address refused in words, the link at the caret
 * changed with Ctrl+K, another removed), a variable picked
 * from the menu with the keyboard (a <select> once inserted its first option on the first arrow
 * key and took the focus away), the plain-text alternative made from the HTML; the email saved as
 * a template, inserted into another step, renamed and deleted; an A/B variant in the same editor;
 * deleting it asks in the page (an alertdialog, Escape cancels); the step's signature picker (any mailbox's signature previewed, one without a signature marked
 * and written from there, a step set to "No signature" and previewed and saved so); the preview
 * sent from the mailbox with its signature; the content check before launch.
 * Screenshots and axe at 1440×900 and 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'eda@cadenza.test', password: 'a long enough password', workspace: 'Editors' };
const COMPANY = '{{company | default: "your team"}}';

describe.skipIf(skip !== null)(`the email editor in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-email-editor', roles: ['api'] });
  const audit = (page: Page, moment: string, found: string[]) => auditViewports(page, moment, found, screenshot);

  it('writes rich text with a variable from the menu, a signature, templates, a rich variant, and checks the content before launch', async () => {
    const { app } = web;
    const db = app.store.db;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await web.setupOwner(page, OWNER);
    const ws = await db.selectFrom('workspace').select('id').where('name', '=', OWNER.workspace).executeTakeFirstOrThrow();
    const random = seededRandom('web-email-editor');
    await db.insertInto('mailbox').values({ id: newId(Date.now(), random), workspace_id: ws.id, user_id: null, email: 'rae@editors.test', display_name: 'Rae Rep', provider: 'smtp_imap' }).execute();
    // A second mailbox, without a signature: first by address, so the signature picker starts on it.
    await db.insertInto('mailbox').values({ id: newId(Date.now(), random), workspace_id: ws.id, user_id: null, email: 'bo@editors.test', display_name: null, provider: 'smtp_imap' }).execute();
    await db.insertInto('lead').values({ id: newId(Date.now(), random), workspace_id: ws.id, email: 'pat@prospect.test', email_norm: 'pat@prospect.test', first_name: 'Pat', company: 'Prospect Ltd' }).execute();
    const found: string[] = [];

    // The mailbox's signature, in the same editor.
    await page.goto(`${app.url}/mailboxes`);
    await page.getByRole('button', { name: 'Signature of rae@editors.test' }).click();
    const signature = page.getByRole('textbox', { name: 'Formatted text of the signature' });
    await signature.click();
    await page.keyboard.type('Rae Rep');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Editors Inc.');
    await expect.poll(() => page.getByLabel('Signature text').inputValue()).toBe('Rae Rep\n\nEditors Inc.');
    await page.getByRole('button', { name: 'Save signature' }).click();
    await page.getByRole('status').getByText('Signature saved.').waitFor();
    await audit(page, 'email-editor-01-signature', found);
    const stored = await db.selectFrom('mailbox').select(['signature_html', 'signature_text']).where('email', '=', 'rae@editors.test').executeTakeFirstOrThrow();
    expect(stored).toEqual({ signature_html: '<p>Rae Rep</p><p>Editors Inc.</p>', signature_text: 'Rae Rep\n\nEditors Inc.' });

    // Rich text in step 1: a bold line, a link on selected words, then a variable from the menu.
    await page.goto(`${app.url}/sequences/new`);
    await page.getByLabel('Sequence name').fill('Editor test');
    await page.getByLabel('Step 1 subject').fill('A question for {{company}}');
    const body = page.getByRole('textbox', { name: 'Formatted text of Step 1', exact: true });
    await body.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Hello,');
    await page.keyboard.press('Enter');
    const step1 = page.getByRole('toolbar', { name: 'Formatting of Step 1', exact: true });
    await step1.getByRole('button', { name: 'Bold' }).click();
    await page.keyboard.type('Replies in minutes');
    await step1.getByRole('button', { name: 'Bold' }).click();
    await page.keyboard.press('Enter');
    await page.keyboard.type('Read the guide');
    await page.keyboard.press('Shift+Home');
    // The Link dialog, in the page: its address field has the focus, the selected text is named.
    await step1.getByRole('button', { name: 'Link' }).click();
    const linkDialog = page.getByRole('dialog', { name: 'Add a link to Step 1' });
    await linkDialog.waitFor();
    const address = linkDialog.getByRole('textbox', { name: 'Link address' });
    await expect.poll(() => address.evaluate((i) => i === document.activeElement)).toBe(true);
    expect(await linkDialog.textContent()).toContain('Links the text “Read the guide”.');
    // The focus stays in the dialog, both ways round.
    for (const key of ['Tab', 'Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
      await page.keyboard.press(key);
      expect(await linkDialog.evaluate((d) => d.contains(document.activeElement)), `after ${key}`).toBe(true);
    }
    // Escape closes it with nothing set, the focus back in the text and the words still selected.
    await page.keyboard.press('Escape');
    await linkDialog.waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Formatted text of Step 1');
    expect(await body.innerHTML()).not.toContain('<a ');
    await expect.poll(() => page.evaluate(() => getSelection()?.toString())).toBe('Read the guide');
    // A javascript: address is refused in words, and the dialog stays with the focus on the field.
    await step1.getByRole('button', { name: 'Link' }).click();
    await address.fill('javascript:alert(1)');
    await page.keyboard.press('Enter');
    await linkDialog.getByText('"javascript:" links are not allowed in an email: use a web address (https:// or http://) or an email address (mailto:).').waitFor();
    expect(await address.getAttribute('aria-invalid')).toBe('true');
    expect(await address.evaluate((i) => i === document.activeElement)).toBe(true);
    await audit(page, 'email-editor-07-link-dialog', found);
    await address.fill('https://example.com/guide');
    await linkDialog.getByRole('button', { name: 'Add link' }).click();
    await linkDialog.waitFor({ state: 'detached' });
    await expect.poll(() => body.innerHTML()).toMatch(/<a [^>]*href="https:\/\/example\.com\/guide"[^>]*>Read the guide<\/a>/);
    // The link at the caret, opened with Ctrl+K: its address to change (a bare domain is read as https).
    await body.locator('a').click();
    await page.keyboard.press('Control+K');
    const editLink = page.getByRole('dialog', { name: 'Edit the link in Step 1' });
    await editLink.waitFor();
    expect(await editLink.getByLabel('Link address').inputValue()).toBe('https://example.com/guide');
    expect(await editLink.textContent()).toContain('Links the text “Read the guide”.');
    await editLink.getByLabel('Link address').fill('example.com/guide');
    await editLink.getByRole('button', { name: 'Update link' }).click();
    await editLink.waitFor({ state: 'detached' });
    expect(await body.locator('a').count()).toBe(1);
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Best for');
    // The menu with the keyboard: three arrows down from "First name" is "Company"; nothing is
    // inserted before Enter, and the caret is back in the text after it.
    const menuButton = step1.getByRole('button', { name: 'Insert variable into Step 1', exact: true });
    const menu = page.getByRole('menu', { name: 'Insert variable into Step 1', exact: true });
    // Escape closes it with nothing inserted, the focus back on its button.
    await menuButton.click();
    await menu.waitFor();
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    expect(await menuButton.evaluate((b) => b === document.activeElement)).toBe(true);
    expect(await menuButton.getAttribute('aria-expanded')).toBe('false');
    await menuButton.click();
    await menu.waitFor();
    await audit(page, 'email-editor-02-variables-menu', found);
    // The menu opens with its first item focused.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('First name');
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
    expect(await body.innerHTML()).not.toContain('{{');
    await page.keyboard.press('Enter');
    await menu.waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Formatted text of Step 1');
    await page.keyboard.type('!');
    const html = await body.innerHTML();
    expect(html).toContain('<strong>Replies in minutes</strong>');
    expect(html).toMatch(/<a [^>]*href="https:\/\/example\.com\/guide"[^>]*>Read the guide<\/a>/);
    expect(html).toContain(`<p>Best for${COMPANY.replace(/"/g, '"')}!</p>`);
    // The plain-text alternative, made from the HTML as the server makes it.
    const text = `Hello,\n\nReplies in minutes\n\nRead the guide (https://example.com/guide)\n\nBest for${COMPANY}!`;
    await expect.poll(() => page.getByLabel('Step 1 body', { exact: true }).inputValue()).toBe(text);
    await audit(page, 'email-editor-03-rich-text', found);

    // Saved as a template, inserted into step 2, renamed, deleted.
    await page.getByRole('button', { name: 'Templates for Step 1', exact: true }).click();
    const library1 = page.getByRole('region', { name: 'Templates for Step 1', exact: true });
    await library1.getByText('No templates yet').waitFor();
    await library1.getByLabel('Template name for Step 1').fill('Intro');
    await library1.getByRole('button', { name: 'Save as template' }).click();
    await library1.getByRole('status').getByText('Saved as template "Intro".').waitFor();
    const saved = await db.selectFrom('email_template').select(['name', 'subject', 'body_html', 'body_text']).where('workspace_id', '=', ws.id).execute();
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatchObject({ name: 'Intro', subject: 'A question for {{company}}', body_text: text });
    expect(saved[0]!.body_html).toContain('<strong>Replies in minutes</strong>');
    await page.getByRole('button', { name: 'Add step' }).click();
    const body2 = page.getByRole('textbox', { name: 'Formatted text of Step 2', exact: true });
    await body2.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.getByRole('button', { name: 'Templates for Step 2', exact: true }).click();
    const library2 = page.getByRole('region', { name: 'Templates for Step 2', exact: true });
    await library2.getByRole('button', { name: 'Insert template Intro' }).click();
    await expect.poll(() => body2.innerHTML()).toContain('<strong>Replies in minutes</strong>');
    await expect.poll(() => page.getByLabel('Step 2 body', { exact: true }).inputValue()).toBe(text);
    // A link removed from its dialog: the words stay, the link goes.
    await body2.locator('a').click();
    await page.getByRole('toolbar', { name: 'Formatting of Step 2', exact: true }).getByRole('button', { name: 'Link' }).click();
    await page.getByRole('dialog', { name: 'Edit the link in Step 2' }).getByRole('button', { name: 'Remove link' }).click();
    await expect.poll(() => body2.innerHTML()).not.toContain('<a ');
    const text2 = text.replace(' (https://example.com/guide)', '');
    await expect.poll(() => page.getByLabel('Step 2 body', { exact: true }).inputValue()).toBe(text2);
    await library2.getByRole('button', { name: 'Rename template Intro' }).click();
    await library2.getByLabel('New name of Intro').fill('Intro (short)');
    await library2.getByRole('button', { name: 'Save name' }).click();
    await library2.getByRole('button', { name: 'Insert template Intro (short)' }).waitFor();
    await audit(page, 'email-editor-04-templates', found);
    expect((await db.selectFrom('email_template').select('name').where('workspace_id', '=', ws.id).execute()).map((t) => t.name)).toEqual(['Intro (short)']);
    // Deleting asks in the page (ConfirmDialog): named by its question, described by what follows,
    // Cancel focused so that Enter by habit deletes nothing; Escape cancels, the focus back on Delete.
    const deleteIntro = library2.getByRole('button', { name: 'Delete template Intro (short)' });
    await deleteIntro.click();
    const ask = page.getByRole('alertdialog', { name: 'Delete the template "Intro (short)"?' });
    await ask.waitFor();
    expect(await ask.evaluate((d) => document.getElementById(d.getAttribute('aria-describedby') ?? '')?.textContent)).toBe('Emails it was inserted into keep their text.');
    await expect.poll(() => ask.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === document.activeElement)).toBe(true);
    for (const key of ['Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
      await page.keyboard.press(key);
      expect(await ask.evaluate((d) => d.contains(document.activeElement)), `after ${key}`).toBe(true);
    }
    await page.keyboard.press('Escape');
    await ask.waitFor({ state: 'detached' });
    await expect.poll(() => deleteIntro.evaluate((b) => b === document.activeElement)).toBe(true);
    expect(await db.selectFrom('email_template').select('id').where('workspace_id', '=', ws.id).execute()).toHaveLength(1);
    await page.keyboard.press('Enter');
    await ask.waitFor();
    await audit(page, 'email-editor-10-delete-template', found);
    await ask.getByRole('button', { name: 'Delete template', exact: true }).click();
    await library2.getByText('No templates yet').waitFor();
    await library2.getByRole('status').getByText('Deleted the template "Intro (short)".').waitFor();
    expect(await db.selectFrom('email_template').select('id').where('workspace_id', '=', ws.id).execute()).toEqual([]);

    // The signature picker of step 1: every mailbox of the workspace, the ones without a signature
    // marked; the email previewed ending with the picked one's signature, as the sender appends it.
    await page.getByRole('button', { name: "Signature of Step 1: the sending mailbox's", exact: true }).click();
    const picker = page.getByRole('region', { name: 'Signature of Step 1', exact: true });
    const previewWith = picker.getByLabel('Preview Step 1 with the signature of');
    await expect.poll(() => previewWith.locator('option').allTextContents()).toEqual(['bo@editors.test (no signature)', 'Rae Rep <rae@editors.test>']);
    await picker.getByText('bo@editors.test has no signature: its emails end with the body.').waitFor();
    expect(await picker.getByRole('radio', { name: "The sending mailbox's signature" }).isChecked()).toBe(true);
    await previewWith.selectOption({ label: 'Rae Rep <rae@editors.test>' });
    const asSent = picker.getByRole('region', { name: 'Step 1 as sent from rae@editors.test' });
    await expect.poll(() => asSent.locator('.rich-text').textContent()).toContain(`Best for${COMPANY}!Rae RepEditors Inc.`);
    expect(await asSent.locator('.rich-text a').getAttribute('href')).toBe('https://example.com/guide');
    await asSent.getByText('Plain-text part').click();
    expect(await asSent.locator('pre').textContent()).toBe(`${text}\n\nRae Rep\n\nEditors Inc.`);
    await audit(page, 'email-editor-08-signature-picker', found);
    // The mailbox without one gets its signature from here, through the mailbox's own API.
    await previewWith.selectOption({ label: 'bo@editors.test (no signature)' });
    await picker.getByRole('button', { name: 'Write the signature of bo@editors.test' }).click();
    await picker.getByRole('textbox', { name: 'Formatted text of the signature of bo@editors.test' }).click();
    await page.keyboard.type('Bo Baker');
    await picker.getByRole('button', { name: 'Save signature' }).click();
    await picker.getByRole('status').getByText('Signature saved.').waitFor();
    await expect.poll(() => previewWith.locator('option').allTextContents()).toEqual(['bo@editors.test', 'Rae Rep <rae@editors.test>']);
    await expect.poll(() => picker.getByRole('region', { name: 'Step 1 as sent from bo@editors.test' }).locator('pre').textContent()).toBe(`${text}\n\nBo Baker`);
    expect(await db.selectFrom('mailbox').select(['signature_html', 'signature_text']).where('email', '=', 'bo@editors.test').executeTakeFirstOrThrow()).toEqual({ signature_html: '<p>Bo Baker</p>', signature_text: 'Bo Baker' });
    await audit(page, 'email-editor-09-signature-written', found);
    // Step 2 goes out without a signature, whichever mailbox sends it.
    await page.getByRole('button', { name: "Signature of Step 2: the sending mailbox's", exact: true }).click();
    const picker2 = page.getByRole('region', { name: 'Signature of Step 2', exact: true });
    await picker2.getByRole('radio', { name: 'No signature' }).check();
    await page.getByRole('button', { name: 'Signature of Step 2: none', exact: true }).waitFor();
    await picker2.getByText('Sent without a signature, whichever mailbox sends it.').waitFor();
    await picker2.getByLabel('Preview Step 2 with the signature of').selectOption({ label: 'Rae Rep <rae@editors.test>' });
    await expect.poll(() => picker2.getByRole('region', { name: 'Step 2 as sent from rae@editors.test' }).locator('pre').textContent()).toBe(text2);

    // An A/B variant of step 1: the same rich-text editor, with its own variables menu.
    await page.getByRole('button', { name: 'Add a variant (A/B test)' }).first().click();
    const variant = page.getByRole('textbox', { name: 'Formatted text of Step 1 variant B' });
    await variant.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Hi ');
    await page.getByRole('button', { name: 'Insert variable into Step 1 variant B' }).click();
    await page.getByRole('menu', { name: 'Insert variable into Step 1 variant B' }).getByRole('menuitem', { name: 'First name', exact: true }).click();
    await expect.poll(() => page.getByLabel('Step 1 variant B body').inputValue()).toBe('Hi {{first_name | default: "there"}}');
    await audit(page, 'email-editor-05-variant', found);

    await page.getByRole('button', { name: 'Save sequence' }).click();
    await page.getByText('Sequence created.').waitFor();
    await page.waitForURL(/\/sequences\/[0-9a-f-]{36}$/);
    const sequenceId = page.url().split('/').pop()!;
    const def = (await loadDefinition(db, ws.id, sequenceId))!;
    const [a, b] = def.steps[0]!.variants;
    expect(a!.html).toContain('<strong>Replies in minutes</strong>');
    expect(a!.html).toMatch(/<a [^>]*href="https:\/\/example\.com\/guide"[^>]*>Read the guide<\/a>/);
    expect(a!.body).toBe(text);
    expect(b!.html).toMatch(/^<p>Hi(&nbsp;|\s)\{\{first_name \| default: (&quot;|")there(&quot;|")\}\}<\/p>$/);
    expect(b!.body).toBe('Hi {{first_name | default: "there"}}');
    // The signature choice is the step's: step 2 says none, step 1 keeps the default (left out).
    expect(def.steps[0]!.config.signature).toBeUndefined();
    expect(def.steps[1]!.config.signature).toBe(false);

    // The preview, sent from the mailbox: its signature after the body.
    await page.reload();
    const preview = page.getByRole('complementary', { name: 'Live preview' });
    await preview.getByLabel('Sent from').selectOption({ label: 'Rae Rep <rae@editors.test>' });
    await expect.poll(() => preview.locator('.mail-body').textContent(), { timeout: 15_000 }).toBe('Hello,\n\nReplies in minutes\n\nRead the guide (https://example.com/guide)\n\nBest forProspect Ltd!\n\nRae Rep\n\nEditors Inc.');
    // Step 2, saved as "No signature": previewed without one, from the same mailbox.
    const cardOf = (step: string) => page.locator('.flow-card').filter({ has: page.getByRole('heading', { name: step, exact: true }) });
    await cardOf('Step 2').getByRole('button', { name: 'Preview', exact: true }).click();
    await preview.getByText('This step is sent without a signature.').waitFor();
    await expect.poll(() => preview.locator('.mail-body').textContent(), { timeout: 15_000 }).toBe('Hello,\n\nReplies in minutes\n\nRead the guide\n\nBest forProspect Ltd!');
    await cardOf('Step 1').getByRole('button', { name: 'Preview', exact: true }).click();

    // The content check before launch: the saved HTML step has its text part.
    const panel = page.getByRole('region', { name: 'Check content' });
    await panel.getByRole('button', { name: 'Check content' }).click();
    const checks = panel.getByRole('list', { name: "Cadenza's checks" });
    await expect.poll(() => checks.textContent(), { timeout: 15_000 }).toContain('a text part beside the HTML');
    expect(await checks.textContent()).toMatch(/1 link\(s\) in \d+ words/);
    await audit(page, 'email-editor-06-content-check', found);

    // The signature removed: the mailbox sends without one, and its editor is empty.
    await page.goto(`${app.url}/mailboxes`);
    await page.getByRole('button', { name: 'Signature of rae@editors.test' }).click();
    await expect.poll(() => page.getByLabel('Signature text').inputValue()).toBe('Rae Rep\n\nEditors Inc.');
    await page.getByRole('button', { name: 'Remove signature' }).click();
    await page.getByRole('alertdialog', { name: 'Remove the signature of rae@editors.test?' }).getByRole('button', { name: 'Remove signature' }).click();
    await page.getByRole('status').getByText('Signature removed.').waitFor();
    expect(await page.getByLabel('Signature text').inputValue()).toBe('');
    expect(await page.getByRole('textbox', { name: 'Formatted text of the signature' }).textContent()).toBe('');
    await page.getByRole('button', { name: 'Remove signature' }).waitFor({ state: 'detached' });
    expect(await db.selectFrom('mailbox').select(['signature_html', 'signature_text']).where('email', '=', 'rae@editors.test').executeTakeFirstOrThrow()).toEqual({ signature_html: null, signature_text: null });

    expect(found).toEqual([]);
    expect(web.errors).toEqual([]);
  }, 180_000);
});
