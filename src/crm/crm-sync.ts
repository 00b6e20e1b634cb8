import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import { runEvery, type Periodic } from '../common/periodic.ts';
import type { Random } from '../common/random.ts';
import type { Applied } from '../sequence/enrollment-service.ts';
import type { StopEngine } from '../sequence/suppress.ts';
import type { Store } from '../store/store.ts';
import { ChangeReader, type ReadResult } from './change-reader.ts';
import { openConnection, type TokenSealer } from './connections.ts';
import { makeConnector } from './connectors.ts';
import { CrmWriter, type DrainResult } from './writer.ts';

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
  onDrained?: (connectionId: string, r: DrainResult) => void;
  /** The enrollment engine: with it, connections whose CRM reads changes are read too (change-reader.ts). */
  engine?: StopEngine & { notify(applied: Applied[]): void };
  /** After a list enrollment enrolled someone (the scheduler's nudge). */
  onEnrolled?: () => void;
  onRead?: (connectionId: string, r: ReadResult) => void;
}

export class CrmSync {
  readonly writer: CrmWriter;
  readonly reader: ChangeReader | undefined;
  private readonly due = new Map<string, number>();
  private loop: Periodic | undefined;
  private readonly pollMs: number;

  constructor(private readonly o: CrmSyncOptions) {
    this.pollMs = o.pollMs ?? 2_000;
    this.writer = new CrmWriter({
      store: o.store,
      clock: o.clock,
      random: o.random,
      owner: o.owner,
      ...(o.log ? { log: o.log } : {}),
      connectorFor: async (id) => {
        const c = await openConnection(o.store.db, o.sealer, id);
        return { connector: makeConnector(c.kind, { baseUrl: c.baseUrl, token: c.token, clock: o.clock }), prepared: c.prepared };
      },
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
        connectorFor: async (id) => {
          const c = await openConnection(o.store.db, o.sealer, id);
          return makeConnector(c.kind, { baseUrl: c.baseUrl, token: c.token, clock: o.clock });
        },
      });
    }
  }

  /** One pass over the active connections. */
  async round(): Promise<void> {
    const now = this.o.clock.now();
    const active = await this.o.store.db.selectFrom('crm_connection').select('id').where('state', '=', 'active').execute();
    for (const { id } of active) {
      if ((this.due.get(id) ?? 0) > now) continue;
      const r = await this.writer.drain(id);
      this.o.onDrained?.(id, r);
      let next = r.nextAt !== null && r.nextAt > now ? r.nextAt : now + this.pollMs;
      // Changes in, in the same round (a paused connection is left alone by both).
      if (this.reader) {
        const read = await this.reader.read(id);
        this.o.onRead?.(id, read);
        next = Math.min(next, read.nextAt !== null && read.nextAt > now ? read.nextAt : now + this.pollMs);
      }
      this.due.set(id, next);
    }
  }

  start(): void {
    this.loop ??= runEvery(this.o.clock, this.pollMs, () => this.round(), (e) => this.o.log?.error({ err: e }, 'CRM sync round failed'));
  }

  nudge(): void {
    this.due.clear();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    this.loop = undefined;
  }
}
