import { createHash } from 'node:crypto';
import pg from 'pg';
import { loadMigrations } from '../src/store/migrate.ts';

/** Where the PostgreSQL integration tests run; a server with trust auth on loopback. */
export const pgAdminUrl = process.env.CADENZA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function pgUrlFor(database: string): string {
  const u = new URL(pgAdminUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/** The template database name changes whenever a migration changes, so a stale template is never used. */
export function templateName(): string {
  const h = createHash('sha256');
  for (const m of loadMigrations()) h.update(m.name).update(m.sql);
  return `cadenza_tpl_${h.digest('hex').slice(0, 12)}`;
}

export async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: pgAdminUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export function testBackends(): Array<'pglite' | 'postgres'> {
  const env = process.env.CADENZA_TEST_BACKENDS ?? 'pglite,postgres';
  return env.split(',').map((s) => s.trim()).filter((s): s is 'pglite' | 'postgres' => s === 'pglite' || s === 'postgres');
}

/**
 * Runs a statement that needs a database without sessions (CREATE … TEMPLATE, RENAME): a pool that
 * just ended may leave its backends exiting for a moment (SQLSTATE 55006 object_in_use).
 */
export async function retryWhileInUse<T>(fn: () => Promise<T>, attempts = 100): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if ((e as { code?: string }).code !== '55006' || attempt >= attempts) throw e;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
    }
  }
}
