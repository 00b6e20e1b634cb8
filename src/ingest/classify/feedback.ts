import { headerValue, type Classification, type ParsedMail } from '../types.ts';
import { originalMessageId as originalOf, originalRecipients } from './bounce/original.ts';
import { sesNotification } from './bounce/ses-notification.ts';

/**
 * ARF complaint reports (RFC 5965): a message/feedback-report part with Feedback-Type, the
 * complained-about recipient (Original-Rcpt-To, else Removal-Recipient) and a copy of the
 * original message whose Message-ID threads the complaint to the send. SES complaint
 * notifications carry the same facts as JSON.
 */

function field(text: string, name: string): string | null {
  const m = new RegExp(`^${name}\\s*:\\s*(.+)$`, 'im').exec(text);
  return m ? m[1]!.trim() : null;
}

function address(value: string | null): string | null {
  // A field's value is one line of a report part (up to a megabyte): an address sits in its
  // first characters, and the search is quadratic in what it is given.
  const m = value && /([^\s<>;:"]+@[^\s<>;"]+)/.exec(value.slice(0, 1000));
  return m ? m[1]!.toLowerCase() : null;
}

export function classifyFeedback(mail: ParsedMail): Classification | null {
  const report = mail.parts.find((p) => p.mimeType === 'message/feedback-report' && p.text !== null);
  const isArf = report !== undefined || /report-type="?feedback-report/.test(mail.contentType);
  if (isArf) {
    const text = report?.text ?? mail.text;
    const type = (field(text, 'feedback-type') ?? 'abuse').toLowerCase();
    // Without Original-Rcpt-To (many providers redact it), the returned copy's To: is the complainant.
    const recipient = address(field(text, 'original-rcpt-to')) ?? address(field(text, 'removal-recipient')) ?? originalRecipients(mail)[0] ?? null;
    const originalMessageId = originalOf(mail);
    return {
      label: 'feedback',
      confidence: 0.99,
      reason: `ARF feedback report: Feedback-Type ${type}${recipient ? ` for ${recipient}` : ''}`,
      rung: 'feedback',
      feedback: { type, recipient, originalMessageId },
    };
  }
  // Apple Mail's "unsubscribe" button mails the list with this header: an opt-out complaint.
  if (/^\s*true\s*$/i.test(headerValue(mail, 'x-apple-unsubscribe') ?? '')) {
    const recipient = mail.from?.address || null;
    return { label: 'feedback', confidence: 0.95, reason: 'X-Apple-Unsubscribe: true (Apple Mail unsubscribe)', rung: 'feedback', feedback: { type: 'opt-out', recipient, originalMessageId: mail.inReplyTo } };
  }
  const ses = sesNotification(mail.text);
  if (ses?.type === 'Complaint') {
    const recipient = ses.recipients[0]?.address ?? null;
    const type = ses.subtype ?? 'abuse';
    return { label: 'feedback', confidence: 0.95, reason: `SES complaint notification: ${type}${recipient ? ` for ${recipient}` : ''}`, rung: 'feedback', feedback: { type, recipient, originalMessageId: ses.originalMessageId } };
  }
  return null;
}
