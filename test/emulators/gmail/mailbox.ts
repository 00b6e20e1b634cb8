import type { ParsedMessage } from '../mime.ts';
import { baseSubject } from '../mime.ts';

/**
 * One emulated Gmail mailbox: messages with Gmail's ids, threads and labels, and the history
 * counter (historyId rises with every change, with gaps, as Gmail's does). The history log is
 * kept from the start so that history.list can be served from it later without changing how
 * messages are stored.
 */
export interface GmailStoredMessage {
  id: string;
  threadId: string;
  labelIds: Set<string>;
  /** ms since the epoch. */
  internalDate: number;
  historyId: number;
  raw: Buffer;
  parsed: ParsedMessage;
}

export type HistoryChange =
  | { type: 'messageAdded'; messageId: string }
  | { type: 'messageDeleted'; messageId: string }
  | { type: 'labelAdded'; messageId: string; labelIds: string[] }
  | { type: 'labelRemoved'; messageId: string; labelIds: string[] };

export interface HistoryRecord {
  id: number;
  change: HistoryChange;
}

export class GmailMailbox {
  /** In insertion order: oldest first. */
  readonly messages = new Map<string, GmailStoredMessage>();
  readonly threads = new Map<string, string[]>();
  readonly history: HistoryRecord[] = [];
  historyId: number;

  constructor(
    readonly address: string,
    private readonly newId: () => string,
    startHistoryId: number,
  ) {
    this.historyId = startHistoryId;
  }

  private bump(change: HistoryChange): number {
    // Gaps: Gmail's historyIds are increasing, not consecutive (guides/sync).
    this.historyId += 1 + (this.history.length % 3);
    this.history.push({ id: this.historyId, change });
    return this.historyId;
  }

  insert(raw: Buffer, parsed: ParsedMessage, labelIds: string[], threadId: string | null, internalDate: number): GmailStoredMessage {
    const id = this.newId();
    const tid = threadId ?? id; // a new thread takes its first message's id, as Gmail's do
    const m: GmailStoredMessage = { id, threadId: tid, labelIds: new Set(labelIds), internalDate, historyId: 0, raw, parsed };
    this.messages.set(id, m);
    const t = this.threads.get(tid) ?? [];
    t.push(id);
    this.threads.set(tid, t);
    m.historyId = this.bump({ type: 'messageAdded', messageId: id });
    return m;
  }

  /**
   * The thread a message joins by its headers: one whose messages it references (In-Reply-To,
   * References) and whose subject it shares (guides/threads: "the Subject headers must match").
   */
  threadByHeaders(parsed: ParsedMessage): string | null {
    const refs = new Set([...(parsed.inReplyTo ? [parsed.inReplyTo] : []), ...parsed.references]);
    if (refs.size === 0) return null;
    const subject = baseSubject(parsed.subject);
    for (const m of [...this.messages.values()].reverse()) {
      if (m.parsed.messageId && refs.has(m.parsed.messageId) && baseSubject(m.parsed.subject) === subject) return m.threadId;
    }
    return null;
  }

  /** True when the message may join thread `threadId` (References/In-Reply-To to one of its messages, same subject). */
  mayJoin(threadId: string, parsed: ParsedMessage): boolean {
    const ids = this.threads.get(threadId);
    if (!ids) return false;
    const refs = new Set([...(parsed.inReplyTo ? [parsed.inReplyTo] : []), ...parsed.references]);
    const subject = baseSubject(parsed.subject);
    return ids.some((id) => {
      const m = this.messages.get(id)!;
      return m.parsed.messageId !== null && refs.has(m.parsed.messageId) && baseSubject(m.parsed.subject) === subject;
    });
  }

  /** Every message whose Message-ID header is `messageId` (a test's view; duplicates included). */
  byMessageId(messageId: string): GmailStoredMessage[] {
    const want = normalizeMsgId(messageId);
    return [...this.messages.values()].filter((m) => m.parsed.messageId !== null && normalizeMsgId(m.parsed.messageId) === want);
  }

  thread(threadId: string): GmailStoredMessage[] {
    return (this.threads.get(threadId) ?? []).map((id) => this.messages.get(id)!);
  }
}

/** Gmail's rfc822msgid: matches with or without the angle brackets. */
export function normalizeMsgId(id: string): string {
  return id.trim().replace(/^<|>$/g, '').toLowerCase();
}
