/**
 * A planned warmup mail as RFC 5322 bytes: its text written from its own fields under the pool key
 * (text/marker.ts), so what the receiver reads back from the headers (From and To with their
 * display names, Message-ID, In-Reply-To) regenerates the same text. Plain text, no tracking, no
 * List-Unsubscribe: one person writing to another. A reply continues the thread (In-Reply-To and
 * References are the mail it answers, the subject "Re: " and that mail's).
 */
import { createHash } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { cadenzaError } from '../../common/errors.ts';
import { isMessageId, replySubject } from '../../sending/compose/threading.ts';
import type { WarmupLanguage } from '../text/generate.ts';
import { writeWarmup } from '../text/marker.ts';

export interface WarmupMailToSend {
  messageId: string;
  /** The Message-ID answered (a reply); absent for a first mail. */
  inReplyTo?: string;
  /** For a reply: the subject of the mail answered. */
  answeredSubject?: string;
  from: { address: string; name: string };
  to: { address: string; name: string };
  language: WarmupLanguage;
  date: number;
}

/** The first word of a display name: what the text greets and signs with (receive.ts reads it the same way). */
export const firstName = (name: string | null | undefined) => (name ?? '').trim().split(/\s+/)[0] ?? '';

export async function composeWarmup(key: Buffer, m: WarmupMailToSend): Promise<{ raw: Buffer; envelope: { from: string; to: string[] }; subject: string }> {
  if (!isMessageId(m.messageId)) throw cadenzaError('INVALID_INPUT', `warmup Message-ID ${JSON.stringify(m.messageId)} is not of the form <id@domain>`);
  if (m.inReplyTo !== undefined && !isMessageId(m.inReplyTo)) throw cadenzaError('INVALID_INPUT', 'a warmup reply needs the Message-ID it answers', { inReplyTo: m.inReplyTo });
  const clean = (s: string) => s.replace(/[\r\n\t]+/g, ' ').trim();
  const fromName = clean(m.from.name);
  const toName = clean(m.to.name);
  const text = writeWarmup(key, m.language, {
    from: m.from.address,
    to: m.to.address,
    messageId: m.messageId,
    ...(m.inReplyTo ? { inReplyTo: m.inReplyTo } : {}),
    fromName: firstName(fromName),
    toName: firstName(toName),
  });
  const subject = m.inReplyTo ? replySubject(m.answeredSubject ?? '') : (text.subject ?? '');
  const addr = (name: string, address: string) => (name ? { name, address } : address);
  // baseBoundary and newline are read by MailComposer but missing from its typings (as in compose.ts).
  const options: Mail.Options & { baseBoundary: string; newline: string } = {
    messageId: m.messageId,
    date: new Date(m.date),
    from: addr(fromName, m.from.address),
    to: addr(toName, m.to.address),
    subject,
    ...(m.inReplyTo ? { inReplyTo: m.inReplyTo, references: [m.inReplyTo] } : {}),
    text: text.body,
    baseBoundary: createHash('sha256').update(m.messageId).digest('hex').slice(0, 24),
    newline: 'windows',
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  const raw = await new MailComposer(options).compile().build();
  return { raw, envelope: { from: m.from.address, to: [m.to.address] }, subject };
}
