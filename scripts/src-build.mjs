// The compiled copy of src/ in dist/ (see scripts/build-src.mjs) and how to tell whether it is
// current. Plain JavaScript, no dependencies: bin/cadenza.js reads it on every start, before it
// knows whether to load the build or to compile src/ on the fly with tsx.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** The build mirrors src/ under dist/ one level deep (src/app/app.ts → dist/app/app.js), so every
 * `new URL('../../package.json', import.meta.url)` in src/ points at the same file from dist/. */
export const buildDir = (root) => join(root, 'dist');
export const manifestFile = (root) => join(buildDir(root), 'src-build.json');

/** What the build was made from: every file of src/ but its tests, with size and mtime. */
export function sourceState(root) {
  const src = join(root, 'src');
  const files = {};
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || isTest(entry.name)) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const st = statSync(path);
    files[relative(src, path).split(sep).join('/')] = `${st.size}:${Math.trunc(st.mtimeMs)}`;
  }
  return files;
}

export const isTest = (name) => /\.test\.ts$/.test(name);

/** True when dist/ holds a build of src/ exactly as it is now (no file added, removed or changed). */
export function buildIsCurrent(root) {
  let recorded;
  try {
    recorded = JSON.parse(readFileSync(manifestFile(root), 'utf8')).sources;
  } catch {
    return false;
  }
  const now = sourceState(root);
  const keys = Object.keys(now);
  if (keys.length !== Object.keys(recorded).length) return false;
  return keys.every((k) => recorded[k] === now[k]);
}
