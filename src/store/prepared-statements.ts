import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/**
 * Named prepared statements behind the PostgreSQL pool. Kysely over `pg` sends every statement
 * unnamed, so the server parses and plans it on every call: on the send loop that was most of
 * PostgreSQL's CPU (docs/benchmarks.md, "Claim-and-send loop"). Here every statement Kysely sends
 * gets a stable name derived from its text, and `pg` parses it once per connection and then only
 * binds and executes it (PostgreSQL may then also keep a generic plan, plan_cache_mode = auto).
 *
 * - Bounded: each connection keeps at most `capacity` statements, least recently used first out.
 *   Evicted names are DEALLOCATEd in groups (one round trip for EVICT_BATCH of them), so a process
 *   running ad-hoc statements (texts built per call) neither grows the server's memory without
 *   bound nor pays a round trip per statement; an evicted name used again before its group went
 *   out is simply kept.
 * - A migration that changes a table under a prepared plan makes PostgreSQL refuse it with
 *   "cached plan must not change result type" (SQLSTATE 0A000). The statement is dropped and
 *   prepared again, and retried once where that is safe: outside a transaction, or as the first
 *   statement of one (rolled back and begun again with the same BEGIN text, so nothing ran in it).
 *   Later in a transaction earlier statements' effects are gone with the abort: the error goes to
 *   the caller, whose transaction retry starts over, on a statement prepared afresh.
 * - Only queries and writes are named; DDL, transaction control (followed here, for the retry) and
 *   text without parameters that may hold several statements (only the simple protocol runs those)
 *   go through unnamed, as before. So does a statement that starts with the comment UNNAMED: one
 *   whose generic plan (PostgreSQL's choice after five runs of a prepared statement) is worse
 *   than planning it with each call's values; say why beside it.
 */

/** How many evicted statements are deallocated together. */
const EVICT_BATCH = 16;

const PLAN_CHANGED = 'cached plan must not change result type';

/** The opening of a statement that must be planned with its values on every call (see above). */
export const UNNAMED = '/* unnamed */';

/** Only queries and writes are prepared: DDL, session and transaction statements gain nothing. */
const PREPARABLE = /^\s*\(?\s*(select|insert|update|delete|with|values|merge)\b/i;
const BEGIN = /^\s*(begin|start\s+transaction)\b/i;
const END = /^\s*(commit|end|rollback|abort|prepare\s+transaction)\b/i;

/** The statement's name: a digest of its text (PostgreSQL names hold 63 bytes). */
export function statementName(text: string): string {
  return `cz_${createHash('sha1').update(text).digest('hex').slice(0, 32)}`;
}

/** What `pg` keeps per connection about the statements it has parsed there (pg/lib/connection.js). */
interface PgConnectionState {
  parsedStatements: Record<string, string>;
}

class PreparingClient {
  /** Text → name, in least-recently-used order (a Map iterates in insertion order). */
  private readonly lru = new Map<string, string>();
  /** Evicted names still prepared on the server, by text, waiting for a group DEALLOCATE. */
  private readonly evicted = new Map<string, string>();
  /** Names whose server-side plan is stale: deallocated before the text is prepared again. */
  private readonly stale = new Set<string>();
  private beginText: string | null = null;
  private sinceBegin = 0;

  constructor(
    readonly client: pg.PoolClient,
    private readonly capacity: number,
  ) {}

  release(destroy?: boolean): void {
    this.client.release(destroy);
  }

  // Kysely calls query(text, values); cursors (streaming) are not configured in openPostgres.
  query<R>(text: string, values: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    return this.run(text, values) as unknown as Promise<PostgresQueryResult<R>>;
  }

  private async run(text: string, values: ReadonlyArray<unknown>): Promise<pg.QueryResult> {
    if (!PREPARABLE.test(text) || (values.length === 0 && text.includes(';'))) {
      if (BEGIN.test(text)) {
        this.beginText = text;
        this.sinceBegin = 0;
      } else if (END.test(text) && !/^\s*rollback\s+to\b/i.test(text)) {
        this.beginText = null;
      } else if (this.beginText !== null) {
        this.sinceBegin++;
      }
      return this.client.query(text, values as unknown[]);
    }
    const first = this.beginText !== null && this.sinceBegin === 0;
    if (this.beginText !== null) this.sinceBegin++;
    const name = await this.nameFor(text);
    try {
      return await this.client.query({ name, text, values: values as unknown[] });
    } catch (e) {
      if ((e as Error).message !== PLAN_CHANGED) throw e;
      return this.afterPlanChange(name, text, values, first, e);
    }
  }

  /** The text's name, prepared or to be prepared on this connection; evicts beyond capacity. */
  private async nameFor(text: string): Promise<string> {
    let name = this.lru.get(text);
    if (name !== undefined) {
      this.lru.delete(text);
    } else {
      name = this.evicted.get(text) ?? statementName(text);
      this.evicted.delete(text);
    }
    this.lru.set(text, name);
    if (this.stale.has(name) || this.evicted.size >= EVICT_BATCH) await this.deallocate();
    while (this.lru.size > this.capacity) {
      const [oldText, oldName] = this.lru.entries().next().value as [string, string];
      this.lru.delete(oldText);
      this.evicted.set(oldText, oldName);
    }
    return name;
  }

  private async afterPlanChange(name: string, text: string, values: ReadonlyArray<unknown>, first: boolean, error: unknown): Promise<pg.QueryResult> {
    this.stale.add(name);
    const status = this.client.getTransactionStatus();
    if (status === 'I' && this.beginText === null) {
      // Outside a transaction: the failed statement changed nothing.
      await this.deallocate();
      return this.client.query({ name, text, values: values as unknown[] });
    }
    if (first && this.beginText !== null) {
      // The transaction's first statement failed: nothing ran in it, so begin it again.
      const begin = this.beginText;
      await this.client.query('rollback');
      await this.deallocate();
      await this.client.query(begin);
      this.sinceBegin = 1;
      return this.client.query({ name, text, values: values as unknown[] });
    }
    // Mid-transaction: the statement is deallocated at the next chance (after the caller's rollback).
    throw error;
  }

  /**
   * DEALLOCATEs the evicted and stale names in one round trip, unless the transaction is aborted
   * (every statement but ROLLBACK fails there: they wait for the next call).
   */
  private async deallocate(): Promise<void> {
    if (this.client.getTransactionStatus() === 'E') return;
    const parsed = (this.client as unknown as { connection: PgConnectionState }).connection.parsedStatements;
    const all = [...new Set([...this.evicted.values(), ...this.stale])].filter((n) => parsed[n] !== undefined);
    this.evicted.clear();
    this.stale.clear();
    if (all.length === 0) return;
    await this.client.query(all.map((n) => `deallocate "${n}"`).join('; '));
    for (const n of all) delete parsed[n];
  }
}

/**
 * A Kysely pool over a `pg` pool whose connections prepare what they run (capacity statements
 * each). The same wrapper is returned for the same connection, so its cache lives as long as it.
 */
export function preparingPool(pool: { connect(): Promise<pg.PoolClient>; end(): Promise<void> }, capacity: number): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PreparingClient>();
  return {
    async connect(): Promise<PostgresPoolClient> {
      const c = await pool.connect();
      let w = wrappers.get(c);
      if (!w) {
        w = new PreparingClient(c, capacity);
        wrappers.set(c, w);
      }
      return w as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}
