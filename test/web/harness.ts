import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { Role } from '../../src/common/config.ts';
import { createLogger } from '../../src/common/logger.ts';
import { startApp, type AppOptions, type RunningApp } from '../../src/app/app.ts';
import { freePort } from '../mail/dovecot-xoauth2.ts';
import { freshStore, testBackends, type TestStore } from '../stores.ts';
import { launchChromium, screenshot } from './chromium.ts';
import { ensureWebBuild } from './web-build.ts';

export interface WebSuiteOptions {
  /** The temp data dir's name prefix. */
  prefix: string;
  roles: Role[];
  /**
   * Console errors the pages expect and show (a refused call the browser logs all the same).
   * Default: 401, which GET /api/auth/me answers before sign-in.
   */
  expectedConsole?: RegExp;
  /** Run on a fresh PostgreSQL database when the suite's backends include it (else PGlite in the data dir). */
  postgresWhenAvailable?: boolean;
  /** More app options, given the public URL (known before the start: OAuth redirects and invitation links are built on it). */
  appOptions?: (publicUrl: string) => Partial<AppOptions> | Promise<Partial<AppOptions>>;
  /** Milliseconds for the start (the build, the app, Chromium). */
  startTimeout?: number;
  /** More Chromium flags, made once the suite starts (a fake microphone's file, say). */
  chromiumArgs?: () => Promise<string[]>;
}

export interface SetupOwner {
  email: string;
  password: string;
  workspace: string;
  name?: string;
  timeZone?: string;
  /** Tick "Fill it with a demo": the app lands on the inbox with the demo banner. */
  demo?: boolean;
  /** A screenshot of the filled form, before it is sent. */
  screenshot?: string;
}

export interface WebSuite {
  /** Set in beforeAll. */
  readonly app: RunningApp;
  readonly browser: Browser;
  /** Uncaught errors and unexpected console errors of every page from newPage: a screen that throws fails the test that asserts it empty. */
  readonly errors: string[];
  /** A page in a context of its own (1280×860 unless told), watched for errors. Closing the page closes the context. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** First-run setup from the app's root, as the first person does it; resolves on the Inbox. */
  setupOwner(page: Page, owner: SetupOwner): Promise<void>;
  /** Signs in from the sign-in screen the page shows; resolves on the Inbox. */
  signIn(page: Page, who: { email: string; password: string }): Promise<void>;
}

/**
 * The harness of the Chromium tests, called inside their describe(): the web build, the app on a
 * known free port in a temp data dir, headless Chromium, and the hooks that stop them all.
 */
export function webSuite(o: WebSuiteOptions): WebSuite {
  let app: RunningApp | undefined;
  let browser: Browser | undefined;
  let store: TestStore | undefined;
  let dir: string | undefined;
  const errors: string[] = [];
  const expected = o.expectedConsole ?? /status of 401/;

  beforeAll(async () => {
    ensureWebBuild();
    dir = mkdtempSync(join(tmpdir(), `cadenza-${o.prefix}-`));
    if (o.postgresWhenAvailable && testBackends().includes('postgres')) store = await freshStore('postgres');
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const more = (await o.appOptions?.(publicUrl)) ?? {};
    app = await startApp({ databaseUrl: store?.url, dataDir: dir, port, host: '127.0.0.1', publicUrl, roles: o.roles, log: createLogger({ level: (process.env.CADENZA_TEST_LOG_LEVEL as 'info' | undefined) ?? 'silent' }), ...more });
    browser = await launchChromium((await o.chromiumArgs?.()) ?? []);
  }, o.startTimeout ?? 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await store?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const started = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`webSuite: ${what} is not started (use it in a test or a later beforeAll)`);
    return v;
  };

  return {
    get app() {
      return started(app, 'the app');
    },
    get browser() {
      return started(browser, 'Chromium');
    },
    errors,
    async newPage(options = {}) {
      const page = await started(browser, 'Chromium').newPage({ viewport: { width: 1280, height: 860 }, ...options });
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error' && !expected.test(m.text())) errors.push(m.location().url ? `${m.text()} (${m.location().url})` : m.text());
      });
      return page;
    },
    async setupOwner(page, owner) {
      await page.goto(started(app, 'the app').url!);
      await page.getByRole('heading', { name: 'Set up Cadenza' }).waitFor();
      // What `cadenza start` printed on its console (src/cli/commands/start.ts).
      await page.getByLabel('Setup token').fill(started(app, 'the app').setupToken?.token ?? '');
      if (owner.name !== undefined) await page.getByLabel('Your name').fill(owner.name);
      await page.getByLabel('Email').fill(owner.email);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByLabel('Workspace name').fill(owner.workspace);
      if (owner.timeZone !== undefined) await page.getByLabel('Time zone').fill(owner.timeZone);
      if (owner.demo) await page.getByLabel('Fill it with a demo').check();
      if (owner.screenshot) await screenshot(page, owner.screenshot);
      await page.getByRole('button', { name: 'Create workspace' }).click();
      await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor({ timeout: 30_000 });
    },
    async signIn(page, who) {
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill(who.email);
      await page.getByLabel('Password').fill(who.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    },
  };
}
