#!/usr/bin/env node
// The `cadenza` command. It runs in this very process, never in a child: a signal sent to this
// pid (kill, a supervisor, a container runtime, Ctrl-C) reaches the code that drains the server,
// and there is no wrapper left behind to die of it while the server runs on as an orphan.
//
// The compiled build in dist/ (npm run build:src, run at install) is used when it matches src/
// exactly; otherwise src/ runs through tsx's loader in this process, slower to start but current.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildIsCurrent } from '../scripts/src-build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (process.env.CADENZA_DEBUG) process.setSourceMapsEnabled(true);
if (process.env.CADENZA_FROM_SOURCE !== '1' && buildIsCurrent(root)) {
  await import(pathToFileURL(join(root, 'dist', 'cli', 'main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
}
