import { FairQueue } from '../../ops/fair-queue.ts';

export interface GateOptions {
  /**
   * Of `limit`, the places one key cannot take while other keys are known (default a quarter,
   * at least one): however many connections one workspace wants, the others find a place
   * free or freed next, never only behind its slowest first sync.
   */
  reserve?: number;
}

export interface GateRun {
  /** Passes the normal lane (a pull a push asked for: a reply may be waiting). */
  urgent?: boolean;
  /** Whose turn this is (the workspace): keys are served in turn, and capped while others are known. */
  key?: string;
}

/**
 * A counting semaphore with two lanes and a turn per key: at most `limit` holders at once; waiters
 * in the urgent lane go before the others; within a lane the keys (workspaces) are served in turn,
 * each key's waiters in arrival order; while more than one key is known (register), one key holds
 * at most `limit - reserve`. The sync pool passes one to all its loops so that starting 2,000
 * mailboxes (or reconnecting them after a server restart) opens a bounded number of connections
 * at a time, a pull that a push asked for passes the queue of reconnects and first syncs, and one
 * workspace's 20,000 first syncs do not starve another workspace's pulls (the noisy neighbour).
 */
export class Gate {
  private active = 0;
  private readonly urgent = new FairQueue<() => void>();
  private readonly normal = new FairQueue<() => void>();
  private readonly held = new Map<string, number>();
  private readonly known = new Map<string, number>();
  private readonly reserve: number;

  constructor(
    readonly limit: number,
    o: GateOptions = {},
  ) {
    this.reserve = Math.min(limit - 1, Math.max(1, o.reserve ?? Math.ceil(limit / 4)));
  }

  /** A key's user from now until the returned function is called (a mailbox loop of that workspace). */
  register(key: string): () => void {
    this.known.set(key, (this.known.get(key) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.known.get(key) ?? 1) - 1;
      if (n > 0) this.known.set(key, n);
      else this.known.delete(key);
      // Alone again, a key may take what the cap kept from it.
      this.dispatch();
    };
  }

  async run<T>(fn: () => Promise<T>, o: GateRun = {}): Promise<T> {
    const key = o.key ?? '';
    if (this.active < this.limit && this.fits(key)) this.take(key);
    else await new Promise<void>((resolve) => (o.urgent ? this.urgent : this.normal).push(key, resolve));
    try {
      return await fn();
    } finally {
      this.active--;
      const n = (this.held.get(key) ?? 1) - 1;
      if (n > 0) this.held.set(key, n);
      else this.held.delete(key);
      this.dispatch();
    }
  }

  /** Waiters now (for tests and metrics). */
  get waiting(): number {
    return this.urgent.length + this.normal.length;
  }

  /** Holders of one key now (for tests). */
  holding(key: string): number {
    return this.held.get(key) ?? 0;
  }

  private fits(key: string): boolean {
    const others = this.known.size - (this.known.has(key) ? 1 : 0);
    return others === 0 || (this.held.get(key) ?? 0) < this.limit - this.reserve;
  }

  private take(key: string): void {
    this.active++;
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
  }

  /** Hands free places to waiters, urgent first, keys in turn, skipping keys at their cap. */
  private dispatch(): void {
    const fits = (k: string) => this.fits(k);
    while (this.active < this.limit) {
      const next = this.urgent.shift(fits) ?? this.normal.shift(fits);
      if (!next) return;
      this.take(next.key);
      next.item();
    }
  }
}
