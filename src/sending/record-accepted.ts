import type { Logger } from '../common/logger.ts';
import type { RecipientBounce } from '../mailbox/connectors/outcomes.ts';
import { retryTransient } from '../store/transient.ts';
import { recordSent, recordSentWithBounces, type Claim, type OutboxDeps, type SentDetails } from './outbox.ts';
import type { SentRecorder } from './sent-recorder.ts';

export interface RecordAcceptedDeps extends OutboxDeps {
  /** The process's group commit (sent-recorder.ts); absent: the send on its own (recordSent). */
  recorder?: SentRecorder | undefined;
  /** How long database errors that a failover brings are retried (transient.ts). Default 60 s. */
  recordRetryMs?: number | undefined;
  log?: Logger | undefined;
}

/**
 * Records a send the server accepted. The server has the message, so its record must survive a
 * failover: a transaction whose COMMIT got no answer may have committed, and "failed" does not
 * mean "not done". The record is tried again through transient errors, and each try re-reads
 * before it writes (outbox mark-sent marks only a request still in flight, or unknown, under this
 * Message-ID; one already marked is left as it is, and its step_sent is not applied twice).
 * Past the retries it throws with the request still in flight (or already sent): the send loop
 * then makes it unknown (sender-pool.ts), to be settled from the Sent folder, never queued again
 * on a guess. Resolves true when this call marked it, false when an earlier try had.
 */
export async function recordAccepted(d: RecordAcceptedDeps, claim: Claim, sentAt: number, details: SentDetails, bounced: RecipientBounce[] = []): Promise<boolean> {
  let marked = false;
  await retryTransient(
    async () => {
      // The send and the bounces of recipients refused beside it: one transaction.
      const now = bounced.length
        ? await recordSentWithBounces(d, claim, sentAt, details, bounced)
        : d.recorder
          ? await d.recorder.record({ claim, sentAt, details })
          : await recordSent(d, claim, sentAt, details);
      marked ||= now;
    },
    { clock: d.clock, withinMs: d.recordRetryMs ?? 60_000, onRetry: (e) => d.log?.warn({ err: e, requestId: claim.requestId }, 'recording a sent message failed; trying again') },
  );
  return marked;
}
