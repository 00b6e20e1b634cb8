import { sql } from 'kysely';
import { backoffDelay, type BackoffPolicy } from '../common/backoff.ts';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import type { Store } from '../store/store.ts';
import { toCrmActivity } from './activity.ts';
import type { CallMedia } from './call-media.ts';
import { CrmAuthError, CrmTransientError, type CrmConnector, type CrmLimits, type CrmWriteResult } from './connector.ts';
import { RequestWindow } from './request-window.ts';
import { claimDue, retryAt, settle, type ClaimedActivity } from './sql/activities.ts';

/**
 * Writes each connection's outbox (0054_crm.sql crm_activity) to its CRM, exactly once per fact
 * (docs/crm.md "Activities out"):
 *
 * - one writer per connection at a time (a lease on the connection row), so the CRM's request
 *   limit is counted in one place: a batch starts only when the requests it may make fit in the
 *   CRM's window (RequestWindow), so the writer never causes a 429 by itself;
 * - a batch is claimed with a lease; the connector finds by external id what an earlier attempt
 *   wrote before its answer was lost, so a retry never writes twice;
 * - a transient failure (outage, 5xx, 429, timeout) puts the whole connection on hold for the
 *   CRM's Retry-After or a jittered exponential backoff: during an outage of hours it probes now
 *   and then instead of hammering, and when the CRM is back the outbox drains at the limit's pace,
 *   never in a flood; nothing is given up (only a missing contact or the CRM's refusal is final);
 * - refused credentials pause the connection with the reason; the outbox keeps filling.
 */
export interface CrmWriterOptions {
  store: Store;
  clock: Clock;
  random: Random;
  /** This process's name in the connection leases. */
  owner: string;
  /** The connector of a connection (opens its sealed credentials), and whether the CRM was set up for it already. */
  connectorFor(connectionId: string): Promise<{ connector: CrmConnector; prepared: boolean }>;
  log?: Logger;
  /** A claimed batch or a connection lease is another writer's to take after this long (default 2 min). */
  leaseMs?: number;
  /** A call's recording link and transcript (call-media.ts); absent: calls go without them. */
  callMedia?: (row: ClaimedActivity) => Promise<CallMedia>;
  /** Holds after transient failures (default 5 s doubling to 5 min, full jitter: an outage of hours is probed about 24 times an hour, and writing resumes within minutes of its end). */
  backoff?: BackoffPolicy;
}

export const defaultCrmBackoff: BackoffPolicy = { baseMs: 5_000, capMs: 5 * 60_000 };

export interface DrainResult {
  written: number;
  skipped: number;
  rejected: number;
  /** Batches that failed for now. */
  failures: number;
  /** When this connection has due work again or may continue; null when its outbox is empty. */
  nextAt: number | null;
  /**
   * The CRM's window, a failure's hold or another writer's lease keeps this connection until
   * nextAt. Otherwise nextAt is only when the earliest waiting activity (a call's, waiting for its
   * recording) is due, and a new activity may come before: the sync looks again at its poll.
   */
  held: boolean;
}

interface ConnectionState {
  window: RequestWindow;
  holdUntil: number;
  failures: number;
  /** The window as last stored (saveWindow), to write only a change. */
  saved?: string;
}

export class CrmWriter {
  private readonly state = new Map<string, ConnectionState>();
  private readonly leaseMs: number;
  private readonly backoff: BackoffPolicy;

  constructor(private readonly o: CrmWriterOptions) {
    this.leaseMs = o.leaseMs ?? 120_000;
    this.backoff = o.backoff ?? defaultCrmBackoff;
  }

  private stateOf(connectionId: string, limits: CrmLimits): ConnectionState {
    let st = this.state.get(connectionId);
    if (!st) this.state.set(connectionId, (st = { window: new RequestWindow(limits.requests, limits.windowMs), holdUntil: 0, failures: 0 }));
    return st;
  }

