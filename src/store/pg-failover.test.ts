import { describe, expect, it } from 'vitest';
import net from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { isCadenzaError } from '../common/errors.ts';
import { pgAdminUrl, testBackends } from '../../test/pg-admin.ts';
import { FailoverPool } from './pg-failover.ts';
import { parsePgHosts } from './pg-hosts.ts';
import { openStore } from './store.ts';

/** A loopback port nothing listens on (taken, then freed). */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

// The real standby and promotion are in the failover drill (test/ops/failover.mail.test.ts);
// here, the host list against the machine's PostgreSQL.
describe.skipIf(!testBackends().includes('postgres'))('FailoverPool on PostgreSQL', () => {
  const live = new URL(pgAdminUrl);
  const liveHost = `${live.hostname}:${live.port || 5432}`;

  it('turns JIT off on its connections, unless the URL sets options itself', async () => {
    const jit = async (url: string) => {
      const pool = new FailoverPool(parsePgHosts(url), { max: 1, types: pg.types, waitMs: 2_000 });
      try {
        const c = await pool.connect();
        const v = (await c.query('show jit')).rows[0].jit as string;
        c.release();
        return v;
      } finally {
        await pool.end();
      }
    };
    const base = `postgres://${live.username}@${liveHost}${live.pathname}`;
    expect(await jit(base)).toBe('off');
    expect(await jit(`${base}?options=${encodeURIComponent('-c jit=on')}`)).toBe('on');
  });

  it('keeps an idle connection (its server process and what it has loaded) past pg\'s 10 s, and closes it after its own timeout', async () => {
    const base = `postgres://${live.username}@${liveHost}${live.pathname}`;
    const pidsAfter = async (o: { idleTimeoutMs?: number }, waitMs: number) => {
      const pool = new FailoverPool(parsePgHosts(base), { max: 1, types: pg.types, waitMs: 2_000, ...o });
      try {
        const pid = async () => {
          const c = await pool.connect();
          const v = (await c.query('select pg_backend_pid() as pid')).rows[0].pid as number;
          c.release();
          return v;
        };
        const first = await pid();
        await new Promise((r) => setTimeout(r, waitMs));
        return [first, await pid()];
      } finally {
        await pool.end();
      }
    };
    const [a, b] = await pidsAfter({}, 11_000);
    expect(b).toBe(a);
    const [c, d] = await pidsAfter({ idleTimeoutMs: 100 }, 400);
    expect(d).not.toBe(c);
  }, 30_000);

  it('skips a host that refuses connections and uses the next; a multi-host DATABASE_URL opens a store', async () => {
    const dead = await deadPort();
    const url = `postgres://${live.username}@127.0.0.1:${dead},${liveHost}${live.pathname}?target_session_attrs=read-write`;
    const pool = new FailoverPool(parsePgHosts(url), { max: 2, types: pg.types, waitMs: 2_000 });
    try {
      const c = await pool.connect();
      expect((await c.query('select pg_is_in_recovery() as r')).rows[0].r).toBe(false);
      c.release();
      expect(pool.primary).toBe(liveHost);
    } finally {
      await pool.end();
    }
    const store = await openStore({ databaseUrl: url, poolSize: 2, failoverWaitMs: 2_000 });
    try {
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(store.db);
      expect(rows[0]!.one).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('no host answering: STORE_UNAVAILABLE naming each host, after the wait; a wrong database name at once', async () => {
    const [a, b] = [await deadPort(), await deadPort()];
    const pool = new FailoverPool(parsePgHosts(`postgres://u@127.0.0.1:${a},127.0.0.1:${b}/x`), { max: 1, types: pg.types, waitMs: 300 });
    const t0 = Date.now();
    const e = await pool.connect().catch((x: unknown) => x);
    expect(isCadenzaError(e, 'STORE_UNAVAILABLE')).toBe(true);
    expect((e as Error).message).toContain(`127.0.0.1:${a}`);
    expect((e as Error).message).toContain(`127.0.0.1:${b}`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100); // it waited, rounds 50 and 100 ms apart
    await pool.end();

    const wrong = new FailoverPool(parsePgHosts(`postgres://${live.username}@${liveHost},${liveHost}/no_such_db_46`), { max: 1, types: pg.types, waitMs: 30_000 });
    const t1 = Date.now();
    await expect(wrong.connect()).rejects.toThrow(/no_such_db_46/);
    expect(Date.now() - t1).toBeLessThan(10_000);
    await wrong.end();
  });
});
