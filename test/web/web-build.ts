import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const builtIndex = fileURLToPath(new URL('../../dist/web/index.html', import.meta.url));
const webSources = fileURLToPath(new URL('../../web/', import.meta.url));
const serverSources = fileURLToPath(new URL('../../src/', import.meta.url));
/** Held while one process builds: vitest runs test files side by side, and a second build would empty dist/web under the first one's pages. */
const buildLock = fileURLToPath(new URL('../../dist/.web-build.lock', import.meta.url));

/** The newest modification time of a file under dir, in ms (0 for an empty tree). */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules') continue;
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestUnder(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * The newest modification time of the server's files the web app imports (`../../../src/…`: the
 * shared definitions, e.g. src/common/email-html.ts), and of what those import in turn: an edit
 * there changes the app as much as one under web/.
 */
function newestImportedSource(): number {
  const seen = new Set<string>();
  const visit = (file: string) => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return;
    }
    for (const m of text.matchAll(/from '(\.{1,2}\/[^']+\.tsx?)'/g)) {
      const target = resolve(dirname(file), m[1]!);
      if (!target.startsWith(serverSources) || seen.has(target)) continue;
      seen.add(target);
      visit(target);
    }
  };
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.tsx?$/.test(e.name)) visit(p);
    }
  };
  walk(webSources);
  let newest = 0;
  for (const f of seen) newest = Math.max(newest, statSync(f).mtimeMs);
  return newest;
}

/** Whether dist/web is missing or older than a file under web/ or a server file it imports: a test would check a stale app. */
export function webBuildStale(): boolean {
  let built: number;
  try {
    built = statSync(builtIndex).mtimeMs;
  } catch {
    return true;
  }
  return newestUnder(webSources) > built || newestImportedSource() > built;
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** npm install builds the app; a checkout where it was never built, or edited since, gets it built here. */
export function ensureWebBuild(): void {
  if (!webBuildStale()) return;
  mkdirSync(join(buildLock, '..'), { recursive: true });
  // Still held after longer than any build takes: its holder died, build anyway.
  for (const until = Date.now() + 300_000; ; sleep(250)) {
    try {
      mkdirSync(buildLock);
      break;
    } catch {
      if (Date.now() > until) break;
    }
  }
  try {
    // Another process may have built it while this one waited.
    // NODE_ENV is 'test' under vitest, and Vite then builds React's development bundle (StrictMode
    // runs each effect twice: the demo banner started the demo twice); the app is tested as served.
    if (webBuildStale()) execFileSync('npm', ['run', 'build:web'], { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
  } finally {
    rmSync(buildLock, { recursive: true, force: true });
  }
}
