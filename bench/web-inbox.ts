/**
 * Web app: time to interactive of the inbox screen with 100k leads and 50k inbound messages in one
 * workspace, measured in headless Chromium against the real app (API role, built web app) on
 * PostgreSQL (issue 5).
 *
 *   npm run bench -- web-inbox [--leads=100000] [--messages=50000] [--loads=10] [--warmup=1] [--quiet-ms=5000]
 *
 * Each load is cold on the browser side: a new context (empty HTTP cache, nothing in memory) with
 * only the signed-in owner's session cookie, navigating straight to /inbox. Times are the page's
 * own, from its navigation start (performance.timeOrigin), so Playwright's polling adds nothing:
 *   - row_ms: the first message of the list is in the DOM, visible, with its controls enabled;
 *   - dcl_ms, load_ms, fcp_ms: domContentLoadedEventEnd, loadEventEnd, first-contentful-paint;
 *   - tti_ms: Lighthouse-style approximation: the later of the first row and the end of the last
 *     long task (PerformanceObserver 'longtask', > 50 ms on the main thread) seen before a window of
 *     quiet-ms with no long task. The network-quiet half of TTI is left out: the screen makes its
 *     requests once and the row cannot show before they answer.
 * The warm-up loads (not counted) let the server's JIT and PostgreSQL's buffers settle, so the
 * figures are the browser's cold start rather than the process's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { systemClock } from '../src/common/clock.ts';
import { createLogger } from '../src/common/logger.ts';
import { seededRandom } from '../src/common/random.ts';
import { createSession, SESSION_COOKIE } from '../src/api/auth/sessions.ts';
import { startApp, type RunningApp } from '../src/app/app.ts';
import { launchChromium } from '../test/web/chromium.ts';
import { ensureWebBuild } from '../test/web/web-build.ts';
import { seedInboxWorkspace } from './api-lists.ts';
import { round } from './lib/format.ts';
import { percentile } from './lib/stats.ts';
import { benchStore, flag } from './support/backends.ts';

interface Load {
  row_ms: number;
  dcl_ms: number;
  load_ms: number;
  fcp_ms: number;
  tti_ms: number;
  long_tasks: number;
  rows: number;
}

/** Installed before any page script: long tasks are only reported to observers, not buffered for later. */
const LONG_TASK_OBSERVER = `
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, end: e.startTime + e.duration });
  }).observe({ type: 'longtask', buffered: true });
`;

/** In the page: performance.now() once the first message is visible and its controls usable. */
function firstRowReady(): number | false {
  const li = document.querySelector('ul[aria-label="Messages"] > li');
  if (!li || !(li instanceof HTMLElement) || li.offsetParent === null) return false;
  const controls = li.querySelectorAll('button, select, input, a[href]');
  for (const c of controls) if ((c as HTMLButtonElement).disabled) return false;
  return performance.now();
}

/**
 * In the page: waits for quietMs with no long task after the first row (or the last long task) and
 * for the load event, then reads the timings. A string, not a function: tsx's name-keeping helper
 * (__name) would be called inside the page, where it does not exist.
 */
const QUIET_THEN_READ = `(rowMs, quietMs) => new Promise((resolve) => {
  const check = () => {
    const last = window.__longTasks.reduce((m, t) => Math.max(m, t.end), 0);
    const nav = performance.getEntriesByType('navigation')[0];
    if (performance.now() - Math.max(rowMs, last) >= quietMs && nav && nav.loadEventEnd > 0) {
      const fcp = performance.getEntriesByType('paint').find((p) => p.name === 'first-contentful-paint');
      resolve({
        dcl: nav.domContentLoadedEventEnd,
        load: nav.loadEventEnd,
        fcp: fcp ? fcp.startTime : NaN,
        lastLongTaskEnd: last,
        longTasks: window.__longTasks.length,
        rows: document.querySelectorAll('ul[aria-label="Messages"] > li').length,
      });
    } else setTimeout(check, 100);
  };
  check();
})`;

