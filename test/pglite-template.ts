import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { loadMigrations, migrate } from '../src/store/migrate.ts';
import { openStore } from '../src/store/store.ts';
import { embeddedDbDir } from '../src/common/config.ts';
import { ensurePrivateDir } from '../src/common/private-files.ts';

/**
 * The migrated PGlite template: the PGlite counterpart of the PostgreSQL template database
 * (global-setup.ts). A new in-memory cluster costs PGlite its whole set-up (several seconds of
 * WebAssembly on a busy machine) and then every migration; a store loaded from a dump of a migrated
 * data folder opens in a tenth of that. The dump is built once per migration set and kept in
 * node_modules/.cache, named by a hash of the migrations and PGlite's version, so a changed
 * migration or a PGlite upgrade builds a new one and an old one is never used.
 */

const root = join(import.meta.dirname, '..');
const cacheDir = join(root, 'node_modules', '.cache', 'cadenza-test');

function templateFile(): string {
  const h = createHash('sha256');
  const pglite = JSON.parse(readFileSync(join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string };
  h.update(pglite.version);
  for (const m of loadMigrations()) h.update(m.name).update(m.sql);
  return join(cacheDir, `pglite-${h.digest('hex').slice(0, 16)}.tar`);
}

/** Builds the dump unless it is there. Written under another name and renamed when complete, so a run killed half-way never leaves a partial dump behind. */
export async function ensurePgliteTemplate(): Promise<string> {
  const file = templateFile();
  if (existsSync(file)) return file;
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-pglite-tpl-'));
  try {
    const store = await openStore({ dataDir: dir });
    try {
      await migrate(store);
    } finally {
      await store.close();
    }
    const pglite = new PGlite(dir, { extensions: { pg_trgm } });
    await pglite.waitReady;
    const dump = await pglite.dumpDataDir('none');
    await pglite.close();
    mkdirSync(cacheDir, { recursive: true });
    const part = `${file}.${process.pid}.part`;
    writeFileSync(part, Buffer.from(await dump.arrayBuffer()));
    renameSync(part, file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return file;
}

let loaded: Promise<Blob> | undefined;

/** The migrated dump, read once per test process (built first if this run's global setup did not). */
export function migratedPgliteDump(): Promise<Blob> {
  loaded ??= ensurePgliteTemplate().then((file) => new Blob([readFileSync(file)]));
  return loaded;
}

/**
 * Puts a migrated database into a new data folder's embedded store (`<dataDir>/db`), so that a
 * server or command a test starts there opens it as it would an installation's, without a new
 * cluster and the migrations first. The folder must not hold a database yet.
 */
export async function seedDataDir(dataDir: string): Promise<void> {
  const dump = await migratedPgliteDump();
  // Private, as the server makes it (private-files.ts); PGlite makes only the last folder.
  ensurePrivateDir(dataDir);
  const pglite = new PGlite(embeddedDbDir(dataDir), { extensions: { pg_trgm }, loadDataDir: dump });
  await pglite.waitReady;
  await pglite.close();
}
