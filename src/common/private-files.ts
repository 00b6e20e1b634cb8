import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The data folder holds the master key and the embedded database: readable by the account that
 * runs Cadenza and by nobody else. mkdirSync's mode is filtered by the umask and ignored for a
 * folder that already exists, so the mode is set explicitly after.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * Takes group and other permissions off everything under `dir` (files written by a library that
 * uses the process umask, as PGlite does). Walks the folder: called once at start and at close.
 */
export function restrictTree(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if ((st.mode & 0o077) !== 0) chmodSync(path, st.mode & 0o700);
    if (st.isDirectory()) restrictTree(path);
  }
}

/**
 * The umask Cadenza's own process runs under while it writes the data folder: 0077, so that
 * what any library creates there is private from its first byte (not only after restrictTree).
 * Returns the previous mask, for tests that restore it.
 */
export function privateUmask(): number {
  return process.umask(0o077);
}