  /**
   * The connection's request window for another user of the CRM's limit in this process (the
   * change reader): takes `n` requests now and answers a `done` that counts them at their end, as a
   * batch's are; or answers when they will fit. So reading changes and writing activities share one
   * count of the CRM's limit.
   */
  reserve(connectionId: string, limits: CrmLimits, n: number): { ok: true; done: () => void } | { ok: false; at: number } {
    const st = this.stateOf(connectionId, limits);
    const now = this.o.clock.now();
    const k = Math.min(n, limits.requests);
    const fits = Math.max(st.window.earliest(k, now), st.holdUntil);
    if (fits > now) return { ok: false, at: fits };
    st.window.take(k, now);
    return { ok: true, done: () => st.window.restamp(k, now, this.o.clock.now()) };
  }

  /**
   * Takes or renews the lease on the connection; false when another writer holds it or it is
   * paused. Answers the request window the last writer stored (saveWindow), for a writer that has
   * none of its own yet.
   */
  private async lease(connectionId: string): Promise<{ window: unknown } | false> {
    const now = new Date(this.o.clock.now());
    const r = await this.o.store.db
      .updateTable('crm_connection')
      .set({ lease_owner: this.o.owner, lease_until: new Date(now.getTime() + this.leaseMs) })
      .where('id', '=', connectionId)
      .where('state', '=', 'active')
      .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', this.o.owner), eb('lease_until', '<', now)]))
      .returning('request_window')
      .executeTakeFirst();
    return r ? { window: r.request_window } : false;
  }

  /**
   * Stores the connection's request window (migration 0057) while this writer holds the lease, so
   * that a process taking the connection over (after a crash or a deploy) counts the requests
   * already made in the window instead of starting empty. Called by the sync after each round of
   * the connection (the writer's batches and the reader's pages); written only when it changed.
   */
  async saveWindow(connectionId: string): Promise<void> {
    const st = this.state.get(connectionId);
    if (!st) return;
    const snapshot = JSON.stringify(st.window.snapshot(this.o.clock.now()));
    if (snapshot === st.saved) return;
    await this.o.store.db.updateTable('crm_connection').set({ request_window: snapshot }).where('id', '=', connectionId).where('lease_owner', '=', this.o.owner).execute();
    st.saved = snapshot;
  }

