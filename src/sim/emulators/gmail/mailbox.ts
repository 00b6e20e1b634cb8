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
  /** Emulator clock, for age-based retention. */
  at: number;
}

export class GmailMailbox {
  /** In insertion order: oldest first. */
  readonly messages = new Map<string, GmailStoredMessage>();
  readonly threads = new Map<string, string[]>();
  /** Retained history, oldest first; older records were pruned (see retainedFrom). */
  readonly history: HistoryRecord[] = [];
  historyId: number;
  /**
   * The oldest startHistoryId history.list still serves: a record with id r was pruned, so a
   * client starting before r would miss it and gets the documented 404 instead.
   */
  retainedFrom: number;
  /** Called after every change, with the new historyId (push notifications hang here). */
  readonly listeners: Array<(historyId: number, change: HistoryChange) => void> = [];

  constructor(
    readonly address: string,
    private readonly newId: () => string,
    startHistoryId: number,
    private readonly clock: { now(): number },
  ) {
    this.historyId = startHistoryId;
    this.retainedFrom = startHistoryId;
  }

  private bump(change: HistoryChange): number {
    // Gaps: Gmail's historyIds are increasing, not consecutive (guides/sync).
    this.historyId += 1 + (this.history.length % 3);
    this.history.push({ id: this.historyId, change, at: this.clock.now() });
    return this.historyId;
  }

  private changed(change: HistoryChange): void {
    for (const l of this.listeners) l(this.historyId, change);
  }

  /** Drops records older than maxAgeMs (Gmail keeps history "typically at least a week, sometimes only hours"). */
  prune(maxAgeMs: number): void {
    const cutoff = this.clock.now() - maxAgeMs;
    let n = 0;
    while (n < this.history.length && this.history[n]!.at < cutoff) n++;
    if (n === 0) return;
    this.retainedFrom = Math.max(this.retainedFrom, this.history[n - 1]!.id);
    this.history.splice(0, n);
  }

  /** Test hook: forget all history so far; any stored id older than the current one gets a 404. */
  expireHistory(): void {
    this.retainedFrom = this.historyId;
    this.history.length = 0;
  }

  /** Adds and removes labels (moving between INBOX and SPAM), logged as labelAdded/labelRemoved. */
  modifyLabels(id: string, add: string[], remove: string[]): void {
    const m = this.messages.get(id);
    if (!m) throw new Error(`gmail emulator: no message ${id}`);
    const added = add.filter((l) => !m.labelIds.has(l));
    const removed = remove.filter((l) => m.labelIds.has(l));
    for (const l of added) m.labelIds.add(l);
    for (const l of removed) m.labelIds.delete(l);
    if (added.length) {
      m.historyId = this.bump({ type: 'labelAdded', messageId: id, labelIds: added });
      this.changed(this.history[this.history.length - 1]!.change);
    }
    if (removed.length) {
      m.historyId = this.bump({ type: 'labelRemoved', messageId: id, labelIds: removed });
      this.changed(this.history[this.history.length - 1]!.change);
    }
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
    this.changed({ type: 'messageAdded', messageId: id });
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