async function oneLoad(browser: Browser, url: string, token: string, quietMs: number): Promise<Load> {
  const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  try {
    await context.addCookies([{ name: SESSION_COOKIE, value: token, url }]);
    await context.addInitScript(LONG_TASK_OBSERVER);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/inbox`, { waitUntil: 'commit' });
    const row = await page.waitForFunction(firstRowReady, undefined, { polling: 'raf', timeout: 60_000 });
    const rowMs = (await row.jsonValue()) as number;
    // Wait for quiet-ms with no long task after the row (or after the last long task), then read it all.
    const tail = (await page.evaluate(`(${QUIET_THEN_READ})(${rowMs}, ${quietMs})`)) as {
      dcl: number; load: number; fcp: number; lastLongTaskEnd: number; longTasks: number; rows: number;
    };
    if (errors.length > 0) throw new Error(`the inbox screen threw: ${errors.join('; ')}`);
    return {
      row_ms: rowMs,
      dcl_ms: tail.dcl,
      load_ms: tail.load,
      fcp_ms: tail.fcp,
      tti_ms: Math.max(rowMs, tail.lastLongTaskEnd),
      long_tasks: tail.longTasks,
      rows: tail.rows,
    };
  } finally {
    await context.close();
  }
}

export default async function (args: string[]): Promise<Record<string, unknown>> {
  const nLeads = Number(flag(args, 'leads', '100000'));
  const nMessages = Number(flag(args, 'messages', '50000'));
  const nLoads = Number(flag(args, 'loads', '10'));
  const nWarmup = Number(flag(args, 'warmup', '1'));
  const quietMs = Number(flag(args, 'quiet-ms', '5000'));
  ensureWebBuild();
  const { store, url: databaseUrl, drop } = await benchStore('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-bench-web-'));
  let app: RunningApp | undefined;
  let browser: Browser | undefined;
  try {
    const t0 = Date.now();
    const { people } = await seedInboxWorkspace(store, { leads: nLeads, messages: nMessages }, seededRandom('web-inbox'));
    const seedMs = Date.now() - t0;
    console.log(`seeded ${nLeads} leads and ${nMessages} messages on postgres in ${seedMs} ms`);
    app = await startApp({ databaseUrl, dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api'], log: createLogger({ level: 'silent' }) });
    const { token } = await createSession(store.db, people[0]!.accountId, systemClock, 3_600_000);
    browser = await launchChromium();
    for (let i = 0; i < nWarmup; i++) await oneLoad(browser, app.url!, token, 0);
    const loads: Load[] = [];
    for (let i = 0; i < nLoads; i++) {
      const l = await oneLoad(browser, app.url!, token, quietMs);
      loads.push(l);
      console.log(
        `load ${String(i + 1).padStart(2)}: first row ${l.row_ms.toFixed(0)} ms  FCP ${l.fcp_ms.toFixed(0)} ms  DCL ${l.dcl_ms.toFixed(0)} ms  load ${l.load_ms.toFixed(0)} ms  TTI ${l.tti_ms.toFixed(0)} ms  (${l.long_tasks} long tasks, ${l.rows} rows)`,
      );
    }
    const out: Record<string, unknown> = { backend: 'postgres', leads: nLeads, messages: nMessages, loads: nLoads, warmup: nWarmup, quiet_ms: quietMs, seed_ms: seedMs, rows: loads[0]?.rows ?? 0 };
    for (const key of ['row_ms', 'fcp_ms', 'dcl_ms', 'load_ms', 'tti_ms'] as const) {
      const ms = loads.map((l) => l[key]);
      const [p50, p90, max] = [percentile(ms, 50), percentile(ms, 90), Math.max(...ms)];
      const name = key.slice(0, -3);
      console.log(`${name.padEnd(5)} p50 ${p50.toFixed(0)} ms  p90 ${p90.toFixed(0)} ms  max ${max.toFixed(0)} ms`);
      Object.assign(out, { [`${name}_p50_ms`]: round(p50), [`${name}_p90_ms`]: round(p90), [`${name}_max_ms`]: round(max) });
    }
    out.long_tasks_max = Math.max(...loads.map((l) => l.long_tasks));
    return out;
  } finally {
    await browser?.close();
    await app?.stop();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
