import { describe, expect, it } from 'vitest';
import { chromiumSkipReason } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * The built web app under its own Content Security Policy (api/http/security-headers.ts): no
 * inline script, own origin only, never framed. Every main screen is opened in headless Chromium
 * and the page records each `securitypolicyviolation` it raises: none may occur, and a page
 * from another origin cannot frame the app.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'csp@cadenza.test', password: 'a long enough password', workspace: 'Policy Co' };
const SCREENS = ['Inbox', 'Sequences', 'Leads', 'Mailboxes', 'Tasks', 'Analytics', 'Settings'];

describe.skipIf(skip !== null)(`the web app under its CSP in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-csp', roles: ['api'] });

  it('opens every main screen without a CSP violation, and refuses to be framed', async () => {
    const page = await web.newPage();
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { __csp: string[] }).__csp = seen;
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
    });
    const consoleCsp: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) consoleCsp.push(m.text());
    });
    const first = await page.goto(web.app.url!);
    expect(first?.headers()['content-security-policy']).toMatch(/script-src 'self'/);
    await web.setupOwner(page, OWNER);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const name of SCREENS) {
      await nav.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      // A moment for the screen's own loads (lists, charts) to run.
      await page.waitForLoadState('networkidle');
      expect(await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp), name).toEqual([]);
    }
    expect(consoleCsp).toEqual([]);

    // Framed from another origin (a data: page): the browser refuses to render the app in it.
    const framer = await web.newPage();
    await framer.setContent(`<iframe id="f" src="${web.app.url}/inbox"></iframe>`);
    await framer.waitForTimeout(1_000);
    const framed = framer.frames().find((f) => f !== framer.mainFrame());
    const inner = framed ? await framed.evaluate(() => document.body?.innerText ?? '').catch(() => '') : '';
    expect(inner).not.toMatch(/Inbox/);
    await framer.close();
    await page.close();
    // The one error expected: the browser's report of the refused framing.
    expect(web.errors.filter((e) => /frame-ancestors 'none'/.test(e)).length).toBeGreaterThan(0);
    expect(web.errors.filter((e) => !/frame-ancestors 'none'/.test(e))).toEqual([]);
  });
});
