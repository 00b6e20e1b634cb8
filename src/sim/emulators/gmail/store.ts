import type { Clock } from '../../../common/clock.ts';
import type { ParsedMessage } from '../mime.ts';
import { GmailMailbox, type GmailStoredMessage } from './mailbox.ts';

/**
 * Every mailbox of one Gmail emulator, and what moves mail between them: a send files the message
 * in the sender's SENT (and delivers a copy to any recipient that is also emulated here, so a test
 * can have a prospect reply); mail from outside arrives through deliver().
 */
export class GmailStore {
  private readonly boxes = new Map<string, GmailMailbox>();
  private seq = 0;
  /** Called for every mailbox created (the emulator hangs push and retention on each). */
  readonly onNewMailbox: Array<(mb: GmailMailbox) => void> = [];

  constructor(readonly clock: Clock) {}

  /** Gmail message ids are 16 hex digits. */
  private newId = (): string => (0x18f0000000000000n + BigInt(++this.seq) * 0x1000n).toString(16);

  addUser(address: string): GmailMailbox {
    const key = address.toLowerCase();
    const existing = this.boxes.get(key);
    if (existing) return existing;
    const mb = new GmailMailbox(key, this.newId, 1000 + this.boxes.size * 100_000, this.clock);
    for (const f of this.onNewMailbox) f(mb);
    this.boxes.set(key, mb);
    return mb;
  }

  mailbox(address: string): GmailMailbox | undefined {
    return this.boxes.get(address.toLowerCase());
  }

  /**
   * users.messages.send's effect. Joins `threadId` only when the message may (mailbox.mayJoin);
   * otherwise, as Gmail does, it starts a thread of its own without saying so.
   */
  send(from: GmailMailbox, raw: Buffer, parsed: ParsedMessage, threadId: string | null): GmailStoredMessage {
    const now = this.clock.now();
    const recipients = new Set([...parsed.to, ...parsed.cc, ...parsed.bcc].map((a) => a.toLowerCase()));
    const labels = ['SENT'];
    // Mail to oneself is one message, in SENT and INBOX.
    if (recipients.has(from.address)) labels.push('INBOX', 'UNREAD');
    const tid = threadId !== null && from.mayJoin(threadId, parsed) ? threadId : null;
    const sent = from.insert(raw, parsed, labels, tid, now);
    for (const r of recipients) {
      const to = this.boxes.get(r);
      if (to && to !== from) to.insert(raw, parsed, ['INBOX', 'UNREAD'], to.threadByHeaders(parsed), now);
    }
    return sent;
  }

  /**
   * Mail from outside the emulator arriving in `to`'s INBOX (or SPAM: Gmail's filter took it for
   * spam), threaded by its headers; `internalDate` back-dates it (mail older than a resync window).
   */
  deliver(to: GmailMailbox, raw: Buffer, parsed: ParsedMessage, opts: { spam?: boolean; internalDate?: number } = {}): GmailStoredMessage {
    const labels = opts.spam ? ['SPAM', 'UNREAD'] : ['INBOX', 'UNREAD'];
    return to.insert(raw, parsed, labels, to.threadByHeaders(parsed), opts.internalDate ?? this.clock.now());
  }
}
