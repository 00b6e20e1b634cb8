import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store.ts';
import { connectRemoteStore, type RemoteStore } from './client.ts';
import { endpointFile, readEndpoint } from './endpoint.ts';
import { serveStoreEndpoint, type StoreEndpoint } from './server.ts';
import { FrameReader } from './wire.ts';

/** The server's store lent to a command (server.ts, client.ts), on a real embedded database. */
describe('the store endpoint of a running server', () => {
  let dir: string;
  let store: Store;
  let endpoint: StoreEndpoint;
  const nudged: string[] = [];
  const remotes: RemoteStore[] = [];
  const remote = async () => {
    const r = await connectRemoteStore(readEndpoint(join(dir, 'db'))!);
    remotes.push(r);
    return r;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-endpoint-'));
    store = await openStore({});
    await sql`create table t (id int8 primary key, at timestamptz, raw bytea, doc jsonb, tags text[], note text)`.execute(store.db);
    endpoint = await serveStoreEndpoint({ store, dbDir: join(dir, 'db'), nudge: (w) => nudged.push(w), idleMs: 300 });
  });
  afterAll(async () => {
    for (const r of remotes) await r.close().catch(() => undefined);
    await endpoint.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes a loopback port and a token that only the folder’s owner can read', () => {
    const e = readEndpoint(join(dir, 'db'))!;
    expect(e).toMatchObject({ pid: process.pid, host: '127.0.0.1', port: endpoint.port });
    expect(e.token.length).toBeGreaterThanOrEqual(40);
    expect(statSync(endpointFile(join(dir, 'db'))).mode & 0o777).toBe(0o600);
  });

  it('returns the values the store itself returns, with their types', async () => {
    const r = await remote();
    const row = { id: 1, at: new Date('2026-03-29T01:30:00.123Z'), raw: Buffer.from([0, 1, 254, 255]), doc: { a: [1, 'two', null], $: 'x', nested: { when: '2026-01-01' } }, tags: ['a', 'b'], note: null };
    const inserted = await r.db.insertInto('t' as never).values({ ...row, doc: JSON.stringify(row.doc) } as never).executeTakeFirst();
    expect(inserted.numInsertedOrUpdatedRows).toBe(1n);
    const here = await sql`select * from t`.execute(store.db);
    const there = await sql`select * from t`.execute(r.db);
    expect(there.rows).toEqual(here.rows);
    const [a, b] = [here.rows[0] as Record<string, unknown>, there.rows[0] as Record<string, unknown>];
    const kind = (v: unknown) => (v === null || v === undefined ? v : Object.getPrototypeOf(v));
    for (const k of Object.keys(a)) expect(kind(b[k]), k).toBe(kind(a[k]));
    expect(r.backend).toBe('pglite');
  });

  it('keeps a transaction together and rolls it back on error; database errors keep their code', async () => {
    const r = await remote();
    await expect(
      r.db.transaction().execute(async (tx) => {
        await sql`insert into t (id) values (2)`.execute(tx);
        await sql`insert into t (id) values (1)`.execute(tx);
      }),
    ).rejects.toMatchObject({ code: '23505', constraint: 't_pkey' });
    expect((await sql<{ n: number }>`select count(*)::int as n from t where id = 2`.execute(store.db)).rows[0]!.n).toBe(0);
  });

  it('passes the nudges of a command on to the server', async () => {
    await (await remote()).nudge('enrollments');
    expect(nudged).toEqual(['enrollments']);
  });

  it('refuses a wrong token', async () => {
    const e = readEndpoint(join(dir, 'db'))!;
    await expect(connectRemoteStore({ ...e, token: `${e.token.slice(0, -2)}xx` })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('takes back a lease left idle or left open by a command that went away, rolling back its transaction', async () => {
    const idle = await remote();
    let released!: () => void;
    const held = new Promise<void>((r) => (released = r));
    const tx = idle.db.transaction().execute(async (t) => {
      await sql`insert into t (id) values (3)`.execute(t);
      await held;
      await sql`select 1`.execute(t);
    });
    await new Promise((r) => setTimeout(r, 100));
    // The server's own query waits for the lease, then runs once the idle one is taken back.
    const started = Date.now();
    const n = (await sql<{ n: number }>`select count(*)::int as n from t where id = 3`.execute(store.db)).rows[0]!.n;
    expect(n).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    released();
    await expect(tx).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });

    const gone = await remote();
    const open = gone.db.transaction().execute(async (t) => {
      await sql`insert into t (id) values (4)`.execute(t);
      await gone.close();
    });
    await open.catch(() => undefined);
    expect((await sql<{ n: number }>`select count(*)::int as n from t where id = 4`.execute(store.db)).rows[0]!.n).toBe(0);
  });
});

describe('frames', () => {
  it('are split at newlines across chunks, and refused past the limit, whole or in parts', () => {
    const r = new FrameReader(20);
    expect(r.push(Buffer.from('{"a":1}\n{"b"'))).toEqual([{ a: 1 }]);
    expect(r.push(Buffer.from(':2}\n'))).toEqual([{ b: 2 }]);
    expect(() => new FrameReader(20).push(Buffer.from(`"${'x'.repeat(30)}"\n`))).toThrow(/over 20 bytes/);
    const parts = new FrameReader(20);
    parts.push(Buffer.from('"xxxxxxxxxxxx'));
    expect(() => parts.push(Buffer.from('xxxxxxxxxxxx'))).toThrow(/over 20 bytes/);
  });
});
