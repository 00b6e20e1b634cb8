import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import { runEvery, type Periodic } from '../common/periodic.ts';
import type { Random } from '../common/random.ts';
import type { Applied } from '../sequence/enrollment-service.ts';
import type { StopEngine } from '../sequence/suppress.ts';
import type { Store } from '../store/store.ts';
import { ChangeReader, type ReadResult } from './change-reader.ts';
import { openConnection, saveCredential, type TokenSealer } from './connections.ts';
import type { CrmConnector } from './connector.ts';
import { makeConnector } from './connectors.ts';
import { registerHooks } from './webhooks/register.ts';
import { CrmWriter, type CrmWriterOptions, type DrainResult } from './writer.ts';

/**
 * The API role's CRM sync loop (docs/crm.md): every `pollMs`, each active connection whose time
 * has come is drained by the writer, then read by the change reader when its CRM reads changes
 * (change-reader.ts); each says when to come back (its outbox empty: the next
 * poll; the CRM's window full or the CRM failing: later). nudge() looks again at once, e.g. after
 * an admin resumed a connection.
 *
 * Webhooks (src/crm/webhooks/) are triggers: a verified delivery moves the connection's wake
 * number in the database, and every process's loop compares it at each round with the number it
 * saw when it last read; a move makes the connection's read due now, so a change is read within a
 * poll of its webhook, whichever process received it. A burst of deliveries moves the number many
 * times and costs one read (the read takes the number it saw before it started: a delivery during
 * the read costs one more). While the connection's webhooks verify (hook_verified_at within
 * HOOK_FRESH_MS), a caught-up connection is read only every `reconcileEveryMs`, the reconcile poll
 * that catches what a dropped delivery missed. Rounds never overlap: round() waits for the one in
 * progress.
 */
export interface CrmSyncOptions {
  store: Store;
  clock: Clock;
  random: Random;
  owner: string;
  sealer: TokenSealer;
  log?: Logger;
  pollMs?: number;
  /** How often a caught-up connection's changes are read (default CRM_READ_EVERY_MS). */
  readEveryMs?: number;
  onDrained?: (connectionId: string, r: DrainResult) => void;
  /** CADENZA_PUBLIC_URL: with it, the webhooks of CRMs that register them by API (Pipedrive) are registered. */
  publicUrl?: string;
  /** How often a connection whose webhooks verify is read when no webhook woke it (default CRM_RECONCILE_EVERY_MS). */
  reconcileEveryMs?: number;
  /** The enrollment engine: with it, connections whose CRM reads changes are read too (change-reader.ts). */
  engine?: StopEngine & { notify(applied: Applied[]): void };
  /** After a list enrollment enrolled someone (the scheduler's nudge). */
  onEnrolled?: () => void;
  onRead?: (connectionId: string, r: ReadResult) => void;
  /** A call activity's recording link and transcript (call-media.ts); absent: calls go without them. */
  callMedia?: CrmWriterOptions['callMedia'];
}

/** How often the loop looks at the connections (the writer says when one needs it sooner or later). */
export const CRM_POLL_MS = 2_000;
/** How often a caught-up connection's changes are read (a CRM change stops a sequence within about this). */
export const CRM_READ_EVERY_MS = 30_000;
/** With webhooks verifying, the reconcile poll: what a dropped delivery missed is read within this. */
export const CRM_RECONCILE_EVERY_MS = 10 * 60_000;
/** A connection counts as having working webhooks this long after its last verified delivery. */
export const HOOK_FRESH_MS = 24 * 3_600_000;
/** A failed webhook registration is tried again after this (polling goes on meanwhile). */
const HOOK_RETRY_MS = 15 * 60_000;

