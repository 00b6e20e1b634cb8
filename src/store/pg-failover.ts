import pg from 'pg';
import { cadenzaError } from '../common/errors.ts';
import type { PgHosts } from './pg-hosts.ts';
import { DEFAULT_STALL, destroySocket, watchStalledQueries, type StallOptions } from './stalled-query.ts';
import { isTransientStoreError } from './transient.ts';

/**
 * Connections to whichever of several PostgreSQL hosts is the primary now: what libpq's
 * multi-host URL with target_session_attrs=read-write does, which node-postgres lacks
 * (pg-hosts.ts). One pg.Pool per host; a connection is taken from the host that answered last
 * (the primary, usually) and otherwise from the next in the list's order. A NEW connection is
 * accepted only when the server says it takes writes (not in recovery, transaction_read_only
 * off); a standby's connection is closed and the next host is tried. So after a promotion, the
 * first connection that fails on the old primary (refused, reset) moves every later one to the
 * new primary; connections already open to the dead server fail on their next statement and the
 * pool drops them.
 *
 * While no host takes writes (the primary is gone and the standby not yet promoted), connect()
 * keeps looking, up to waitMs, then fails with STORE_UNAVAILABLE: nothing was sent to a server,
 * so waiting here is always safe, and every caller gets it without a retry of its own. What
 * failed after a connection was made is the caller's to judge (transient.ts).
 *
 * A connection that stays open to a server that is cut off (packets dropped, no reset) would
 * hang its statement for TCP's ~15 minutes: every connection here is watched by stalled-query.ts,
 * which fails a statement unanswered for `stall.checkAfterMs` once its server no longer answers a
 * new connection either, so the caller's retry moves on to the new primary.
 */
export interface FailoverOptions {
  /** Connections per host pool (only the primary's is used in steady state). */
  max: number;
  types: pg.CustomTypesConfig;
  /** How long connect() keeps looking for a writable host. */
  waitMs: number;
  /** One host's connection attempt gives up after this (a host that drops packets). */
  connectTimeoutMs?: number;
  /** When a statement without an answer gets its server probed (stalled-query.ts). */
  stall?: StallOptions;
  /** An idle connection is closed after this (`IDLE_TIMEOUT_MS`). */
  idleTimeoutMs?: number;
}

/** How long an idle connection is kept open (see poolFor). */
export const IDLE_TIMEOUT_MS = 300_000;

export class FailoverPool {
  private readonly pools: pg.Pool[];
  private current = 0;
  /** Connections whose server was checked to take writes (checked once per connection). */
  private readonly accepted = new WeakSet<pg.PoolClient>();
  /** Connections that answered "read-only" since: closed at their next checkout. */
  private readonly readOnly = new WeakSet<pg.PoolClient>();
  private ended = false;

  constructor(
    private readonly hosts: PgHosts,
    private readonly o: FailoverOptions,
  ) {
    this.pools = hosts.urls.map((url) => this.poolFor(url));
  }

  private poolFor(url: string): pg.Pool {
    // JIT off: the analytics reads' correlated lookups (last email before each reply) make plans
    // the planner costs in millions, and PostgreSQL then spends seconds compiling a query that runs
    // in a few hundred milliseconds (docs/benchmarks.md, analytics at scale). Cadenza's queries are
    // short; none gains from JIT. An `options` in the URL still wins (pg reads it over this).
    //
    // Idle connections are kept for minutes, not pg's 10 s: a new server process knows nothing of
    // the schema, and its first plans over the partitioned journal load each partition's catalog
    // entries (a first lookup in `event` 13–21 ms against 1.6 ms after). A screen that reads five
    // figures at once on connections that had gone idle paid that again: the Analytics screen's
    // first round after a pause took twice its usual time at 1M enrollments (docs/benchmarks.md).
    const p = new pg.Pool({
      connectionString: url,
      max: this.o.max,
      types: this.o.types,
      connectionTimeoutMillis: this.o.connectTimeoutMs ?? 5_000,
      idleTimeoutMillis: this.o.idleTimeoutMs ?? IDLE_TIMEOUT_MS,
      // Idle connections do not keep the process alive: a command that ends without closing the
      // store exits as it did with the 10 s timeout, not minutes later.
      allowExitOnIdle: true,
      keepAlive: true,
      options: '-c jit=off',
    });
    // An idle client's error (server restart, failover) must not crash the process: the pool
    // drops that client and the next checkout gets a new one.
    p.on('error', () => undefined);
    return p;
  }

  /** The host connections go to now ('host:port'). */
  get primary(): string {
    return this.hosts.names[this.current]!;
  }

  async connect(): Promise<pg.PoolClient> {
    const { k, value } = await untilWritable(this.hosts, this.current, this.o.waitMs, () => this.ended, async (k) => {
      const c = await this.pools[k]!.connect();
      return (await this.accept(c, k)) ? c : null;
    });
    if (k !== this.current) this.moveTo(k);
    return value;
  }

  async end(): Promise<void> {
    this.ended = true;
    await Promise.all(this.pools.map((p) => p.end().catch(() => undefined)));
  }

