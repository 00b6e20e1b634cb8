import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { newId } from '../../src/common/ids.ts';
import type { Random } from '../../src/common/random.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openStore, type Store } from '../../src/store/store.ts';

/** A benchmark store: PGlite in a temporary folder on disk, or a temporary PostgreSQL database. */
export interface BenchStore {
  store: Store;
  /** The temporary PostgreSQL database's URL, for a second process or an app started on it; absent for PGlite. */
  url?: string;
  drop(): Promise<void>;
}

const adminUrl = process.env.CADENZA_BENCH_PG_URL ?? process.env.CADENZA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * `preparedStatements`: PostgreSQL's named statements per connection (store.ts; 0 = every
 * statement unnamed, parsed and planned each time, as before issue 13), for a bench's `--prepared`.
 * `poolSize`: PostgreSQL connections (default 4, the benches' own; `cadenza start` opens 10).
 */
export async function benchStore(backend: 'pglite' | 'postgres', opts: { preparedStatements?: number; poolSize?: number } = {}): Promise<BenchStore> {
  if (backend === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-bench-'));
    const store = await openStore({ dataDir: dir });
    await migrate(store);
    return {
      store,
      async drop() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `cadenza_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const store = await openStore({ databaseUrl: u.toString(), poolSize: opts.poolSize ?? 4, ...(opts.preparedStatements === undefined ? {} : { preparedStatements: opts.preparedStatements }) });
  await migrate(store);
  return {
    store,
    url: u.toString(),
    async drop() {
      await store.close();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** `--prepared=N`: named statements per PostgreSQL connection (default: the store's); 0 sends them unnamed. */
export function preparedFlag(args: string[]): { preparedStatements?: number } {
  const raw = flag(args, 'prepared', '');
  if (raw === '') return {};
  const v = Number(raw);
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--prepared must be a whole number >= 0, got ${raw}`);
  return { preparedStatements: v };
}

/** Parses `--name=value` flags. */
export function flag(args: string[], name: string, fallback: string): string {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

export const ZONES = ['America/New_York', 'America/Los_Angeles', 'Europe/London', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Sydney', 'Asia/Tokyo', null];
export const COUNTRIES = ['US', 'US', 'GB', 'DE', 'IN', 'AU', 'JP', null];

/** A workspace with one mailbox and n leads, written with set-based inserts. */
export async function seedLeads(store: Store, n: number, nowMs: number, random: Random): Promise<{ workspaceId: string; leadIds: string[] }> {
  const workspaceId = newId(nowMs, random);
  await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Bench', time_zone: 'Europe/London' }).execute();
  await store.db.insertInto('mailbox').values({ id: newId(nowMs, random), workspace_id: workspaceId, email: 'rep@bench.test', provider: 'smtp_imap', time_zone: 'America/New_York' }).execute();
  const leadIds: string[] = [];
  for (let i = 0; i < n; i += 10_000) {
    const ids: string[] = [];
    const emails: string[] = [];
    const zones: Array<string | null> = [];
    const countries: Array<string | null> = [];
    for (let j = i; j < Math.min(n, i + 10_000); j++) {
      ids.push(newId(nowMs, random));
      emails.push(`lead${j}@company${j % 997}.test`);
      zones.push(ZONES[j % ZONES.length]!);
      countries.push(COUNTRIES[j % COUNTRIES.length]!);
    }
    await sql`
      insert into lead (id, workspace_id, email, email_norm, time_zone, country)
      select u.id, ${workspaceId}, u.email, u.email, u.zone, u.country
      from unnest(${ids}::uuid[], ${emails}::text[], ${zones}::text[], ${countries}::text[]) as u(id, email, zone, country)`.execute(store.db);
    leadIds.push(...ids);
  }
  return { workspaceId, leadIds };
}
