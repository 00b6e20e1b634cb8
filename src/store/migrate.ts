import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { cadenzaError } from '../common/errors.ts';
import type { Store } from './store.ts';

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const MIGRATION_LOCK = 0x0cade0a;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Numbered SQL files `NNNN_name.sql`, the same for PGlite and PostgreSQL. */
export function loadMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 4)), name: f.replace(/\.sql$/, ''), sql: readFileSync(join(dir, f), 'utf8') }));
}

export interface MigrateResult {
  applied: string[];
  current: number;
}

/**
 * Applies the pending migrations, each in its own transaction together with its bookkeeping row,
 * under an advisory lock so that two processes starting at once do not both apply one.
 */
export async function migrate(store: Store, migrations = loadMigrations()): Promise<MigrateResult> {
  return store.withExclusiveLock(MIGRATION_LOCK, async () => {
    // A role process under least privilege (docs/security.md) may create nothing: with every
    // migration applied, no DDL is sent at all, and a pending one fails saying who must apply it.
    const table = await sql<{ t: string | null }>`select to_regclass('schema_migration')::text as t`.execute(store.db);
    if (!table.rows[0]?.t) {
      await store.runScript(
        `create table if not exists schema_migration (version integer primary key, name text not null, applied_at timestamptz not null default now())`,
      );
    }
    const done = await sql<{ version: number }>`select version from schema_migration`.execute(store.db);
    const have = new Set(done.rows.map((r) => r.version));
    const applied: string[] = [];
    for (const m of migrations) {
      if (have.has(m.version)) continue;
      try {
        await store.runScript(`${m.sql}\n;insert into schema_migration (version, name) values (${m.version}, '${m.name}');`);
      } catch (e) {
        const denied = (e as { code?: string }).code === '42501';
        const hint = denied ? ' (this database role may not change the schema: run `cadenza migrate` as the database owner, then `cadenza db grants`)' : '';
        throw cadenzaError('MIGRATION_FAILED', `migration ${m.name} failed: ${(e as Error).message}${hint}`, { migration: m.name });
      }
      applied.push(m.name);
    }
    const current = Math.max(0, ...migrations.map((m) => m.version).filter((v) => have.has(v) || applied.some((a) => a.startsWith(String(v).padStart(4, '0')))));
    return { applied, current };
  });
}

/** The highest migration the database has applied (a newer build's included), 0 for none. */
export async function schemaVersion(store: Store): Promise<number> {
  const v = await store.db.selectFrom('schema_migration').select((eb) => eb.fn.max('version').as('v')).executeTakeFirst();
  return Number(v?.v ?? 0);
}
