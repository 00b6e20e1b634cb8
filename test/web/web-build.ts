import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const webRoot = fileURLToPath(new URL('../../dist/web/', import.meta.url));

/** npm install builds the app; a checkout where it was never built gets it built here. */
export function ensureWebBuild(): void {
  if (!existsSync(`${webRoot}index.html`)) execFileSync('npm', ['run', 'build:web'], { stdio: 'inherit' });
}
