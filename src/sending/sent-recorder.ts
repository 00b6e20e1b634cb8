import { recordSent, recordSentBatch, type OutboxDeps, type RecordedSend } from './outbox.ts';

/**
 * Group commit for accepted sends: the mailbox loops of one sender process hand their accepted
 * sends here, and each waits until its send is recorded, as with recordSent. The first send is
 * recorded at once; sends accepted while a transaction is committing wait for it and then go
 * together in the next one (outbox.recordSentBatch: one transaction, a few statements for all).
 * No send is held back on purpose, so a lone mailbox pays nothing; many mailboxes sending at once
 * share the transactions.
 *
 * Exactly once is unchanged: a send waits for its record in the same window as before (accepted,
 * not yet recorded; a crash there leaves it in flight, and the next owner's recoverInFlight makes
 * it unknown, to be settled from the Sent folder). A batch that fails is retried send by send
 * (recordSent), so one bad row does not fail the others.
 */
export class SentRecorder {
  private queue: Array<RecordedSend & { done: (recorded: boolean) => void; failed: (e: unknown) => void }> = [];
  private draining = false;

  constructor(
    private readonly deps: OutboxDeps,
    private readonly maxBatch = 64,
  ) {}

  /** Resolves once the send is recorded: true, or false when it already was (recordSent). */
  record(send: RecordedSend): Promise<boolean> {
    return new Promise<boolean>((done, failed) => {
      this.queue.push({ ...send, done, failed });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const recorded = await recordSentBatch(this.deps, batch);
          batch.forEach((b, i) => b.done(recorded[i]!));
        } catch {
          for (const b of batch) {
            try {
              b.done(await recordSent(this.deps, b.claim, b.sentAt, b.details));
            } catch (e) {
              b.failed(e);
            }
          }
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
