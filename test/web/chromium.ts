import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Headless Chromium for the web app's end-to-end tests: Debian's `chromium` package (installed by
 * .ci/run), driven by playwright-core, which downloads no browser of its own.
 */
export const CHROMIUM = process.env.CADENZA_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests must skip, or null when they must run. Never skips in CI: a missing browser fails there. */
export function chromiumSkipReason(): string | null {
  if (existsSync(CHROMIUM) || process.env.CI) return null;
  return `no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CADENZA_CHROMIUM)`;
}

/** `extraArgs`: more flags for one suite (the dialer's fake microphone and its test certificate). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-dev-shm-usage', ...extraArgs],
  });
}

/** Screenshots are test artefacts: test-results/screens/<name>.png (gitignored; CI keeps the folder). */
export const SCREENS_DIR = fileURLToPath(new URL('../../test-results/screens/', import.meta.url));

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENS_DIR, { recursive: true });
  const path = join(SCREENS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
