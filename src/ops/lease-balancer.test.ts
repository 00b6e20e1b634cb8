import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { LeaseBalancer, type ShardWorker } from './lease-balancer.ts';
import { holds } from './leases.ts';
import { systemPidProbe, thisProcess, type ProcessIdentity } from './process-identity.ts';

/**
 * Several pools on one store, each on its own simulated clock (a killed process is one whose clock
 * stops: its timers never fire again, its heartbeat and leases stay as they were). Each member's
 * "loop" on a mailbox is what the balancer drives: started under a lease, handed over after a
 * send in hand of 2 simulated seconds, stopped when lost. The invariant checked at every start:
 * at most one live owner works a mailbox at a time, and each new owner's token is larger.
 */
const T0 = Date.UTC(2026, 2, 2, 9, 0);
const HEARTBEAT = 3_000;
const IDS = ['m1', 'm2', 'm3'];

describe.each(testBackends())('lease balancer on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('keeps the leases it took first while a long first pass still starts the rest (thousands of mailboxes on a busy machine)', async () => {
    const clock = new SimClock(T0);
    const ids = Array.from({ length: 250 }, (_, i) => `long-${String(i).padStart(3, '0')}`);
    const lost: string[] = [];
    const balancer = new LeaseBalancer<{ id: string }>({
      store,
      clock,
      role: 'long-pass',
      prefix: 'long:',
      owner: 'long-owner',
      pool: { leaseTtlMs: 60_000, membership: { heartbeatMs: HEARTBEAT } },
      worker: {
        eligible: async () => ids.map((id) => ({ id })),
        // Each start takes 300 ms of the clock: a chunk of 100 started side by side costs 30 s, so
        // the pass outlives the first chunk's 60 s leases.
        start: async () => {
          clock.advance(300);
          return 'started';
        },
        lost: (id) => void lost.push(id),
        handOver: () => undefined,
      },
    });
    await balancer.start();
    await balancer.halt();
    expect(clock.now() - T0).toBeGreaterThan(60_000);
    expect(lost).toEqual([]);
    const live = await store.db.selectFrom('lease').select(['resource', 'token']).where('resource', 'like', 'long:%').where('expires_at', '>', new Date(clock.now())).execute();
    expect(live).toHaveLength(250);
    expect(await holds(store.db, live[0]!.resource, Number(live[0]!.token), clock.now())).toBe(true);
  });

  interface Pool {
    name: string;
    clock: SimClock;
    balancer: LeaseBalancer<{ id: string }>;
    working: Set<string>;
    dead: boolean;
  }

  function harness(opts: { announce: boolean }) {
    const pools: Pool[] = [];
    const active = new Map<string, { pool: Pool; token: number }>();
    const lastToken = new Map<string, number>();
    const violations: string[] = [];
    const add = (name: string, at: number, identity?: ProcessIdentity): Pool => {
      const clock = new SimClock(at);
      const pool = { name, clock, working: new Set<string>(), dead: false } as Pool;
      const worker: ShardWorker<{ id: string }> = {
        eligible: async () => IDS.map((id) => ({ id })),
        start: async (m, lease) => {
          const cur = active.get(m.id);
          if (cur && cur.pool !== pool && !cur.pool.dead) violations.push(`${m.id}: ${name} started while ${cur.pool.name} works it`);
          if (lease.token <= (lastToken.get(m.id) ?? 0)) violations.push(`${m.id}: token did not grow`);
          lastToken.set(m.id, lease.token);
          active.set(m.id, { pool, token: lease.token });
          pool.working.add(m.id);
          return 'started';
        },
        lost: (id) => stopWork(pool, id),
        // The message in hand takes 2 s to reach its server and be recorded; then the lease goes.
        handOver: (id) =>
          void clock.setTimer(2_000, () => {
            stopWork(pool, id);
            void pool.balancer.ended(id);
          }),
      };
      pool.balancer = new LeaseBalancer({
        store,
        clock,
        role: 'sender',
        prefix: `t${backend}:`,
        owner: name,
        worker,
        pool: {
          leaseTtlMs: 60_000,
          membership: { heartbeatMs: HEARTBEAT, staleAfter: 5, ...(identity ? { identity } : {}) },
          // In-process stand-in for the push bus's 'mailboxes' nudge: the others balance now.
          ...(opts.announce ? { announce: () => pools.filter((p) => p !== pool && !p.dead).forEach((p) => void p.balancer.balance()) } : {}),
        },
      });
      pools.push(pool);
      return pool;
    };
    const stopWork = (pool: Pool, id: string) => {
      pool.working.delete(id);
      if (active.get(id)?.pool === pool) active.delete(id);
    };
    /** Moves every live clock in 250 ms steps until cond holds; the simulated ms it took. */
    const until = async (cond: () => boolean, maxMs = 120_000): Promise<number> => {
      const live = pools.filter((p) => !p.dead);
      const start = live[0]!.clock.now();
      for (let t = 0; t <= maxMs; t += 250) {
        await new Promise((r) => setTimeout(r, backend === 'postgres' ? 25 : 10));
        if (cond()) return t;
        for (const p of live) p.clock.advance(250);
      }
      throw new Error(`not reached in ${maxMs} ms: ${pools.map((p) => `${p.name}=${[...p.working].join(',')}`).join(' ')}`);
    };
    return { add, until, violations, active };
  }

  const clean = async () => {
    await store.db.deleteFrom('lease').execute();
    await store.db.deleteFrom('member').execute();
  };

  it('gives a joining pool its share within seconds and, when a pool is killed, the survivor takes all once its heartbeat is stale', async () => {
    await clean();
    const h = harness({ announce: true });
    const a = h.add('pool-a', T0);
    await a.balancer.start();
    expect(await h.until(() => a.working.size === 3)).toBe(0);

    const b = h.add('pool-b', a.clock.now());
    await b.balancer.start();
    const joined = await h.until(() => b.working.size === 1 && a.working.size === 2);
    // The hand-over waits for the message in hand (2 s), then the release's nudge lets b take it.
    expect(joined).toBeLessThanOrEqual(2_000 + HEARTBEAT);

    b.dead = true; // SIGKILL: b's clock stops, its row and lease stay
    const takeover = await h.until(() => a.working.size === 3);
    // Stale after 5 heartbeats, seen at a's next heartbeat: well under the 60 s lease TTL.
    expect(takeover).toBeGreaterThanOrEqual(4 * HEARTBEAT);
    expect(takeover).toBeLessThanOrEqual(7 * HEARTBEAT);
    expect(h.violations).toEqual([]);
    await a.balancer.halt();
  }, 120_000);

  it('rebalances without any nudge (the heartbeat and the under-quota pass), and a graceful leave hands everything over', async () => {
    await clean();
    const h = harness({ announce: false });
    const a = h.add('pool-c', T0);
    await a.balancer.start();
    const b = h.add('pool-d', T0);
    await b.balancer.start();
    const joined = await h.until(() => b.working.size + a.working.size === 3 && Math.min(a.working.size, b.working.size) === 1);
    expect(joined).toBeLessThanOrEqual(2_000 + 3 * HEARTBEAT);

    // b stops gracefully: its loops end, the leases are released, its row is deleted.
    await b.balancer.halt();
    for (const id of [...b.working]) {
      b.working.delete(id);
      h.active.delete(id);
      await b.balancer.ended(id);
    }
    await b.balancer.leave();
    b.dead = true;
    expect(await h.until(() => a.working.size === 3)).toBeLessThanOrEqual(2 * HEARTBEAT);
    expect(h.violations).toEqual([]);
    await a.balancer.halt();
  }, 120_000);

  it('after a SIGKILL on this host, the restarted process takes the dead pid\'s leases at once, with new tokens that fence the old ones', async () => {
    await clean();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    const deadPid = child.pid!;
    const dead: ProcessIdentity = { ...thisProcess(), pid: deadPid, startTicks: systemPidProbe.startTicks(deadPid) };
    const h = harness({ announce: true });
    const old = h.add('host:old', T0, dead);
    await old.balancer.start();
    expect(old.working.size).toBe(3);
    const oldTokens = new Map([...h.active].map(([id, v]) => [id, v.token]));
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    old.dead = true;

    const fresh = h.add('host:new', T0 + 1_000);
    await fresh.balancer.start();
    // At once: no heartbeat staleness and no lease expiry waited for.
    expect(fresh.working.size).toBe(3);
    for (const [id, token] of oldTokens) {
      expect(h.active.get(id)!.token).toBeGreaterThan(token);
      expect(await holds(store.db, `t${backend}:${id}`, token, fresh.clock.now())).toBe(false);
    }
    expect(h.violations).toEqual([]);
    await fresh.balancer.halt();
  }, 60_000);
});
