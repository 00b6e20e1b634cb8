import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { A11Y_OWNER, seedScreens } from './a11y-seed.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';
import { expectNoSidewaysScroll } from './viewports.ts';

/**
 * Accessibility, measured: every screen of the web app, filled with data, audited by axe-core
 * (WCAG 2.0/2.1/2.2 A and AA rules) at 1280×800 and 1440×900 (first-run setup at 390×844 too: the
 * other screens are seen on a phone by getting-started.test.ts); a serious or critical violation fails.
 * Each screen is also walked with Tab: every control is reached, each shows a focus ring, none
 * holds the focus. Then the inbox is driven from the keyboard alone (j/k, Enter, Escape, r, c, l, ?), and
 * screens are reached with g then a letter.
 * axe runs from node_modules (test/web/axe.ts): nothing is downloaded.
 */
const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 1440, height: 900 },
] as const;

/** The focused element: a stable tag, whether a focus indicator is drawn, and whether it is on screen. */
const FOCUSED = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  if (!el.dataset.tabStop) el.dataset.tabStop = String(window.__tabStops = (window.__tabStops || 0) + 1);
  const cs = getComputedStyle(el);
  const ring = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2) || cs.boxShadow !== 'none';
  const r = el.getBoundingClientRect();
  const name = (el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].textContent) || el.textContent || el.id || '').trim().replace(/\\s+/g, ' ').slice(0, 50);
  // A time or date field is one element with a Tab stop per part (hours, minutes, AM/PM).
  const parts = ['time', 'date', 'datetime-local', 'month', 'week'].includes(el.type);
  return { stop: el.dataset.tabStop, ring, parts, onScreen: r.width > 0 && r.height > 0 && r.right > 0 && r.bottom > 0, what: el.tagName.toLowerCase() + ' "' + name + '"' };
})()`;

/** Controls a keyboard must reach: what the browser puts in the tab order, visible. */
const TABBABLE_COUNT = `Array.from(document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')).filter((el) =>
  !el.disabled && el.tabIndex >= 0 && el.type !== 'hidden' && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden').length`;

/**
 * Tabs from the top of the page to past its last control: every stop must show a ring and be on
 * screen, focus must move on each press (no trap), and every tabbable control must be reached.
 */
async function tabWalk(page: Page, screen: string): Promise<number> {
  // Tab starts after the focused element (an autofocused field, say): start from the top instead.
  await page.evaluate(`(() => {
    const start = document.createElement('div');
    start.tabIndex = -1;
    start.id = 'tab-walk-start';
    document.body.prepend(start);
    start.focus();
  })()`);
  const expected = await page.evaluate<number>(TABBABLE_COUNT);
  const seen: string[] = [];
  const problems: string[] = [];
  let same = 0;
  for (let i = 0; i < expected * 2 + 3; i++) {
    await page.keyboard.press('Tab');
    const f = await page.evaluate<{ stop: string; ring: boolean; parts: boolean; onScreen: boolean; what: string } | null>(FOCUSED);
    if (!f) break; // past the last control: focus left the document, as it should
    if (seen.at(-1) === f.stop) {
      if (f.parts && ++same < 4) continue;
      problems.push(`focus stuck on ${f.what}`);
      break;
    }
    same = 0;
    if (seen.includes(f.stop)) break; // wrapped around
    seen.push(f.stop);
    if (!f.ring) problems.push(`no focus ring on ${f.what}`);
    if (!f.onScreen) problems.push(`focused but off screen: ${f.what}`);
  }
  await page.evaluate(`document.getElementById('tab-walk-start')?.remove()`);
  expect(problems, `${screen}: keyboard problems`).toEqual([]);
  expect(seen.length, `${screen}: controls reached with Tab`).toBeGreaterThanOrEqual(expected);
  return seen.length;
}

/** A list's "Download … as CSV" clicked: the file's lines. */
async function csvOf(page: Page, what: string, file: string): Promise<string[]> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${what} as CSV` }).click()]);
  expect(download.suggestedFilename()).toBe(file);
  return readFileSync((await download.path())!, 'utf8').trimEnd().split('\r\n');
}

const skip = chromiumSkipReason();

describe.skipIf(skip !== null)(`accessibility of every screen, in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'a11y', roles: ['api'], postgresWhenAvailable: true, startTimeout: 60_000 });
  const { errors: pageErrors } = web;
  let seeded: Awaited<ReturnType<typeof seedScreens>> | undefined;
  /** Seeded once, after the first-run setup screen was seen (it shows only while nobody has an account). */
  const ensureSeeded = async () => (seeded ??= await seedScreens(web.app.store));
  const signIn = (page: Page) => web.signIn(page, A11Y_OWNER);
  const newPage = (viewport: { width: number; height: number }) => web.newPage({ viewport });

  /** axe, a screenshot, and at the first viewport a walk with Tab. */
  async function audit(page: Page, screen: string, found: string[], walk: boolean): Promise<void> {
    const { width } = page.viewportSize()!;
    found.push(...(await blockingViolations(page, `${screen} @${width}`)));
    await screenshot(page, `a11y-${width}-${screen}`);
    if (walk) await tabWalk(page, screen);
  }

  it('has no serious or critical axe violation on any screen, at 1280×800 and 1440×900 (first-run setup at 390×844 too), and every control is reachable with a visible focus', async () => {
    const found: string[] = [];
    // First-run setup shows only while nobody has an account; on a phone too, nothing wider than the screen.
    for (const [n, vp] of [...VIEWPORTS, { width: 390, height: 844 }].entries()) {
      const page = await newPage(vp);
      await page.goto(web.app.url!);
      await page.getByRole('heading', { name: 'Set up Cadenza' }).waitFor();
      await audit(page, '01-setup', found, n === 0);
      if (vp.width === 390) await expectNoSidewaysScroll(page, 'first-run setup');
      await page.close();
    }
    const { replyFrom } = await ensureSeeded();

    for (const [n, vp] of VIEWPORTS.entries()) {
      const walk = n === 0;
      const page = await newPage(vp);
      const nav = page.getByRole('navigation', { name: 'Main' });
      const go = async (label: string) => {
        await nav.getByRole('link', { name: label, exact: true }).click();
        await page.getByRole('heading', { level: 1, name: label }).waitFor();
      };
      await page.goto(web.app.url!);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await audit(page, '02-sign-in', found, walk);
      await signIn(page);
      await page.getByRole('list', { name: 'Messages' }).getByRole('listitem').nth(4).waitFor();
      await audit(page, '03-inbox', found, walk);
      await page.getByRole('tab', { name: /Needs review/ }).click();
      await expect.poll(() => page.getByRole('list', { name: 'Messages' }).getByRole('listitem').count()).toBe(2);
      await audit(page, '04-inbox-needs-review', found, false);
      await page.getByRole('tab', { name: 'Inbox', exact: true }).click();

      await go('Mailboxes');
      await page.getByRole('meter').first().waitFor();
      await audit(page, '05-mailboxes', found, walk);
      if (n === 0) expect(await csvOf(page, 'the mailboxes', 'mailboxes.csv')).toEqual(
        expect.arrayContaining(['Mailbox,Name,Provider,Health,Why,Verified,Sent today,Today\'s cap,Daily cap,Ramp day,Ramp days', expect.stringMatching(/^ada\.second@example\.test,,gmail,paused,bounce rate 6% over the last 50 sends,/)]),
      );
      await page.getByRole('button', { name: 'Add mailbox' }).click();
      await audit(page, '06-mailbox-connect', found, walk);

      await go('Domains');
      await page.locator('.domains-table').getByText('Sending domain').first().waitFor();
      await audit(page, '06b-domains', found, walk);
      if (n === 0) expect(await csvOf(page, 'the domains', 'domains.csv')).toEqual(expect.arrayContaining(['Domain,Purpose,Health,Checks,Checked at', expect.stringMatching(/^example\.test,Sending domain,/)]));

      await go('Sequences');
      await page.getByRole('link', { name: 'Outbound Q3' }).waitFor();
      await audit(page, '07-sequences', found, walk);
      if (n === 0) expect(await csvOf(page, 'the sequences', 'sequences.csv')).toEqual(expect.arrayContaining(['Sequence,Key,Status,Steps,Active,Replied', expect.stringMatching(/^Outbound Q3,outbound-q3,\w+,\d+,\d+,\d+$/)]));
      await page.getByRole('link', { name: 'Outbound Q3' }).click();
      await page.getByLabel('Step 1 variant B subject').waitFor();
      await page.getByLabel('Step 1 body').focus();
      const preview = page.getByRole('complementary', { name: 'Live preview' });
      await preview.getByText('Does Prospect').waitFor();
      // A variant's body in focus: the preview renders that variant, against the same real lead.
      await page.getByLabel('Step 1 variant B body').focus();
      await preview.getByText('Step 1, variant B').waitFor();
      await preview.getByText('A short one about Prospect').waitFor();
      await audit(page, '08-sequence-editor', found, walk);

      await go('Leads');
      await page.getByRole('link', { name: replyFrom }).waitFor();
      // Filters: the one lead whose enrollment ended in a reply, then everyone again.
      await page.getByLabel('Enrollment state').selectOption('replied');
      await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
      await page.getByRole('link', { name: replyFrom }).waitFor();
      await page.getByLabel('Enrollment state').selectOption('');
      await page.getByRole('link', { name: 'person11@prospect3.test' }).waitFor();
      await page.getByRole('button', { name: 'Import CSV' }).click();
      await audit(page, '09-leads', found, walk);
      await page.getByRole('link', { name: replyFrom }).click();
      await page.getByRole('heading', { level: 2, name: 'Timeline' }).waitFor();
      await page.getByText('likely a person').waitFor();
      await audit(page, '10-lead-page', found, walk);

      await go('Tasks');
      await page.getByRole('heading', { name: 'Coming up (1)' }).waitFor();
      await page.getByRole('cell', { name: /overdue/ }).waitFor();
      await audit(page, '11-tasks', found, walk);
      if (n === 0) {
        // The open tasks as CSV: the header and a line for each open task of the store.
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export open tasks (CSV)' }).click()]);
        expect(download.suggestedFilename()).toBe('tasks-open.csv');
        const csv = readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
        expect(csv[0]).toBe('due_at,kind,state,title,lead_email,lead_name,company,phone,sequence,attempts,notes');
        const open = await web.app.store.db.selectFrom('task').select('id').where('state', '=', 'open').execute();
        expect(csv).toHaveLength(open.length + 1);
        for (const line of csv.slice(1)) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z,(call|manual),open,/);
      }

      await go('Analytics');
      await page.getByRole('heading', { name: 'Per-step funnel' }).waitFor();
      await page.getByRole('cell', { name: 'ada.second@example.test' }).waitFor();
      // Both charts' tables open, so that axe reads them too.
      for (const summary of await page.getByText('The days with activity, as a table').all()) await summary.click();
      await audit(page, '12-analytics', found, walk);

      await go('Settings');
      await page.getByRole('combobox', { name: 'Inbox of Sam Member' }).waitFor();
      // The settings, the members and the invitations load side by side: the name may come last.
      await expect.poll(() => page.getByLabel('Workspace name').inputValue()).toBe('Acme Outbound');
      await audit(page, '13-settings', found, walk);
      if (n === 0) {
        // Every list of Settings as CSV: the members, and an invitation, an API key and a webhook made for it.
        expect(await csvOf(page, 'the members', 'members.csv')).toEqual(expect.arrayContaining(['Name,Email,Role,Inbox,Phone number,Can sign in', 'Sam Member,sam@cadenza.test,member,own,,yes']));
        const made = await page.evaluate(async () => {
          const me = (await (await fetch('/api/auth/me')).json()) as { csrfToken: string; workspaces: { id: string }[] };
          const post = (path: string, body: unknown) =>
            fetch(`/api/workspaces/${me.workspaces[0]!.id}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrfToken }, body: JSON.stringify(body) }).then((r) => r.status);
          return [await post('invitations', { email: 'new.rep@example.test', role: 'member' }), await post('api-keys', { name: 'warehouse' }), await post('webhooks', { url: 'https://hooks.example.com/cadenza', events: ['reply'] })];
        });
        expect(made).toEqual([201, 201, 201]);
        await page.reload();
        await page.getByRole('table', { name: 'API keys' }).getByText('warehouse').waitFor();
        expect(await csvOf(page, 'the pending invitations', 'invitations.csv')).toEqual(expect.arrayContaining(['Email,Role,Invited by,Status,Expires at', expect.stringMatching(/^new\.rep@example\.test,member,/)]));
        expect(await csvOf(page, 'the API keys', 'api-keys.csv')).toEqual(expect.arrayContaining(['Name,Prefix,Role,Access,Created by,Created at,Last used at,Revoked at', expect.stringMatching(/^warehouse,cdz_[\w-]+,admin,read_write,/)]));
        expect(await csvOf(page, 'the webhooks', 'webhooks.csv')).toEqual(expect.arrayContaining(['Endpoint,Description,Events,Added at', expect.stringMatching(/^https:\/\/hooks\.example\.com\/cadenza,,reply,/)]));
      }
      await page.close();
    }
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('works the inbox from the keyboard: j/k select, Enter opens the conversation, r replies, c confirms, l labels, ? lists the keys', async () => {
    const { replyFrom } = await ensureSeeded();
    const found: string[] = [];
    const page = await newPage(VIEWPORTS[0]);
    await page.goto(web.app.url!);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signIn(page);
    const items = page.locator('ul[aria-label="Messages"] > li');
    await items.nth(4).waitFor();
    const ids = await items.evaluateAll((els) => els.map((e) => e.getAttribute('data-message-id')));
    const focused = () => page.evaluate<string | null>(`(() => { const li = document.activeElement && document.activeElement.closest('li[data-message-id]'); return li ? li.dataset.messageId : null; })()`);
    const focusedTag = () => page.evaluate<string>(`document.activeElement.tagName.toLowerCase() + (document.activeElement.dataset.action ? '.' + document.activeElement.dataset.action : '')`);

    for (const [key, at] of [['j', 0], ['j', 1], ['j', 2], ['k', 1]] as const) {
      await page.keyboard.press(key);
      expect(await focused(), `after ${key}`).toBe(ids[at]);
    }
    expect(await items.nth(1).getAttribute('aria-current')).toBe('true');
    expect(await focusedTag()).toBe('li');

    // Enter opens the conversation beside the list: what the sequence sent, then the answer in full;
    // focus goes to its heading, and Escape brings it back to the message in the list.
    await page.keyboard.press('Enter');
    const thread = page.getByRole('region', { name: 'Conversation' }).getByRole('region', { name: 'Thread' });
    await thread.getByText('Sent', { exact: true }).waitFor();
    await thread.getByText('Who gave you my address?').first().waitFor();
    await expect.poll(focusedTag).toBe('h2');
    await audit(page, '14-inbox-thread', found, false);
    await page.keyboard.press('Escape');
    await expect.poll(focused).toBe(ids[1]);

    // r: the reply box of the selected message, focused, so the next keys are the reply.
    const current = () => page.locator('ul[aria-label="Messages"] > li[aria-current="true"]').getAttribute('data-message-id');
    await page.keyboard.press('r');
    await expect.poll(focusedTag).toBe('textarea');
    expect(await current()).toBe(ids[1]);
    await page.keyboard.type('just a draft; j and k are letters here');
    expect(await current()).toBe(ids[1]);
    await page.keyboard.press('Tab'); // to "Send reply": shortcuts work again off the field
    await page.keyboard.press('k');
    expect(await focused()).toBe(ids[0]);

    // c: the first message waits for review as a human reply; c confirms that label.
    const reviewTab = page.getByRole('tab', { name: /Needs review/ });
    await expect.poll(() => reviewTab.textContent()).toContain('(2)');
    await page.keyboard.press('c');
    await expect.poll(() => reviewTab.textContent()).toContain('(1)');
    const reviewed = await web.app.store.db.selectFrom('message').select(['reviewed_at', 'rung']).where('id', '=', ids[0]!).executeTakeFirstOrThrow();
    expect(reviewed.rung).toBe('person');
    expect(reviewed.reviewed_at).not.toBeNull();

    // ?: the list of shortcuts in a modal dialog; Escape gives focus back to the message.
    await items.nth(0).focus();
    await page.keyboard.press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.waitFor();
    // The inbox's keys, then those that work on every screen.
    const anywhere = ['g then i', 'g then l', 'g then s', 'g then m', 'g then t', 'g then a', '?'];
    expect(await dialog.getByRole('term').allTextContents()).toEqual(['j', 'k', 'Enter', 'e', 'r', 'Ctrl+Enter', 'l', 'u', 's', 'a', 'c', '/', ...anywhere]);
    await audit(page, '15-inbox-shortcuts', found, false);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focused()).toBe(ids[0]);

    // l: the label picker of the selected message, its field focused; Escape gives focus back to the message.
    await page.keyboard.press('l');
    const picker = page.getByRole('dialog', { name: 'Label' });
    await picker.waitFor();
    expect(await focusedTag()).toBe('input');
    await audit(page, '16-inbox-label-picker', found, false);
    await page.keyboard.press('Escape');
    await picker.waitFor({ state: 'hidden' });
    await expect.poll(focused).toBe(ids[0]);
    expect(replyFrom).toBeTruthy();

    // g then a letter: another screen, focus on its content. The inbox's own l does not fire on the way.
    const h1 = () => page.getByRole('heading', { level: 1 }).textContent();
    const main = page.locator('main#main');
    await items.nth(0).focus();
    await page.keyboard.press('g');
    await page.keyboard.press('l');
    await expect.poll(h1).toBe('Leads');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    // Typing in a field, g and i are letters.
    const search = page.getByLabel('Search leads');
    await search.focus();
    await page.keyboard.type('gi');
    expect(await search.inputValue()).toBe('gi');
    expect(await h1()).toBe('Leads');
    // ? off the inbox lists only the keys that work anywhere.
    await main.focus();
    await page.keyboard.press('?');
    await dialog.waitFor();
    expect(await dialog.getByRole('term').allTextContents()).toEqual(anywhere);
    await audit(page, '17-shortcuts-anywhere', found, false);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    // A letter after g that names no screen uses the chord up; the next letter alone is nothing.
    await page.keyboard.press('g');
    await page.keyboard.press('x');
    await page.keyboard.press('s');
    expect(await h1()).toBe('Leads');
    for (const [key, title] of [['s', 'Sequences'], ['m', 'Mailboxes'], ['t', 'Tasks'], ['a', 'Analytics'], ['i', 'Inbox']] as const) {
      await page.keyboard.press('g');
      await page.keyboard.press(key);
      await expect.poll(h1).toBe(title);
    }
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);
});