  /** Checks a new connection once: may it be used (target_session_attrs)? A refused one is closed. */
  private async accept(c: pg.PoolClient, k: number): Promise<boolean> {
    if (this.readOnly.has(c)) {
      c.release(true);
      return false;
    }
    if (this.accepted.has(c)) return true;
    // Before the first statement: the read-only check itself may be the one that hangs.
    const pool = this.pools[k]!;
    watchStalledQueries(c, this.o.stall ?? DEFAULT_STALL, () => this.serverGone(k, pool));
    if (this.hosts.readWrite) {
      let ro: boolean;
      try {
        ro = await isReadOnly(c);
      } catch (e) {
        c.release(true);
        throw e;
      }
      if (ro) {
        c.release(true);
        return false;
      }
    }
    this.accepted.add(c);
    // pg-pool listens for a client's 'error' only while it is idle: a connection lost while checked
    // out (the primary killed under a transaction) would emit it to no listener and crash the
    // process. The statement in progress gets the error anyway, and release drops the client.
    c.on('error', () => undefined);
    this.watchReadOnly(c);
    return true;
  }

  /**
   * A connection that answers 25006 (read-only transaction) is on a server that no longer takes
   * writes: it is closed at its next checkout, so the caller's retry reaches the primary.
   */
  private watchReadOnly(c: pg.PoolClient): void {
    const query = c.query.bind(c) as (...a: unknown[]) => unknown;
    (c as { query: unknown }).query = (...a: unknown[]) => {
      const r = query(...a);
      if (r instanceof Promise) {
        r.catch((e: { code?: string }) => {
          if (e?.code === '25006') this.readOnly.add(c);
        });
      }
      return r;
    };
  }

  /**
   * A statement found host k gone (stalled-query.ts: cut off, no answer to a new connection). Its
   * other connections, idle ones included, would each hang for the same wait before failing, one
   * checkout after another (a pool of 10: over a minute): they are all dropped now, and the next
   * connection tries the next host first.
   */
  private serverGone(k: number, pool: pg.Pool): void {
    if (this.pools[k] !== pool) return; // already dropped
    this.pools[k] = this.poolFor(this.hosts.urls[k]!);
    if (this.current === k) this.current = (k + 1) % this.pools.length;
    const gone = Object.assign(new Error(`connection to PostgreSQL at ${this.hosts.names[k]} dropped: another statement found that server gone`), { code: 'ETIMEDOUT' });
    // pg-pool keeps every client, idle or checked out, in _clients.
    for (const c of (pool as unknown as { _clients: pg.Client[] })._clients ?? []) destroySocket(c, gone);
    void pool.end().catch(() => undefined);
  }

  /** The primary moved: idle connections to the old one are closed (they may still answer, read-only). */
  private moveTo(k: number): void {
    const was = this.current;
    const old = this.pools[was]!;
    // A fresh pool in its place (an ended pg.Pool cannot be used again), for when it is primary again.
    this.pools[was] = this.poolFor(this.hosts.urls[was]!);
    this.current = k;
    // Connections still checked out leave when they are released.
    void old.end().catch(() => undefined);
  }
}

/** What target_session_attrs=read-write asks of a server (libpq checks the same two things). */
async function isReadOnly(c: pg.ClientBase): Promise<boolean> {
  const r = await c.query<{ ro: boolean }>(`select pg_is_in_recovery() or current_setting('transaction_read_only') = 'on' as ro`);
  return r.rows[0]!.ro;
}

/**
 * Tries the hosts in order from `start` until tryHost(k) gives a connection (null: that host is
 * read-only), round after round with a growing pause, for up to waitMs. A transient failure of
 * one host moves on to the next; any other (a wrong password) is thrown at once.
 */
async function untilWritable<T>(hosts: PgHosts, start: number, waitMs: number, ended: () => boolean, tryHost: (k: number) => Promise<T | null>): Promise<{ k: number; value: T }> {
  const deadline = Date.now() + waitMs;
  let pause = 50;
  for (;;) {
    const why: string[] = [];
    for (let i = 0; i < hosts.urls.length; i++) {
      const k = (start + i) % hosts.urls.length;
      try {
        const value = await tryHost(k);
        if (value !== null) return { k, value };
        why.push(`${hosts.names[k]} is read-only (a standby)`);
      } catch (e) {
        if (!isTransientStoreError(e)) throw e;
        why.push(`${hosts.names[k]}: ${(e as Error).message}`);
      }
    }
    if (ended() || Date.now() + pause > deadline) {
      throw cadenzaError('STORE_UNAVAILABLE', `no PostgreSQL host takes writes: ${why.join('; ')}`);
    }
    await new Promise((r) => setTimeout(r, pause).unref());
    pause = Math.min(500, pause * 2);
  }
}

/**
 * One client of its own (outside any pool: an advisory lock's session, a LISTEN) on a host that
 * takes writes, under the same rule as FailoverPool.
 */
export async function connectWritable(hosts: PgHosts, config: Omit<pg.ClientConfig, 'connectionString'>, waitMs: number, stall: StallOptions = DEFAULT_STALL): Promise<pg.Client> {
  const { value } = await untilWritable(hosts, 0, waitMs, () => false, async (k) => {
    // A host cut off answers no SYN: without a connect timeout, each try would wait for the
    // kernel's SYN retries (about two minutes) before the next host is asked.
    const c = new pg.Client({ connectionTimeoutMillis: 5_000, ...config, connectionString: hosts.urls[k] });
    c.on('error', () => undefined);
    try {
      await c.connect();
      watchStalledQueries(c, stall);
      if (hosts.readWrite && (await isReadOnly(c))) {
        await c.end().catch(() => undefined);
        return null;
      }
      return c;
    } catch (e) {
      await c.end().catch(() => undefined);
      throw e;
    }
  });
  return value;
}
