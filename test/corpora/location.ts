import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the shared labelled corpora are: `../shared/corpora` next to the repository (as the
 * project's machines and CI lay it out), or CADENZA_CORPORA. The tests that measure against them
 * skip, saying why, where they are absent (a clone elsewhere); nothing in them is copied here.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const CORPORA = process.env.CADENZA_CORPORA ? path.resolve(process.env.CADENZA_CORPORA) : path.resolve(repoRoot, '..', 'shared', 'corpora');

/** True when every named file exists in the corpora folder. */
export function corporaHave(...names: string[]): boolean {
  return names.every((name) => existsSync(path.join(CORPORA, name)));
}