  /**
   * Writes what is due for one connection, batch after batch, until its outbox is empty, the CRM's
   * window is full, or the CRM failed; says when to come back.
   */
  async drain(connectionId: string): Promise<DrainResult> {
    const out: DrainResult = { written: 0, skipped: 0, rejected: 0, failures: 0, nextAt: null, held: true };
    const { clock, store } = this.o;
    const leased = await this.lease(connectionId);
    if (!leased) return { ...out, nextAt: clock.now() + this.leaseMs };
    const { connector, prepared } = await this.o.connectorFor(connectionId);
    const limits = connector.limits;
    const st = this.stateOf(connectionId, limits);
    // Another writer stored the window since this one did (it had the connection meanwhile): its
    // requests are still in the CRM's window. Counting one of ours twice this way only waits longer.
    if (leased.window && JSON.stringify(leased.window) !== st.saved) {
      st.window.absorb(leased.window, clock.now());
      st.saved = JSON.stringify(leased.window);
    }
    if (!prepared) {
      if (st.holdUntil > clock.now()) return { ...out, nextAt: st.holdUntil };
      try {
        await connector.prepare();
        await store.db.updateTable('crm_connection').set({ prepared_at: new Date(clock.now()) }).where('id', '=', connectionId).execute();
      } catch (e) {
        out.failures++;
        return { ...out, nextAt: await this.failed(connectionId, st, e, []) };
      }
    }
    for (;;) {
      const now = clock.now();
      if (st.holdUntil > now) return { ...out, nextAt: st.holdUntil };
      const fits = st.window.earliest(limits.requestsPerBatch, now);
      if (fits > now) return { ...out, nextAt: fits };
      const rows = await claimDue(store.db, connectionId, new Date(now), new Date(now + this.leaseMs), limits.maxBatch);
      if (!rows.length) return { ...out, nextAt: await this.nextDue(connectionId), held: false };
      // Reserved before the first request: the worst case of this batch is counted in the window.
      st.window.take(limits.requestsPerBatch, now);
      const ids = new Map(rows.map((r) => [r.external_id, r.id]));
      const activities = await Promise.all(rows.map(async (r) => toCrmActivity(r, await this.callMedia(r))));
      const before = connector.requestsMade?.();
      // The CRM counted each request when it arrived, up to now: the batch's count at its end, and
      // what it really made where the connector counts them (the unused rest of the worst case freed).
      const counted = () => st.window.settle(limits.requestsPerBatch, before === undefined ? limits.requestsPerBatch : connector.requestsMade!() - before, now, clock.now());
      let results: CrmWriteResult[];
      try {
        results = await connector.writeActivities(activities);
      } catch (e) {
        counted();
        out.failures++;
        return { ...out, nextAt: await this.failed(connectionId, st, e, rows.map((r) => r.id)) };
      }
      counted();
      await settle(store.db, ids, results, new Date(clock.now()));
      const answered = new Set(results.map((r) => r.externalId));
      // An activity the connector gave no result for is retried (never dropped).
      const missing = rows.filter((r) => !answered.has(r.external_id)).map((r) => r.id);
      await retryAt(store.db, missing, new Date(clock.now()), 'the CRM gave no answer for this activity');
      for (const r of results) {
        if (r.status === 'written') out.written++;
        else if (r.status === 'no_contact') out.skipped++;
        else out.rejected++;
      }
      st.failures = 0;
    }
  }

  /**
   * A request that failed: refused credentials pause the connection (its claimed activities are
   * due again at once, for when it resumes); anything else holds the connection for the CRM's
   * Retry-After or a jittered backoff, and its claimed activities with it. Says when to come back.
   */
  private async failed(connectionId: string, st: ConnectionState, e: unknown, claimed: number[]): Promise<number | null> {
    const { clock, store } = this.o;
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof CrmAuthError) {
      await retryAt(store.db, claimed, new Date(clock.now()), message);
      await store.db.updateTable('crm_connection').set({ state: 'paused', paused_reason: message, lease_owner: null, lease_until: null }).where('id', '=', connectionId).execute();
      this.o.log?.warn({ connectionId, err: message }, 'CRM connection paused: its credentials were refused');
      return null;
    }
    const retryAfter = e instanceof CrmTransientError ? (e.retryAfterMs ?? 0) : 0;
    st.holdUntil = clock.now() + Math.max(retryAfter, backoffDelay(st.failures++, this.o.random, this.backoff));
    await retryAt(store.db, claimed, new Date(st.holdUntil), message);
    if (!(e instanceof CrmTransientError)) this.o.log?.error({ connectionId, err: e }, 'CRM write failed unexpectedly; retried later');
    return st.holdUntil;
  }

  /** A call's media; one that cannot be read (a transcript that does not open) goes without, logged, rather than holding the call's activity forever. */
  private async callMedia(row: ClaimedActivity): Promise<CallMedia> {
    if (row.kind !== 'call' || !this.o.callMedia) return {};
    try {
      return await this.o.callMedia(row);
    } catch (e) {
      this.o.log?.warn({ activityId: row.id, err: e instanceof Error ? e.message : String(e) }, 'a call activity goes to the CRM without its recording link and transcript: they could not be read');
      return {};
    }
  }

  private async nextDue(connectionId: string): Promise<number | null> {
    const r = await sql<{ at: Date | null }>`select min(next_attempt_at) as at from crm_activity where connection_id = ${connectionId} and state = 'pending'`.execute(this.o.store.db);
    const at = r.rows[0]?.at;
    return at ? new Date(at).getTime() : null;
  }
}
