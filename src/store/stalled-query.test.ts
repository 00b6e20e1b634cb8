import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pgAdminUrl, testBackends } from '../../test/pg-admin.ts';
import { startBlackholeRelay } from '../../test/ops/blackhole-relay.ts';
import { FailoverPool } from './pg-failover.ts';
import { parsePgHosts } from './pg-hosts.ts';
import { serverAnswers } from './stalled-query.ts';
import { isTransientStoreError } from './transient.ts';

// The machine's PostgreSQL behind a relay that black-holes (a network cut without a reset); the
// real cut between Patroni nodes is in the Patroni drill (test/ops/patroni-drill.ts).
describe.skipIf(!testBackends().includes('postgres'))('a statement on a server cut off fails in seconds, a slow one on a live server does not', () => {
  const live = new URL(pgAdminUrl);
  const target = { host: live.hostname, port: Number(live.port || 5432) };
  const stall = { checkAfterMs: 300, probeTimeoutMs: 300 };

  it('probe: a live server answers the SSLRequest; a black hole does not', async () => {
    const relay = await startBlackholeRelay(target);
    try {
      expect(await serverAnswers('127.0.0.1', relay.port, 2_000)).toBe(true);
      relay.blackhole();
      expect(await serverAnswers('127.0.0.1', relay.port, 300)).toBe(false);
    } finally {
      await relay.close();
    }
  });

  it('cut under a statement: it fails as a lost connection (transient) within check + probe, the idle connections on that path go with it, and the pool connects again once the path is back', async () => {
    const relay = await startBlackholeRelay(target);
    const url = `postgres://${live.username}@127.0.0.1:${relay.port}${live.pathname}`;
    const pool = new FailoverPool(parsePgHosts(url), { max: 2, types: pg.types, waitMs: 2_000, stall });
    try {
      const slow = await pool.connect();
      // A second connection, idle in the pool when the cut comes: it must go with the first.
      const idle = await pool.connect();
      idle.release();
      // A live server that is merely slow: probed several times, answers, the statement completes.
      expect((await slow.query('select pg_sleep(1.2), 1 as one')).rows[0].one).toBe(1);
      const pending = slow.query('select pg_sleep(10)');
      const failed = pending.then(() => null, (e: unknown) => e);
      await new Promise((r) => setTimeout(r, 100));
      const t0 = Date.now();
      relay.blackhole();
      const e = await failed;
      const took = Date.now() - t0;
      slow.release(e as Error);
      expect(e).toBeInstanceOf(Error);
      expect((e as Error).message).toMatch(/does not answer a new connection/);
      expect(isTransientStoreError(e)).toBe(true);
      expect(took).toBeLessThan(2_000);
      relay.restore();
      // The idle connection on the cut path was dropped with the failed one: this is a new one.
      const again = await pool.connect();
      expect((await again.query('select 2 as two')).rows[0].two).toBe(2);
      again.release();
    } finally {
      await pool.end();
      await relay.close();
    }
  }, 15_000);
});
