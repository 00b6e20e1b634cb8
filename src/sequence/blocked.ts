/**
 * Why an enrollment cannot progress, and what a person can do about it (issue 11: a mailbox with
 * an unreachable host left its enrollments at "Due —" with no reason anywhere). Pure: the facts
 * come from one query (enrollment-query.ts), and the API, the web app and `cadenza status` show
 * the same words.
 *
 * An enrollment that waits for something that will come by itself (its timer, a send that is
 * paced, a person's task) is not blocked; one that waits for something that cannot come until a
 * person acts (a failing or paused mailbox, no mailbox, a review) is.
 */
export type BlockedCode = 'no_mailbox' | 'mailbox_paused' | 'mailbox_removed' | 'sending_fails' | 'mailbox_not_verified' | 'needs_review' | 'overdue';

export interface Blocked {
  code: BlockedCode;
  /** Plain words: what is wrong. */
  reason: string;
  /** Plain words: what to do. */
  action: string;
  /** The technical detail (a server's answer), shown behind a disclosure. */
  detail: string | null;
}

export interface BlockedFacts {
  state: string;
  waitingFor: string | null;
  stateReason: string | null;
  dueAt: number | null;
  /** The next step's send request, when there is one. */
  request: { state: string; lastError: string | null; attempts: number } | null;
  mailbox: { email: string; health: string; healthReason: string | null; removed: boolean; verified: boolean } | null;
  now: number;
}

/** A timer this late means no scheduler is running (the scheduler fires due timers within seconds). */
export const OVERDUE_MS = 15 * 60_000;

export function blockedReason(f: BlockedFacts): Blocked | null {
  if (f.state === 'paused' && f.stateReason === 'needs review') {
    return { code: 'needs_review', reason: 'Paused until someone reads an answer Cadenza was unsure about.', action: 'Open the Inbox, read the message and confirm or relabel it.', detail: null };
  }
  if (f.state !== 'active') return null;
  const m = f.mailbox;
  if (f.waitingFor === 'send') {
    if (!m) return { code: 'no_mailbox', reason: 'No mailbox can send its next email.', action: "Connect a mailbox and add it to the sequence's mailboxes.", detail: null };
    if (m.removed) return { code: 'mailbox_removed', reason: `Its mailbox ${m.email} was removed.`, action: 'Move the enrollment to another mailbox of the sequence, or connect the mailbox again.', detail: null };
    if (m.health === 'paused' || m.health === 'error') {
      return { code: 'mailbox_paused', reason: `Its mailbox ${m.email} is paused, so nothing is sent from it.`, action: 'Fix what the Mailboxes page says about it, then resume the mailbox.', detail: m.healthReason };
    }
    const err = f.request?.state === 'queued' ? f.request.lastError : null;
    if (err && /^transient:|connect|timed? ?out|ECONN|ENOTFOUND|EHOSTUNREACH/i.test(err)) {
      return {
        code: 'sending_fails',
        reason: `Sending from ${m.email} keeps failing (${f.request!.attempts} ${f.request!.attempts === 1 ? 'try' : 'tries'} so far); Cadenza tries again later.`,
        action: "Check the mailbox's SMTP host, port and password on the Mailboxes page and use Test.",
        detail: err,
      };
    }
    if (!m.verified && (f.request?.attempts ?? 0) === 0) {
      return { code: 'mailbox_not_verified', reason: `Waiting to send from ${m.email}, whose connection was never tested.`, action: 'Test the mailbox on the Mailboxes page.', detail: null };
    }
    return null;
  }
  if (f.waitingFor === 'timer' && f.dueAt !== null && f.now - f.dueAt > OVERDUE_MS) {
    return { code: 'overdue', reason: 'Its next step is overdue: nothing has run it.', action: 'Make sure Cadenza is running (`cadenza start`, or the server with the scheduler role).', detail: null };
  }
  return null;
}
