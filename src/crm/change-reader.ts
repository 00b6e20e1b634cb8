import { backoffDelay, type BackoffPolicy } from '../common/backoff.ts';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import type { Applied } from '../sequence/enrollment-service.ts';
import type { StopEngine } from '../sequence/suppress.ts';
import type { Store } from '../store/store.ts';
import { storePage, type ConnectionContext } from './apply-changes.ts';
import { CrmAuthError, CrmCursorExpiredError, CrmTransientError, readsChanges, writesFields, type CrmConnector, type CrmLimits } from './connector.ts';
import { writeOwnedFields } from './fields-out.ts';
import { runListEnrollments } from './list-enroll.ts';
import { effectiveOwners } from './ownership.ts';
import { effectiveStopRules } from './stop-rules.ts';
import { defaultCrmBackoff } from './writer.ts';

/**
 * The changes-in half of a connection's sync round (docs/crm.md "Changes in"), beside the writer
 * (writer.ts) in the same loop (crm-sync.ts) and under the same lease on the connection row:
 *
 * - readChanges from the stored cursor until the CRM says nothing more waits (at most `maxPages`
 *   per round); each page and the cursor after it are stored in one transaction (apply-changes.ts),
 *   so a crash between a read and its store reads the page again, and the mirror's versions make
 *   that a no-op (promise 5);
 * - an expired cursor (CrmCursorExpiredError) starts a full resync from a null cursor, deduplicated
 *   the same way, and bounded: `maxPages` per round, continued on the next from where it stood;
 * - then the Cadenza-owned fields queued by the journal go out (fields-out.ts), and the list
 *   enrollments that are due run (list-enroll.ts);
 * - refused credentials pause the connection (as the writer does); any other failure holds the
 *   connection's reading for a jittered backoff, and is shown (crm_connection.read_error).
 */
export interface ChangeReaderOptions {
  store: Store;
  clock: Clock;
  random: Random;
  /** This process's name in the connection leases (the writer's). */
  owner: string;
  /** The engine stops go through (EnrollmentService); its notify() hears the transitions after each commit. */
  engine: StopEngine & { notify(applied: Applied[]): void };
  connectorFor(connectionId: string): Promise<CrmConnector>;
  log?: Logger;
  leaseMs?: number;
  backoff?: BackoffPolicy;
  /** Records asked for per readChanges call (default 100). */
  pageLimit?: number;
  /** readChanges calls per connection per round (default 50). */
  maxPages?: number;
  /** A continuous list enrollment is read again this often (default 15 min). */
  listEveryMs?: number;
  /** Called after list enrollments made enrollments (the scheduler's nudge). */
  onEnrolled?: () => void;
  /**
   * The CRM's request limit shared with the writer (CrmWriter.reserve): each readChanges page, and
   * the field writes and list reads after them, first take the connector's worst case of a batch
   * (limits.requestsPerBatch, an estimate for a read). Absent: reads are not counted.
   */
  reserve?: (connectionId: string, limits: CrmLimits, n: number) => { ok: true; done: () => void } | { ok: false; at: number };
}

export interface ReadResult {
  pages: number;
  /** Versions stored. */
  changes: number;
  stopped: number;
  conflicts: number;
  fieldsWritten: number;
  enrolled: number;
  resynced: boolean;
  failed: boolean;
  /** This read only finished the last one's field writes and list reads (afterPending): changes since were not read. */
  pagesSkipped: boolean;
  /** When this connection's reading may go on; null when it paused. */
  nextAt: number | null;
}

export class ChangeReader {
  private readonly hold = new Map<string, { until: number; failures: number }>();
  private readonly asked = new Set<string>();
  /**
   * Connections whose pages were read but whose field writes and list reads did not fit the CRM's
   * window: the next read does those first, without reading pages again. Otherwise a CRM whose
   * window holds less than two batches' worst case (Pipedrive: 20 per 2 s, 15 a batch) would read a
   * page every round, never reach its field writes, and never count as caught up.
   */
  private readonly afterPending = new Set<string>();

  constructor(private readonly o: ChangeReaderOptions) {}

