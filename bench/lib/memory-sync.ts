import type { FetchedMessage, MailboxSync, PullOptions, SyncBatch, SyncCursor } from '../../src/mailbox/sync/source.ts';

/**
 * A mailbox's sync part that yields messages held in memory, in batches of `batchSize`, each with
 * a cursor (the count taken so far) the way a real connector yields its own: for benchmarks that
 * measure what the sync role does with mail, not the network (bench/imap-idle.ts measures that).
 * It has no watch: the loop pulls once, then waits for its reconciliation time.
 */
export class MemorySync implements MailboxSync {
  /** `run` names this set of messages in the cursor: a cursor of another run starts from the first. */
  constructor(
    private readonly messages: readonly FetchedMessage[],
    private readonly run: string,
  ) {}

  async *pull(cursor: SyncCursor | null, o: PullOptions = {}): AsyncIterable<SyncBatch> {
    const size = o.batchSize ?? 100;
    for (let at = cursor?.run === this.run && typeof cursor.n === 'number' ? cursor.n : 0; at < this.messages.length; at += size) {
      if (o.signal?.aborted) return;
      const messages = this.messages.slice(at, at + size);
      yield { messages, problems: [], cursor: { run: this.run, n: at + messages.length }, mode: 'incremental' };
    }
  }

  async close(): Promise<void> {}
}
