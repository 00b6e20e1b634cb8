import { cadenzaError } from '../../common/errors.ts';

/**
 * Follow-ups are replies in the thread of the enrollment's first email (RFC 5322 §3.6.4):
 * In-Reply-To names the previous step's Message-ID, References the chain of earlier ones, and the
 * subject is "Re: <first subject>" unless the step sets its own. Gmail also threads by its own
 * threadId, which the caller carries through for the Gmail transport.
 */

export interface ThreadContext {
  /** The Message-IDs this enrollment has sent in this thread, oldest first ('<id@domain>'). */
  messageIds: readonly string[];
  /** The subject of the thread's first email. */
  firstSubject: string;
  /** Gmail's thread id of the earlier emails, when the mailbox is a Gmail one. */
  threadId?: string | null;
}

export interface ThreadHeaders {
  subject: string;
  inReplyTo: string | null;
  references: string[];
  threadId: string | null;
}

/**
 * References are kept to the first Message-ID and the most recent ones, as RFC 5322 §3.6.4 allows
 * and mail clients do (Thunderbird keeps 21): the first and the parent are what threading needs,
 * and a header of 50 ids is noise that some filters score.
 */
export const MAX_REFERENCES = 20;

const MSG_ID = /^<[^<>\s@]+@[^<>\s@]+>$/;

export function isMessageId(s: string): boolean {
  return MSG_ID.test(s);
}

/** "Re: " is added once: a first subject that already reads "Re: …" or "RE: …" is kept as it is. */
export function replySubject(first: string): string {
  const s = first.replace(/\s+/gu, ' ').trim();
  return /^re\s*:/i.test(s) ? s : `Re: ${s}`;
}

export function threadHeaders(thread: ThreadContext | null | undefined, ownSubject: string | null): ThreadHeaders {
  const ids = thread?.messageIds ?? [];
  for (const id of ids) {
    if (!isMessageId(id)) throw cadenzaError('INVALID_INPUT', `thread Message-ID ${JSON.stringify(id)} is not of the form <id@domain>`, { messageId: id });
  }
  if (ids.length === 0) {
    if (ownSubject === null) throw cadenzaError('INVALID_INPUT', 'the first email of a thread needs a subject');
    return { subject: ownSubject, inReplyTo: null, references: [], threadId: null };
  }
  const references = ids.length <= MAX_REFERENCES ? [...ids] : [ids[0]!, ...ids.slice(ids.length - (MAX_REFERENCES - 1))];
  const subject = ownSubject ?? replySubject(thread!.firstSubject);
  if (subject.trim() === '') throw cadenzaError('INVALID_INPUT', 'a follow-up without its own subject needs the first subject of its thread');
  return { subject, inReplyTo: ids[ids.length - 1]!, references, threadId: thread?.threadId ?? null };
}
