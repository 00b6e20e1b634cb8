import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * axe-core in a page, shared by the Chromium tests: the WCAG 2.0/2.1/2.2 A and AA rules, and a
 * serious or critical violation counts as a failure. axe runs from node_modules: nothing is
 * downloaded. It is evaluated through the DevTools protocol rather than added as a <script>:
 * the app's CSP refuses inline script (api/http/security-headers.ts), and should.
 */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary: string }[];
}

/** Runs axe in the page; strings, not functions, so that no transpiler helper is shipped into the page. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(`${AXE}\n;window.axe = axe;`);
  // iframes: false: the app's only frames hold an inbox message's HTML, sandboxed so that no script
  // runs there (axe's included: it would wait for an answer that never comes); that markup is the sender's.
  return page.evaluate(`axe.run(document, {
    iframes: false,
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] },
    resultTypes: ['violations'],
  }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) })))`);
}

/** The serious and critical violations on the page, one line each, named after `moment`: [] when it passes. */
export async function blockingViolations(page: Page, moment: string): Promise<string[]> {
  const v = await axeViolations(page);
  return v
    .filter((x) => x.impact === 'serious' || x.impact === 'critical')
    .map((x) => `${moment}: ${x.id} (${x.impact}) ${x.help}: ${x.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** The viewports every screen is audited and photographed at: desktop and phone. */
export const AUDIT_VIEWPORTS = [
  { width: 1440, height: 900, name: 'desktop' },
  { width: 390, height: 844, name: 'phone' },
] as const;

/** axe and a screenshot of the page at each of AUDIT_VIEWPORTS (violations added to `found`), then back to 1440×900. */
export async function auditViewports(page: Page, moment: string, found: string[], shoot: (page: Page, name: string) => Promise<unknown>): Promise<void> {
  for (const v of AUDIT_VIEWPORTS) {
    await page.setViewportSize({ width: v.width, height: v.height });
    found.push(...(await blockingViolations(page, `${moment} at ${v.width}×${v.height}`)));
    await shoot(page, `${moment}-${v.name}`);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}
