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

/** Mail that reached a sending mailbox's inbox (a prospect's reply), visible to a search at once. */
export interface Landed {
  /** The key the mailbox sync stores it under (message.provider_key). */
  key: string;
  mailboxId: string;
  enrollmentId: string;
  from: string;
  messageId: string;
  at: number;
}

export class SimMailServer {
  readonly deliveries: Delivery[] = [];
  private readonly sent = new Map<string, Delivery[]>();
  private readonly inbox = new Map<string, Landed[]>();

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

  /** A message lands in the mailbox's inbox now: searchable at once, read by the sync only later. */
  land(m: Omit<Landed, 'key'>): Landed {
    const list = this.inbox.get(m.mailboxId) ?? [];
    const full = { ...m, key: `sim-inbox:${m.mailboxId.slice(-6)}:${list.length + 1}` };
    list.push(full);
    this.inbox.set(m.mailboxId, list);
    return full;
  }

  /** The mailbox last look's search (Transport.recentMailFrom): mail from `from` received in [since, now]. */
  recentMail(mailboxId: string, from: string, since: number, now: number): Landed[] {
    return (this.inbox.get(mailboxId) ?? []).filter((m) => m.from.toLowerCase() === from.toLowerCase() && m.at >= since && m.at <= now);
  }

  landedFor(enrollmentId: string): Landed[] {
    return [...this.inbox.values()].flat().filter((m) => m.enrollmentId === enrollmentId);
  }

  sentFolder(mailboxId: string): readonly Delivery[] {
    return this.sent.get(mailboxId) ?? [];
  }
}
