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
import { CrmWriter, type CrmWriterOptions, type DrainResult } from './writer.ts';

/**
 * The API role's CRM sync loop (docs/crm.md): every `pollMs`, each active connection whose time
 * has come is drained by the writer, then read by the change reader when its CRM reads changes
 * (change-reader.ts); each says when to come back (its outbox empty: the next
 * poll; the CRM's window full or the CRM failing: later). nudge() looks again at once, e.g. after
 * an admin resumed a connection.
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

  constructor(private readonly o: CrmSyncOptions) {
    this.pollMs = o.pollMs ?? CRM_POLL_MS;
    this.readEveryMs = o.readEveryMs ?? CRM_READ_EVERY_MS;
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

  /** One pass over the active connections. */
  async round(): Promise<void> {
    const now = this.o.clock.now();
    const active = await this.o.store.db.selectFrom('crm_connection').select('id').where('state', '=', 'active').execute();
    for (const { id } of active) {
      if ((this.due.get(id) ?? 0) > now) continue;
      const r = await this.writer.drain(id);
      this.o.onDrained?.(id, r);
      // Held (the CRM's window, a failure): not before nextAt. Otherwise new activities may come any
      // time: at the latest at the next poll.
      let next = r.nextAt !== null && r.nextAt > now ? (r.held ? r.nextAt : Math.min(r.nextAt, now + this.pollMs)) : now + this.pollMs;
      // Changes in, in the same round (a paused connection is left alone by both), once caught up
      // only every readEveryMs: a read costs requests of the same limit the activities need.
      if (this.reader && (this.readDue.get(id) ?? 0) <= now) {
        const read = await this.reader.read(id);
        this.o.onRead?.(id, read);
        const readNext = read.nextAt !== null && read.nextAt > now ? read.nextAt : now + this.readEveryMs;
        this.readDue.set(id, readNext);
        next = Math.min(next, readNext);
      }
      this.due.set(id, next);
      await this.writer.saveWindow(id);
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
