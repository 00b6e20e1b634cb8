import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/logger.ts';
import { startApp, type RunningApp } from '../../src/ops/app.ts';
import { chromiumSkipReason, launchChromium, screenshot } from './chromium.ts';
import { ensureWebBuild } from './web-build.ts';

/**
 * First run without any account: the setup page's demo option fills the new workspace with
 * emulated mailboxes, leads and sequences (src/api/routes/demo.ts); the banner follows it, the
 * inbox fills with the simulated prospects' replies, and the demo stops on request.
 */
const skip = chromiumSkipReason();

describe.skipIf(skip !== null)(`the demo from first-run setup, in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let app: RunningApp;
  let dir: string;
  let browser: Browser;
  beforeAll(async () => {
    ensureWebBuild();
    dir = mkdtempSync(join(tmpdir(), 'cadenza-web-demo-'));
    app = await startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api', 'scheduler', 'sender', 'sync'], log: createLogger({ level: 'silent' }) });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('sets up with the demo, shows it working, and stops it', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(app.url!);
    await page.getByLabel('Email').fill('newcomer@cadenza.test');
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByLabel('Workspace name').fill('Demo Co');
    await page.getByLabel('Fill it with a demo').check();
    await page.getByRole('button', { name: 'Create workspace' }).click();
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
    expect(errors).toEqual([]);
  }, 240_000);
});
