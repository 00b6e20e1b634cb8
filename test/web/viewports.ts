import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { blockingViolations } from './axe.ts';
import { screenshot } from './chromium.ts';

/** At a phone's width nothing may scroll sideways: the page is no wider than the viewport (a pixel of rounding allowed). */
export async function expectNoSidewaysScroll(page: Page, moment: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${moment} scrolls sideways at ${width}`).toBeLessThanOrEqual(width + 1);
}

/**
 * A moment of a screen at 1440×900 and at 390×844: axe's serious or critical violations added to
 * `found`, a screenshot at each (`<prefix>-<moment>-<width>`), and at 390 nothing scrolling
 * sideways. The page is left at the size it had (1440×900 when it had none).
 */
export async function atBothWidths(page: Page, prefix: string, moment: string, found: string[]): Promise<void> {
  const was = page.viewportSize() ?? { width: 1440, height: 900 };
  for (const [w, h] of [
    [1440, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width: w, height: h });
    found.push(...(await blockingViolations(page, `${moment} at ${w}×${h}`)));
    await screenshot(page, `${prefix}-${moment}-${w}`);
    if (w === 390) await expectNoSidewaysScroll(page, moment);
  }
  await page.setViewportSize(was);
}
