import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../common/clock.ts';
import type { Db, Store, Tx } from '../store/store.ts';

/**
 * Leases with fencing tokens, kept in PostgreSQL (the coordinator: no home-made distributed
 * system). A lease names one owner for a resource until it expires; the owner renews it well
 * before. Taking over an expired lease, or a new acquisition, draws a new token from a sequence,
 * so tokens only grow: a write that checks `holds(tx, resource, token)` inside its transaction is
 * refused once the lease has moved on, even if the old owner does not know it yet.
 *
 * Times come from the injected clock so simulations can expire leases; in production all
 * processes use the system clock, and the TTL is far larger than any clock skew between them.
 */
export interface Lease {
  resource: string;
  owner: string;
  token: number;
  expiresAt: number;
}

const RENEW_CHUNK = 500;

export class Leases {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /**
   * Takes the lease if it is free, expired or already ours (then it is renewed, same token), or if
   * its owner is one of `takeOverFrom`: owners the caller has proven gone (membership.ts: heartbeat
   * stale, or dead on this host). A takeover draws a new token like any change of owner, so the
   * old owner's writes are refused by `holds()` even if it was not quite dead. The check is in the
   * upsert's WHERE, so of two processes taking the same dead owner's lease only one wins.
   */
  async acquire(resource: string, owner: string, ttlMs: number, takeOverFrom: readonly string[] = []): Promise<Lease | null> {
    return (await this.acquireAll([resource], owner, ttlMs, takeOverFrom)).get(resource) ?? null;
  }

  /**
   * acquire() for many resources in one statement (distinct resources; a sync process taking
   * 10,000 mailboxes at start made 10,000 round trips one after the other). Returns the leases
   * it got, by resource; the others are held by someone else. Rows are taken in resource order,
   * so two processes taking overlapping sets wait for each other instead of deadlocking.
   */
  async acquireAll(resources: readonly string[], owner: string, ttlMs: number, takeOverFrom: readonly string[] = []): Promise<Map<string, Lease>> {
    const out = new Map<string, Lease>();
    if (resources.length === 0) return out;
    const now = new Date(this.clock.now());
    const until = new Date(this.clock.now() + ttlMs);
    const gone = takeOverFrom.length ? sql`or lease.owner in (${sql.join(takeOverFrom)})` : sql``;
    const r = await sql<{ resource: string; token: number; expires_at: Date }>`
      insert into lease (resource, owner, token, expires_at, acquired_at, renewed_at)
      select w.resource, ${owner}, nextval('lease_token_seq'), ${until}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      from unnest(${[...resources].sort()}::text[]) as w(resource) order by w.resource
      on conflict (resource) do update set
        token = case when lease.owner = excluded.owner and lease.expires_at > ${now} then lease.token else excluded.token end,
        acquired_at = case when lease.owner = excluded.owner and lease.expires_at > ${now} then lease.acquired_at else excluded.acquired_at end,
        owner = excluded.owner, expires_at = excluded.expires_at, renewed_at = excluded.renewed_at
      where lease.owner = excluded.owner or lease.expires_at <= ${now} ${gone}
      returning resource, token, expires_at`.execute(this.store.db);
    for (const row of r.rows) out.set(row.resource, { resource: row.resource, owner, token: Number(row.token), expiresAt: row.expires_at.getTime() });
    return out;
  }

  /** Extends a lease we hold with this token; null when it was lost (expired and taken, or released). */
  async renew(lease: Lease, ttlMs: number): Promise<Lease | null> {
    return (await this.renewAll([lease], ttlMs))[0] ?? null;
  }

  /**
   * renew() for many leases at once, one statement per chunk of 500 (a sync process holding
   * 10,000 mailboxes renews them every ttl/3; one statement each took seconds of round trips, and
   * a pass slower than the TTL's remaining two thirds would lose leases it holds). Answers in the
   * order given: the renewed lease, or null for one that was lost. Chunks keep each statement's
   * row locks brief: a batch's fencing check (holds(), FOR SHARE) waits for the row it reads.
   */
  async renewAll(leases: readonly Lease[], ttlMs: number): Promise<Array<Lease | null>> {
    const now = new Date(this.clock.now());
    const until = new Date(this.clock.now() + ttlMs);
    const out: Array<Lease | null> = [];
    for (let i = 0; i < leases.length; i += RENEW_CHUNK) {
      const chunk = leases.slice(i, i + RENEW_CHUNK);
      const r = await sql<{ resource: string; expires_at: Date }>`
        update lease set expires_at = ${until}, renewed_at = ${now}
        from unnest(${chunk.map((l) => l.resource)}::text[], ${chunk.map((l) => l.owner)}::text[], ${chunk.map((l) => String(l.token))}::bigint[]) as h(resource, owner, token)
        where lease.resource = h.resource and lease.owner = h.owner and lease.token = h.token and lease.expires_at > ${now}
        returning lease.resource, lease.expires_at`.execute(this.store.db);
      const renewed = new Map(r.rows.map((row) => [row.resource, row.expires_at.getTime()]));
      for (const l of chunk) {
        const at = renewed.get(l.resource);
        out.push(at === undefined ? null : { ...l, expiresAt: at });
      }
    }
    return out;
  }

  /** Gives a lease up at once (graceful stop), so the next owner need not wait for it to expire. */
  async release(lease: Lease): Promise<void> {
    await this.store.db.deleteFrom('lease').where('resource', '=', lease.resource).where('token', '=', lease.token).execute();
  }

  /** Live (unexpired) leases under a prefix: resource without the prefix → owner, for balancing. */
  async holders(prefix: string): Promise<Map<string, string>> {
    const rows = await this.store.db
      .selectFrom('lease')
      .select(['resource', 'owner'])
      .where('resource', 'like', `${prefix}%`)
      .where('expires_at', '>', new Date(this.clock.now()))
      .execute();
    return new Map(rows.map((r) => [r.resource.slice(prefix.length), r.owner]));
  }
}

/**
 * The fencing check, inside the caller's transaction: true only if this token still holds the
 * lease and it has not expired. FOR SHARE keeps a concurrent takeover from committing between this
 * check and the caller's commit.
 */
export async function holds(tx: Tx | Db, resource: string, token: number, nowMs: number): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`select ${holdsSql(resource, token, nowMs)} as ok`.execute(tx);
  return r.rows[0]?.ok === true;
}

/**
 * holds() as a boolean SQL condition, for a statement that fences its own work, so that check and
 * write are one statement: the outbox's claim, a sync batch's cursor (ingest/store.ts saveCursor).
 */
export function holdsSql(resource: string, token: number, nowMs: number): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from lease where resource = ${resource} and token = ${token} and expires_at > ${new Date(nowMs)} for share)`;
}