export class CrmSync {
  readonly writer: CrmWriter;
  readonly reader: ChangeReader | undefined;
  private readonly due = new Map<string, number>();
  /** When each connection's changes are read next: caught up, after readEveryMs (the writer keeps its own pace). */
  private readonly readDue = new Map<string, number>();
  private readonly readEveryMs: number;
  private readonly connectors = new Map<string, { key: string; connector: CrmConnector }>();
  private loop: Periodic | undefined;
  private readonly pollMs: number;
  private readonly reconcileEveryMs: number;
  /** The wake number each connection had when this process last read it (or first saw it). */
  private readonly wakes = new Map<string, number>();
  /** Failed webhook registrations: not tried again before. */
  private readonly hookHold = new Map<string, number>();
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly o: CrmSyncOptions) {
    this.pollMs = o.pollMs ?? CRM_POLL_MS;
    this.readEveryMs = o.readEveryMs ?? CRM_READ_EVERY_MS;
    this.reconcileEveryMs = o.reconcileEveryMs ?? CRM_RECONCILE_EVERY_MS;
    this.writer = new CrmWriter({
      store: o.store,
      clock: o.clock,
      random: o.random,
      owner: o.owner,
      ...(o.log ? { log: o.log } : {}),
      connectorFor: (id) => this.connectorFor(id),
      ...(o.callMedia ? { callMedia: o.callMedia } : {}),
    });
    if (o.engine) {
      this.reader = new ChangeReader({
        store: o.store,
        clock: o.clock,
        random: o.random,
        owner: o.owner,
        engine: o.engine,
        ...(o.log ? { log: o.log } : {}),
        ...(o.onEnrolled ? { onEnrolled: o.onEnrolled } : {}),
        // The writer's connector and request window: reads and writes share the CRM's limits.
        connectorFor: async (id) => (await this.connectorFor(id)).connector,
        reserve: (id, limits, n) => this.writer.reserve(id, limits, n),
      });
    }
  }

  private async connectorFor(id: string): Promise<{ connector: CrmConnector; prepared: boolean }> {
    const c = await openConnection(this.o.store.db, this.o.sealer, id);
    // One connector per connection for as long as its address and token stay the same: it
    // keeps its own pacing (HubSpot's searches per second) across drains.
    const key = `${c.kind}\n${c.baseUrl}\n${c.token}`;
    let cached = this.connectors.get(id);
    if (cached?.key !== key) {
      // An OAuth grant's refreshes are stored as they happen (oauth/credential.ts): each compared with the last stored.
      let stored = c.token;
      const saveToken = async (next: string) => {
        await saveCredential({ db: this.o.store.db, sealer: this.o.sealer }, id, stored, next);
        stored = next;
      };
      this.connectors.set(id, (cached = { key, connector: makeConnector(c.kind, { baseUrl: c.baseUrl, token: c.token, clock: this.o.clock, saveToken }) }));
    }
    return { connector: cached.connector, prepared: c.prepared };
  }

  /** One pass over the active connections; after the one in progress, if any (a wake never makes two at once). */
  round(): Promise<void> {
    const r = this.running.then(() => this.pass());
    this.running = r.catch(() => undefined);
    return r;
  }

  private async pass(): Promise<void> {
    const now = this.o.clock.now();
    const active = await this.o.store.db
      .selectFrom('crm_connection')
      .select(['id', 'wake_seq', 'hook_verified_at', 'hooks_registered_at'])
      .where('state', '=', 'active')
      .execute();
    for (const c of active) {
      const id = c.id;
      const wake = Number(c.wake_seq);
      const seen = this.wakes.get(id);
      if (seen === undefined) this.wakes.set(id, wake);
      else if (seen !== wake) this.readDue.set(id, now);
      const writeDue = (this.due.get(id) ?? 0) <= now;
      const readDue = this.reader !== undefined && (this.readDue.get(id) ?? 0) <= now;
      if (!writeDue && !readDue) continue;
      if (this.o.publicUrl && c.hooks_registered_at === null && (this.hookHold.get(id) ?? 0) <= now) await this.registerHooks(id, this.o.publicUrl);
      if (writeDue) {
        const r = await this.writer.drain(id);
        this.o.onDrained?.(id, r);
        // Held (the CRM's window, a failure): not before nextAt. Otherwise new activities may come any
        // time: at the latest at the next poll.
        this.due.set(id, r.nextAt !== null && r.nextAt > now ? (r.held ? r.nextAt : Math.min(r.nextAt, now + this.pollMs)) : now + this.pollMs);
      }
      // Changes in, in the same round (a paused connection is left alone by both), once caught up
      // only every readEveryMs (reconcileEveryMs while its webhooks wake it): a read costs requests
      // of the same limit the activities need.
      if (this.reader && readDue) {
        const read = await this.reader.read(id);
        this.o.onRead?.(id, read);
        // The wake is spent by a read that read the pages; one that only finished the last read's
        // field writes leaves it for the next round.
        if (!read.pagesSkipped) this.wakes.set(id, wake);
        const hooked = c.hook_verified_at !== null && now - new Date(c.hook_verified_at).getTime() < HOOK_FRESH_MS;
        this.readDue.set(id, read.nextAt !== null && read.nextAt > now ? read.nextAt : now + (hooked ? this.reconcileEveryMs : this.readEveryMs));
      }
      await this.writer.saveWindow(id);
    }
  }

  private async registerHooks(id: string, publicUrl: string): Promise<void> {
    try {
      const { connector } = await this.connectorFor(id);
      const r = await registerHooks({ db: this.o.store.db, sealer: this.o.sealer, now: this.o.clock.now() }, id, connector, publicUrl);
      if (r.kind === 'failed') {
        this.hookHold.set(id, this.o.clock.now() + HOOK_RETRY_MS);
        this.o.log?.warn({ connectionId: id, err: r.error }, 'CRM webhooks not registered; polling goes on, tried again later');
      }
    } catch (e) {
      this.hookHold.set(id, this.o.clock.now() + HOOK_RETRY_MS);
      this.o.log?.warn({ connectionId: id, err: e }, 'CRM webhooks not registered; polling goes on, tried again later');
    }
  }

  start(): void {
    this.loop ??= runEvery(this.o.clock, this.pollMs, () => this.round(), (e) => this.o.log?.error({ err: e }, 'CRM sync round failed'));
  }

  nudge(): void {
    this.due.clear();
    this.readDue.clear();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    this.loop = undefined;
  }
}