  private async lease(connectionId: string): Promise<boolean> {
    const now = new Date(this.o.clock.now());
    const r = await this.o.store.db
      .updateTable('crm_connection')
      .set({ lease_owner: this.o.owner, lease_until: new Date(now.getTime() + (this.o.leaseMs ?? 120_000)) })
      .where('id', '=', connectionId)
      .where('state', '=', 'active')
      .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', this.o.owner), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** One round for one connection; a connector that reads no changes has nothing to do here. */
  async read(connectionId: string): Promise<ReadResult> {
    const { clock, store } = this.o;
    const out: ReadResult = { pages: 0, changes: 0, stopped: 0, conflicts: 0, fieldsWritten: 0, enrolled: 0, resynced: false, failed: false, pagesSkipped: false, nextAt: null };
    const h = this.hold.get(connectionId) ?? { until: 0, failures: 0 };
    if (h.until > clock.now()) return { ...out, nextAt: h.until };
    if (!(await this.lease(connectionId))) return { ...out, nextAt: clock.now() + (this.o.leaseMs ?? 120_000) };
    const connector = await this.o.connectorFor(connectionId);
    if (!readsChanges(connector)) return { ...out, nextAt: clock.now() };
    try {
      const row = await store.db
        .selectFrom('crm_connection')
        .select(['workspace_id', 'kind', 'created_at', 'change_cursor', 'field_owners', 'stop_rules', 'integration_user_id'])
        .where('id', '=', connectionId)
        .executeTakeFirstOrThrow();
      let userId = row.integration_user_id;
      if (userId === null && !this.asked.has(connectionId)) {
        userId = await connector.integrationUserId();
        // Asked once per process once answered: a CRM that names no user for the token will not start to.
        this.asked.add(connectionId);
        if (userId !== null) await store.db.updateTable('crm_connection').set({ integration_user_id: userId }).where('id', '=', connectionId).execute();
      }
      const ctx: ConnectionContext = {
        connectionId,
        workspaceId: row.workspace_id,
        kind: row.kind,
        connectedAt: new Date(row.created_at).getTime(),
        integrationUserId: userId,
        owners: effectiveOwners(row.field_owners),
        rules: effectiveStopRules(row.stop_rules),
      };
      let cursor = row.change_cursor;
      // Requests of the CRM's limit, taken before each step; none left: come back when they fit.
      const take = () => this.o.reserve?.(connectionId, connector.limits, connector.limits.requestsPerBatch) ?? { ok: true as const, done: () => undefined };
      out.pagesSkipped = this.afterPending.has(connectionId);
      for (let n = 0; n < (out.pagesSkipped ? 0 : (this.o.maxPages ?? 50)); n++) {
        const slot = take();
        if (!slot.ok) return { ...out, nextAt: slot.at };
        let page;
        try {
          page = await connector.readChanges(cursor, this.o.pageLimit ?? 100);
        } catch (e) {
          slot.done();
          if (!(e instanceof CrmCursorExpiredError) || cursor === null) throw e;
          // The full resync: from nothing, each page deduplicated against the mirror.
          this.o.log?.warn({ connectionId, err: e.message }, 'CRM change cursor expired: full resync');
          out.resynced = true;
          cursor = null;
          continue;
        }
        slot.done();
        const done = await store.db.transaction().execute((tx) => storePage(tx, this.o.engine, ctx, page, clock.now()));
        this.o.engine.notify(done.applied);
        cursor = page.cursor;
        out.pages++;
        out.changes += done.stored.contacts + done.stored.deals;
        out.stopped += done.stored.stopped;
        out.conflicts += done.stored.conflicts;
        if (!page.more) break;
      }
      const after = take();
      if (!after.ok) {
        this.afterPending.add(connectionId);
        return { ...out, nextAt: after.at };
      }
      this.afterPending.delete(connectionId);
      try {
        if (writesFields(connector)) out.fieldsWritten = await writeOwnedFields(store.db, connectionId, connector, ctx.owners);
        out.enrolled = await runListEnrollments({ db: store.db, clock, random: this.o.random, ...(this.o.listEveryMs !== undefined ? { everyMs: this.o.listEveryMs } : {}) }, connectionId, connector);
      } finally {
        after.done();
      }
      if (out.enrolled > 0) this.o.onEnrolled?.();
      this.hold.set(connectionId, { until: 0, failures: 0 });
      return { ...out, nextAt: clock.now() };
    } catch (e) {
      out.failed = true;
      return { ...out, nextAt: await this.failed(connectionId, h, e) };
    }
  }

  private async failed(connectionId: string, h: { until: number; failures: number }, e: unknown): Promise<number | null> {
    const { clock, store } = this.o;
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof CrmAuthError) {
      await store.db.updateTable('crm_connection').set({ state: 'paused', paused_reason: message, read_error: message, lease_owner: null, lease_until: null }).where('id', '=', connectionId).execute();
      this.o.log?.warn({ connectionId, err: message }, 'CRM connection paused: its credentials were refused');
      return null;
    }
    const retryAfter = e instanceof CrmTransientError ? (e.retryAfterMs ?? 0) : 0;
    const until = clock.now() + Math.max(retryAfter, backoffDelay(h.failures, this.o.random, this.o.backoff ?? defaultCrmBackoff));
    this.hold.set(connectionId, { until, failures: h.failures + 1 });
    await store.db.updateTable('crm_connection').set({ read_error: message.slice(0, 1000) }).where('id', '=', connectionId).execute();
    if (!(e instanceof CrmTransientError)) this.o.log?.error({ connectionId, err: e }, 'CRM change read failed unexpectedly; retried later');
    return until;
  }
}
