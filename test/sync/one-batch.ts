import type { MailboxSync, SyncBatch } from '../../src/mailbox/sync/source.ts';

/** A sync connector for pool tests: hands out one batch, once, then nothing. */
export class OneBatch implements MailboxSync {
  constructor(private batch: SyncBatch | null) {}
  async *pull(): AsyncIterable<SyncBatch> {
    const b = this.batch;
    this.batch = null;
    if (b) yield b;
  }
  async close(): Promise<void> {}
}
