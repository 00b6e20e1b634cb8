import { createHash } from 'node:crypto';

/**
 * The Message-ID of a sequence step: a function of the step's idempotency key (enrollment, step),
 * so that the same key always names the same message (promise 1) and a database restored to an
 * earlier point in time can recognise, in a mailbox's Sent folder, a step it has no record of
 * (sending/reconcile-sent.ts, docs/operations.md "Point-in-time recovery").
 *
 * Before this, the id was drawn at random when the request was first claimed: after a restore
 * the request row and its id were gone, and a copy in Sent could not be tied to anything.
 *
 * The local part is UUID-shaped (version 8, RFC 9562 §5.8: "custom") from SHA-256 over the two
 * ids: it says nothing a receiver could use (the ids are random and never leave Cadenza
 * otherwise), it is as unique as the key (128 bits less the 6 version and variant bits), and it
 * looks like every other Cadenza Message-ID. The domain is the sending mailbox's (RFC 5322
 * §3.6.4), as for every other message Cadenza writes.
 */
export function stepMessageId(mailboxEmail: string, enrollmentId: string, stepId: string): string {
  return `<${stepLocalPart(enrollmentId, stepId)}@${messageIdDomain(mailboxEmail)}>`;
}

/** The part before '@': what a restored database recomputes for each (enrollment, step) it holds. */
export function stepLocalPart(enrollmentId: string, stepId: string): string {
  const b = createHash('sha256').update(`cadenza-step:${enrollmentId.toLowerCase()}:${stepId.toLowerCase()}`).digest();
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The local part of '<left@right>', lower-cased; null for anything else. */
export function messageIdLocalPart(messageId: string): string | null {
  const m = /^\s*<([^@<>\s]+)@[^@<>\s]+>\s*$/.exec(messageId);
  return m ? m[1]!.toLowerCase() : null;
}

/** The domain a Message-ID of this mailbox carries (its address's domain). */
export function messageIdDomain(mailboxEmail: string): string {
  const at = mailboxEmail.lastIndexOf('@');
  return at >= 0 ? mailboxEmail.slice(at + 1).toLowerCase() : 'cadenza.invalid';
}
