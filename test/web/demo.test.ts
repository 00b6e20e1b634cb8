import { describe, expect, it } from 'vitest';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * First run without any account: the setup page's demo option fills the new workspace with
 * emulated mailboxes, leads and sequences (src/api/routes/demo.ts); the banner follows it, the
 * inbox fills with the simulated prospects' replies, and the demo stops on request.
 */
const skip = chromiumSkipReason();

describe.skipIf(skip !== null)(`the demo from first-run setup, in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-demo', roles: ['api', 'scheduler', 'sender', 'sync'] });

  it('sets up with the demo, shows it working, and stops it', async () => {
    const page = await web.newPage();
    await web.setupOwner(page, { email: 'newcomer@cadenza.test', password: 'a long enough password', workspace: 'Demo Co', demo: true });
    const banner = page.getByRole('status').filter({ hasText: 'Demo running' });
    await banner.waitFor({ timeout: 30_000 });
    // The simulated prospects answer within a simulated day or two: a few real seconds.
    await expect.poll(async () => Number(/(\d+) replied/.exec((await banner.textContent()) ?? '')?.[1] ?? 0), { timeout: 90_000, interval: 1000 }).toBeGreaterThan(0);
    await page.getByRole('listitem').filter({ hasText: 'human reply' }).first().waitFor({ timeout: 30_000 });
    await screenshot(page, 'demo-01-inbox');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sequences' }).click();
    await page.getByRole('row').nth(2).waitFor();
    await screenshot(page, 'demo-02-sequences');
    await banner.getByRole('button', { name: 'Stop demo' }).click();
    await banner.waitFor({ state: 'detached', timeout: 30_000 });
    expect(web.errors).toEqual([]);
  }, 240_000);
});
