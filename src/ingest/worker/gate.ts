/**
 * A counting semaphore with two lanes: at most `limit` holders at once; waiters in the urgent lane
 * go before the others, each lane in arrival order. The sync pool passes one to all its loops so
 * that starting 2,000 mailboxes (or reconnecting them after a server restart) opens a bounded
 * number of connections at a time, while a pull that a push asked for (a reply may be waiting)
 * passes the queue of reconnects and first syncs.
 */
export class Gate {
  private active = 0;
  private readonly urgent: Array<() => void> = [];
  private readonly normal: Array<() => void> = [];

  constructor(readonly limit: number) {}

  async run<T>(fn: () => Promise<T>, urgent = false): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => (urgent ? this.urgent : this.normal).push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.urgent.shift() ?? this.normal.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Waiters now (for tests and metrics). */
  get waiting(): number {
    return this.urgent.length + this.normal.length;
  }
}
