import { createReadStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import type { Browser } from 'playwright-core';
import { build } from 'vite';
import { launchChromium } from '../web/chromium.ts';
import { webSuite } from '../web/harness.ts';
import { BED, WORK_DIR, makeAudio } from './telbed.ts';

/**
 * The softphone's page for tests and the call-setup bench: test/telephony/page/ (the web app's own
 * softphone module and CallPanel) bundled by Vite into test-results/telephony/page/, served on
 * 127.0.0.1 (a secure context, so getUserMedia works), and headless Chromium whose microphone is
 * the sox-made tone (browser.wav).
 */
const PAGE_SRC = fileURLToPath(new URL('./page/', import.meta.url));
const PAGE_OUT = join(WORK_DIR, 'page');

export interface SoftphoneBrowser {
  browser: Browser;
  url: string;
  close(): Promise<void>;
}

function serve(dir: string): Promise<Server> {
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
  const server = createServer((req, res) => {
    const path = normalize(join(dir, (req.url ?? '/').split('?')[0]!.replace(/\/$/, '/index.html')));
    if (!path.startsWith(dir) || !existsSync(path) || !statSync(path).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(path)] ?? 'application/octet-stream' });
    createReadStream(path).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Chromium's flags for a rep: the sox-made tone as its microphone, and the bed's test certificate accepted. */
export async function softphoneChromiumArgs(): Promise<string[]> {
  const { browserWav } = await makeAudio();
  return [
    '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream', `--use-file-for-fake-audio-capture=${browserWav}`,
    '--autoplay-policy=no-user-gesture-required',
    // The bed's WSS certificate is self-signed (telbed.sh); only this browser accepts it.
    '--ignore-certificate-errors',
  ];
}

export async function softphoneBrowser(): Promise<SoftphoneBrowser> {
  mkdirSync(PAGE_OUT, { recursive: true });
  await build({ configFile: false, root: PAGE_SRC, plugins: [react()], logLevel: 'warn', build: { outDir: PAGE_OUT, emptyOutDir: true, minify: false } });
  const server = await serve(PAGE_OUT);
  const browser = await launchChromium(await softphoneChromiumArgs());
  return {
    browser,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    async close() {
      await browser.close();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The real web app (API role) with its dialer pointed at the bed, and a Chromium whose microphone is the sox tone: the Tasks screen's tests. */
export function dialerWebSuite(prefix: string) {
  return webSuite({
    prefix,
    roles: ['api'],
    chromiumArgs: softphoneChromiumArgs,
    appOptions: () => ({ dialer: { wsUrl: BED.wssUrl, domain: BED.domain, sipSecret: BED.sipSecret, turnUrls: [BED.turnUrl], turnSecret: BED.turnSecret, ttlSeconds: 3600 } }),
  });
}
