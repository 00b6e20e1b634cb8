import type { SentProof } from '../mailbox/connectors/outcomes.ts';

/**
 * The simulated mail provider: what actually left each mailbox, as the outside world saw it, and
 * what each mailbox's Sent folder shows.
 *
 * Deliveries are what reached the prospects. The at-most-once check counts these, never the
 * database: a step recorded once but delivered twice is a failure, and so is one delivered after
 * its enrollment's stop was committed.
 *
 * The Sent folder depends on the mailbox's transport and setting (SentMode), as the real ones do
 * (docs/architecture.md, "Exactly once"):
 *   smtp_server   the SMTP server files the copy once it accepted, visible after `visibleAt`
 *                 (serverSavesSent: true).
 *   smtp_cadenza  the server files nothing; the sender APPENDs a pending copy before the handover
 *                 and settles or removes it after the answer (serverSavesSent: false).
 *   gmail         messages.send files the copy in SENT as it accepts (index lag up to visibleAt).
 *   graph         sendMail's 202 saves a draft at once (a pending copy: accepted, not yet
 *                 submitted), which becomes the Sent Items copy at `visibleAt`.
 */
export type SentMode = 'smtp_server' | 'smtp_cadenza' | 'gmail' | 'graph';

export const sentModes: readonly SentMode[] = ['smtp_server', 'smtp_cadenza', 'gmail', 'graph'];

export function proofOf(mode: SentMode): SentProof {
  return mode === 'smtp_cadenza' ? 'copy_first' : 'provider_copy';
}

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

interface SentCopy {
  messageId: string;
  at: number;
  /** When a search first finds it. */
  visibleAt: number;
  /** Cadenza's pending keyword still on it (smtp_cadenza), or a Graph draft before `settledAt`. */
  pending: boolean;
  settledAt: number | null;
}

export class SimMailServer {
  readonly deliveries: Delivery[] = [];
  private readonly sent = new Map<string, Delivery[]>();
  private readonly inbox = new Map<string, Landed[]>();
  private readonly copies = new Map<string, SentCopy[]>();
  private readonly modes = new Map<string, SentMode>();

  setMode(mailboxId: string, mode: SentMode): void {
    this.modes.set(mailboxId, mode);
  }

  modeOf(mailboxId: string): SentMode {
    return this.modes.get(mailboxId) ?? 'smtp_server';
  }

  deliver(d: Omit<Delivery, 'n'>): Delivery {
    const full = { ...d, n: this.deliveries.length };
    this.deliveries.push(full);
    const folder = this.sent.get(d.mailboxId) ?? [];
    folder.push(full);
    this.sent.set(d.mailboxId, folder);
    const mode = this.modeOf(d.mailboxId);
    if (mode === 'graph') this.folder(d.mailboxId).push({ messageId: d.messageId, at: d.at, visibleAt: d.at, pending: true, settledAt: d.visibleAt });
    else if (mode !== 'smtp_cadenza') this.folder(d.mailboxId).push({ messageId: d.messageId, at: d.at, visibleAt: d.visibleAt, pending: false, settledAt: null });
    return full;
  }

  /** smtp_cadenza: the pending copy APPENDed before the handover (visible at once: one IMAP server). */
  appendPending(mailboxId: string, messageId: string, at: number): void {
    this.folder(mailboxId).push({ messageId, at, visibleAt: at, pending: true, settledAt: null });
  }

  /** smtp_cadenza, after the 250: the pending keyword removed. */
  settle(mailboxId: string, messageId: string): void {
    for (const c of this.folder(mailboxId)) if (c.messageId === messageId) c.pending = false;
  }

  /** smtp_cadenza, after a certain refusal: the pending copy removed. */
  remove(mailboxId: string, messageId: string): void {
    const f = this.folder(mailboxId);
    this.copies.set(mailboxId, f.filter((c) => !(c.messageId === messageId && c.pending)));
  }

  /** A search of the mailbox's Sent folder by Message-ID, as the provider answers it at `now`. */
  findInSent(mailboxId: string, messageId: string, now: number): { at: number; pending: boolean } | undefined {
    const hits = this.folder(mailboxId).filter((c) => c.messageId === messageId && c.visibleAt <= now);
    if (hits.length === 0) return undefined;
    const settled = hits.find((c) => !c.pending || (c.settledAt !== null && c.settledAt <= now));
    return settled ? { at: settled.at, pending: false } : { at: hits[0]!.at, pending: true };
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

  private folder(mailboxId: string): SentCopy[] {
    let f = this.copies.get(mailboxId);
    if (!f) this.copies.set(mailboxId, (f = []));
    return f;
  }
}
