/**
 * The shapes the ingestion pipeline passes between its stages:
 *
 *   raw bytes ──parseMail──► ParsedMail ──classify──► Classification ──thread + act──► signals
 *
 * Declared here, by the pipeline that uses them (STYLE habit 8), so that the parser, the
 * classifier's rungs and the pipeline can be written and tested apart.
 */

export interface MailAddress {
  /** Lower-cased as written; '' when the header held no usable address. */
  address: string;
  name: string;
}

/**
 * A part that is not the body text: attachments, and the machine-readable parts of reports
 * (message/delivery-status, message/rfc822 or text/rfc822-headers with the original message,
 * message/feedback-report, message/disposition-notification).
 */
export interface MailPart {
  /** Lower-cased, without parameters: 'message/delivery-status'. */
  mimeType: string;
  filename: string | null;
  disposition: string | null;
  /** Decoded size in bytes. */
  size: number;
  /**
   * The part as text (UTF-8, transfer-decoded) for text/* and message/* parts, cut at the
   * parser's per-part limit; null for binary parts.
   */
  text: string | null;
}

export interface ParsedMail {
  /** With angle brackets, as Cadenza stores Message-IDs: '<left@right>'; null when absent or unusable. */
  messageId: string | null;
  inReplyTo: string | null;
  /** Every Message-ID in References, oldest first, with angle brackets. */
  references: string[];
  subject: string;
  from: MailAddress | null;
  to: MailAddress[];
  cc: MailAddress[];
  replyTo: MailAddress[];
  /** The Return-Path address without brackets; '' for the null sender '<>' (bounces); null when absent. */
  returnPath: string | null;
  /** Date header as epoch ms, null when absent or unparseable. */
  date: number | null;
  /** Every top-level header in order, name lower-cased, value unfolded and decoded. */
  headers: Array<{ key: string; value: string }>;
  /** Top-level Content-Type, lower-cased, with parameters: 'multipart/report; report-type=delivery-status'. */
  contentType: string;
  /** The body as plain text: text/plain, else the HTML converted to text. */
  text: string;
  html: string | null;
  parts: MailPart[];
  /** Size of the raw message in bytes. */
  size: number;
}

/** First value of a header (name case-insensitive), or null. */
export function headerValue(mail: Pick<ParsedMail, 'headers'>, name: string): string | null {
  const key = name.toLowerCase();
  for (const h of mail.headers) if (h.key === key) return h.value;
  return null;
}

/** Every value of a header (name case-insensitive), in order. */
export function headerValues(mail: Pick<ParsedMail, 'headers'>, name: string): string[] {
  const key = name.toLowerCase();
  return mail.headers.filter((h) => h.key === key).map((h) => h.value);
}

export type MailLabel =
  | 'human_reply'
  | 'auto_reply' // out-of-office and other RFC 3834 automatic responses
  | 'auto_generated' // list mail, notifications: not a reply from the prospect, not a bounce
  | 'bounce'
  | 'delivery_report' // a DSN that reports success only (delivered/relayed/expanded, 2.x.x); a delay notice is a soft bounce
  | 'feedback' // ARF / RFC 5965 complaint report
  | 'unsubscribe_request'
  | 'challenge'; // challenge-response / whitelist requests

export type ReplyIntent = 'interested' | 'not_interested' | 'unsubscribe' | 'wrong_person' | 'referral' | 'question' | 'neutral';

export type BounceClass =
  | 'user_unknown'
  | 'mailbox_full'
  | 'domain_not_found'
  | 'blocked' // blocked / spam / reputation
  | 'policy' // policy, authentication (SPF/DKIM/DMARC), content filter
  | 'message_too_large'
  | 'user_disabled'
  | 'relay_denied'
  | 'network' // host unreachable, timeout, too many hops
  | 'other';

export interface BounceDetails {
  /** The failed recipient, lower-cased; null when the bounce does not say. */
  recipient: string | null;
  /** Every failed recipient (a DSN may report several). */
  recipients: string[];
  /** RFC 3463 enhanced status ('5.1.1'), null when neither given nor inferable. */
  status: string | null;
  /** SMTP reply code (550) when stated. */
  replyCode: number | null;
  hardSoft: 'hard' | 'soft';
  bounceClass: BounceClass;
  /** The remote server's diagnostic text, trimmed. */
  diagnostic: string | null;
  /** Message-ID of the bounced message when the report carries it (to thread the bounce). */
  originalMessageId: string | null;
}

export interface Classification {
  label: MailLabel;
  /** 0..1. Rules give fixed confidences; the model gives calibrated probabilities. */
  confidence: number;
  /** Why, for people: 'Auto-Submitted: auto-replied', 'DSN Status 5.1.1 for x@y', 'model: …'. */
  reason: string;
  /** Which rung decided: 'headers', 'bounce', 'out_of_office', 'model', 'llm', 'default'. */
  rung: string;
  bounce?: BounceDetails;
  /** For auto replies: the return date when stated (epoch ms, start of that day in UTC). */
  returnDate?: number | null;
  /** For human replies: the intent, when the model or rules decided one. */
  intent?: { intent: ReplyIntent; confidence: number; reason: string };
  /** For ARF feedback: 'abuse', 'opt-out', 'auth-failure', …; and the complained-about recipient. */
  feedback?: { type: string; recipient: string | null; originalMessageId: string | null };
}
