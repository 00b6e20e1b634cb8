import type { MailboxSync, SyncBatch } from '../../src/mailbox/sync/source.ts';

/**
 * A sync connector for pool tests: hands out one batch, once, then nothing. With `after`, the
 * batch is handed out only once that promise settles, so that a test can look at the state the
 * pool is in before the batch's work begins (a batch that spins the main thread would otherwise
 * run before the test's next query could).
 */
export class OneBatch implements MailboxSync {
  constructor(
    private batch: SyncBatch | null,
    private readonly after: Promise<unknown> = Promise.resolve(),
  ) {}
  async *pull(): AsyncIterable<SyncBatch> {
    const b = this.batch;
    this.batch = null;
    await this.after;
    if (b) yield b;
  }
  async close(): Promise<void> {}
}
