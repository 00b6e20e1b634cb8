/**
 * Amazon SES event notifications delivered by mail (SNS e-mail subscriptions): a JSON body,
 * sometimes wrapped in an SNS envelope whose "Message" is the JSON again as a string. Relays that
 * send through SES forward these to the sender instead of a DSN.
 */

export interface SesRecipient {
  address: string;
  action: string | null;
  status: string | null;
  diagnostic: string | null;
}

export interface SesNotification {
  type: 'Bounce' | 'Complaint' | 'Delivery';
  /** bounceType (Permanent, Transient) or complaintFeedbackType (abuse, …). */
  subtype: string | null;
  recipients: SesRecipient[];
  originalMessageId: string | null;
}

type Json = Record<string, unknown>;

function parseJson(text: string): Json | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  const body = text.slice(start, end + 1);
  // Mail systems split lines over 998 octets as "!\n " (sendmail's convention).
  for (const candidate of [body, body.replace(/!\r?\n /g, '')]) {
    try {
      return JSON.parse(candidate) as Json;
    } catch {
      /* try the next form */
    }
  }
  return null;
}

export function sesNotification(text: string): SesNotification | null {
  if (!/notificationType|eventType/.test(text)) return null;
  let json = parseJson(text);
  if (json && typeof json.Message === 'string') json = parseJson(json.Message);
  if (!json) return null;
  const type = (json.notificationType ?? json.eventType) as string | undefined;
  if (type !== 'Bounce' && type !== 'Complaint' && type !== 'Delivery') return null;
  const mail = (json.mail ?? {}) as Json;
  const originalMessageId = typeof mail.messageId === 'string' ? `<${mail.messageId}>` : null;
  if (type === 'Bounce') {
    const b = (json.bounce ?? {}) as Json;
    const rs = (b.bouncedRecipients ?? []) as Json[];
    return {
      type,
      subtype: (b.bounceType as string) ?? null,
      recipients: rs.map((r) => ({ address: String(r.emailAddress ?? '').toLowerCase(), action: (r.action as string) ?? null, status: (r.status as string) ?? null, diagnostic: (r.diagnosticCode as string) ?? null })),
      originalMessageId,
    };
  }
  if (type === 'Complaint') {
    const c = (json.complaint ?? {}) as Json;
    const rs = (c.complainedRecipients ?? []) as Json[];
    return { type, subtype: (c.complaintFeedbackType as string) ?? null, recipients: rs.map((r) => ({ address: String(r.emailAddress ?? '').toLowerCase(), action: null, status: null, diagnostic: null })), originalMessageId };
  }
  const d = (json.delivery ?? {}) as Json;
  const rs = (d.recipients ?? []) as unknown[];
  return { type, subtype: null, recipients: rs.map((r) => ({ address: String(r).toLowerCase(), action: 'delivered', status: '2.6.0', diagnostic: (d.smtpResponse as string) ?? null })), originalMessageId };
}
