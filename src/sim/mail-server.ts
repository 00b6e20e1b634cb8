/**
 * The simulated mail provider: what actually left each mailbox, as the outside world saw it.
 *
 * Every message the transport hands over is delivered (to the prospect) and filed in the sending
 * mailbox's Sent folder, where a search by Message-ID finds it once the provider has indexed it
 * (`visibleAt`: IMAP APPEND after SMTP, Gmail's and Graph's index lag). The at-most-once check
 * counts these deliveries, never the database: a step recorded once but delivered twice is a
 * failure, and so is one delivered after its enrollment's stop was committed.
 */
export interface Delivery {
  /** Order of delivery in the run. */
  n: number;
  mailboxId: string;
  messageId: string;
  requestId: string;
  enrollmentId: string;
  stepId: string;
  to: string;
  at: number;
  visibleAt: number;
  /** The journal's highest event id when the message was handed over: stops at or below it were committed before. */
  journalMark: number;
}

export class SimMailServer {
  readonly deliveries: Delivery[] = [];
  private readonly sent = new Map<string, Delivery[]>();

  deliver(d: Omit<Delivery, 'n'>): Delivery {
    const full = { ...d, n: this.deliveries.length };
    this.deliveries.push(full);
    const folder = this.sent.get(d.mailboxId) ?? [];
    folder.push(full);
    this.sent.set(d.mailboxId, folder);
    return full;
  }

  /** A search of the mailbox's Sent folder by Message-ID, as the provider answers it at `now`. */
  findInSent(mailboxId: string, messageId: string, now: number): Delivery | undefined {
    return (this.sent.get(mailboxId) ?? []).find((d) => d.messageId === messageId && d.visibleAt <= now);
  }

  sentFolder(mailboxId: string): readonly Delivery[] {
    return this.sent.get(mailboxId) ?? [];
  }
}
