/**
 * A counting semaphore: at most `limit` holders at once, the rest wait in arrival order. The sync
 * pool passes one to all its loops so that starting 2,000 mailboxes (or reconnecting them after a
 * server restart) opens a bounded number of connections at a time instead of all at once.
 */
export class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
