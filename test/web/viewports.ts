import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { blockingViolations } from './axe.ts';
import { screenshot } from './chromium.ts';

/**
 * A moment of a screen at 1440×900 and at 390×844: axe's serious or critical violations added to
 * `found`, a screenshot at each (`<prefix>-<moment>-<width>`), and at 390 nothing scrolling
 * sideways. The page is left at 1440×900.
 */
export async function atBothWidths(page: Page, prefix: string, moment: string, found: string[]): Promise<void> {
  for (const [w, h] of [
    [1440, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width: w, height: h });
    found.push(...(await blockingViolations(page, `${moment} at ${w}×${h}`)));
    await screenshot(page, `${prefix}-${moment}-${w}`);
    if (w === 390) expect(await page.evaluate(() => document.documentElement.scrollWidth), `${moment} scrolls sideways at 390`).toBeLessThanOrEqual(391);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}
