import type { Clock } from '../../../common/clock.ts';
import type { ParsedMessage } from '../mime.ts';
import { GraphMailbox, type GraphStoredMessage } from './mailbox.ts';

/**
 * Every mailbox of one Graph emulator and what moves mail between them. sendMail saves a draft and
 * answers 202; the submission completes `sentItemsDelayMs` later (emulator clock): the item moves
 * to Sent Items, stops being a draft, gets its sentDateTime, and a copy reaches any recipient
 * mailbox emulated here (concepts/outlook-things-to-know-about-send-mail.md).
 */
export class GraphStore {
  private readonly boxes = new Map<string, GraphMailbox>();
  private seq = 0;
  /** How long after the 202 the Sent copy appears. */
  sentItemsDelayMs = 0;

  constructor(readonly clock: Clock) {}

  addUser(address: string): GraphMailbox {
    const key = address.toLowerCase();
    let mb = this.boxes.get(key);
    if (!mb) {
      mb = new GraphMailbox(key, () => ++this.seq);
      this.boxes.set(key, mb);
      for (const f of this.onNewMailbox) f(mb);
    }
    return mb;
  }

  mailbox(address: string): GraphMailbox | undefined {
    return this.boxes.get(address.toLowerCase());
  }

  sendMail(from: GraphMailbox, raw: Buffer, parsed: ParsedMessage, opts: { lost?: boolean } = {}): GraphStoredMessage {
    const now = this.clock.now();
    const m = from.add({
      folder: 'drafts',
      raw,
      parsed,
      internetMessageId: parsed.messageId ?? `<emu-${now}-${from.messages.length}@emulator.prod.outlook.test>`,
      isDraft: true,
      isRead: true,
      createdAt: now,
      sentAt: null,
      receivedAt: now,
      submitAt: now + this.sentItemsDelayMs,
      lost: opts.lost,
    });
    this.settle();
    return m;
  }

  /** Called for every mailbox created (the emulator hangs change notifications on each). */
  readonly onNewMailbox: Array<(mb: GraphMailbox) => void> = [];

  /**
   * Mail from outside arriving in `to`'s Inbox (or Junk Email: the filter took it for spam);
   * `receivedAt` back-dates it (mail older than a resync window).
   */
  deliver(to: GraphMailbox, raw: Buffer, parsed: ParsedMessage, opts: { folder?: 'inbox' | 'junkemail'; receivedAt?: number } = {}): GraphStoredMessage {
    this.settle();
    const now = opts.receivedAt ?? this.clock.now();
    return to.add({
      folder: opts.folder ?? 'inbox',
      raw,
      parsed,
      internetMessageId: parsed.messageId ?? `<emu-in-${now}-${to.messages.length}@emulator.test>`,
      isDraft: false,
      isRead: false,
      createdAt: now,
      sentAt: parsed.date ? Date.parse(parsed.date) || now : now,
      receivedAt: now,
      submitAt: null,
    });
  }

  /** Completes every submission whose time has come. Every route calls it first. */
  settle(): void {
    const now = this.clock.now();
    for (const mb of this.boxes.values()) {
      for (const m of mb.messages) {
        if (m.submitAt === null || m.lost || m.submitAt > now) continue;
        const at = m.submitAt;
        m.submitAt = null;
        m.isDraft = false;
        m.sentAt = at;
        m.receivedAt = at;
        mb.move(m, 'sentitems', at);
        const recipients = new Set([...m.parsed.to, ...m.parsed.cc, ...m.parsed.bcc].map((a) => a.toLowerCase()));
        for (const r of recipients) {
          const to = this.boxes.get(r);
          if (!to) continue;
          to.add({
            folder: 'inbox',
            raw: m.raw,
            parsed: m.parsed,
            internetMessageId: m.internetMessageId,
            isDraft: false,
            isRead: false,
            createdAt: at,
            sentAt: at,
            receivedAt: at,
            submitAt: null,
          });
        }
      }
    }
  }
}
