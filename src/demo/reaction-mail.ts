import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import MimeNode from 'nodemailer/lib/mime-node/index.js';
import type { Random } from '../common/random.ts';
import type { PersonaKind } from './personas.ts';

/**
 * The mail a simulated prospect's side sends back, as their mail client, their autoresponder or
 * their receiving server writes it: a reply threaded to ours (In-Reply-To, References, "Re:"), an
 * out-of-office note with a return date, or an RFC 3464 delivery status report quoting our
 * headers. Built with nodemailer's MIME builder; what classifies it is the real ingestion ladder.
 */

export interface OurMail {
  messageId: string;
  subject: string;
  /** The rep's address (our From). */
  from: string;
  /** The prospect's address (our To). */
  to: string;
  references: string[];
  /** Our message as sent, for the headers a bounce quotes. */
  raw: Buffer;
}

export interface Prospect {
  firstName: string;
  lastName: string;
  company: string;
}

const answers: Record<'interested' | 'not_interested' | 'question' | 'unsubscribe', readonly string[]> = {
  interested: [
    "Hi,\n\nThanks for reaching out, the timing is actually good. We're reviewing how we run outbound this quarter. Could we talk Thursday afternoon?\n\nBest,",
    "Hello,\n\nInteresting. Yes, I'd like to see a demo. Send me a couple of slots next week and I'll loop in our RevOps lead.\n\nThanks,",
    "Hi there,\n\nSounds relevant for us. Happy to set up a 20-minute call; what does your calendar look like?\n\nCheers,",
  ],
  not_interested: [
    "Hi,\n\nThanks, but we're not interested at the moment. We signed with another vendor last month.\n\nRegards,",
    "Hello,\n\nNot a fit for us right now, we have no budget for this until next year.\n\nBest,",
    "Hi,\n\nWe're all set on this front, thanks anyway.\n\n",
  ],
  question: [
    "Hi,\n\nBefore we talk: does this work with Microsoft 365 mailboxes, and how do you handle replies that land in shared inboxes?\n\nThanks,",
    "Hello,\n\nWhat does pricing look like for a team of 12 reps? And is there a self-hosted option?\n\nBest,",
    "Hi,\n\nQuick question: can it pause a sequence when someone is on holiday? How does that work?\n\nRegards,",
  ],
  unsubscribe: [
    "Please remove me from your mailing list.\n\n",
    "Hi,\n\nPlease stop emailing me. Unsubscribe.\n\n",
    "Take me off your list, thanks.\n\n",
  ],
};

function pick<T>(r: Random, xs: readonly T[]): T {
  return xs[r.int(0, xs.length - 1)]!;
}

function reSubject(subject: string): string {
  return /^re:/i.test(subject) ? subject : `Re: ${subject}`;
}

/** "> " before each line of ours, as a mail client quotes the message it answers. */
function quoted(our: OurMail, at: number, body: string): string {
  const when = new Date(at).toUTCString();
  return `On ${when}, <${our.from}> wrote:\n${body.split('\n').map((l) => `> ${l}`).join('\n')}\n`;
}

function composer(o: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new MailComposer({ ...o, disableFileAccess: true, disableUrlAccess: true }).compile().build();
}

/** A person's answer: interested, not interested, a question, or a request to be removed. */
export function personReply(r: Random, kind: 'interested' | 'not_interested' | 'question' | 'unsubscribe', o: { our: OurMail; who: Prospect; at: number; sentAt: number; messageId: string; ourText: string }): Promise<Buffer> {
  const text = `${pick(r, answers[kind])}${kind === 'unsubscribe' ? '' : o.who.firstName}\n\n${quoted(o.our, o.sentAt, o.ourText)}`;
  return composer({
    from: { name: `${o.who.firstName} ${o.who.lastName}`, address: o.our.to },
    to: o.our.from,
    subject: reSubject(o.our.subject),
    messageId: o.messageId,
    inReplyTo: o.our.messageId,
    references: [...o.our.references, o.our.messageId],
    date: new Date(o.at),
    text,
  });
}

/** An autoresponder's note: "Automatic reply:", Auto-Submitted (RFC 3834), and the day they are back (`backAt`). */
export function outOfOfficeNote(o: { our: OurMail; who: Prospect; at: number; backAt: number; messageId: string }): Promise<Buffer> {
  const back = new Date(o.backAt).toLocaleDateString('en-GB', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  return composer({
    from: { name: `${o.who.firstName} ${o.who.lastName}`, address: o.our.to },
    to: o.our.from,
    subject: `Automatic reply: ${o.our.subject}`,
    messageId: o.messageId,
    inReplyTo: o.our.messageId,
    references: [o.our.messageId],
    date: new Date(o.at),
    headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' },
    text: `Thank you for your message.\n\nI am out of the office with limited access to email and will be back on ${back}. For urgent matters please contact office@${o.our.to.split('@')[1]}.\n\nKind regards,\n${o.who.firstName} ${o.who.lastName}\n${o.who.company}\n`,
  });
}

/** The receiving server's report that the address does not exist (RFC 3464, status 5.1.1). */
export function bounceReport(o: { our: OurMail; at: number; messageId: string }): Promise<Buffer> {
  const domain = o.our.to.split('@')[1]!;
  const mta = `mx1.${domain}`;
  const headerEnd = o.our.raw.indexOf('\r\n\r\n');
  const ourHeaders = o.our.raw.subarray(0, headerEnd < 0 ? o.our.raw.length : headerEnd).toString('utf8');
  const root = new MimeNode('multipart/report; report-type=delivery-status', { newline: 'windows' } as MimeNode.Options);
  root.setHeader({
    From: `Mail Delivery System <MAILER-DAEMON@${mta}>`,
    To: o.our.from,
    Subject: 'Undelivered Mail Returned to Sender',
    Date: new Date(o.at).toUTCString(),
    'Message-ID': o.messageId,
    'Auto-Submitted': 'auto-replied',
  });
  root
    .createChild('text/plain')
    .setHeader('Content-Transfer-Encoding', '7bit')
    .setContent(
      `This is the mail system at host ${mta}.\r\n\r\nI'm sorry to have to inform you that your message could not be delivered to one or more recipients.\r\n\r\n<${o.our.to}>: host ${mta} said: 550 5.1.1 <${o.our.to}>: Recipient address rejected: User unknown in virtual mailbox table\r\n`,
    );
  root
    .createChild('message/delivery-status')
    .setHeader('Content-Transfer-Encoding', '7bit')
    .setContent(
      `Reporting-MTA: dns; ${mta}\r\nArrival-Date: ${new Date(o.at).toUTCString()}\r\n\r\nFinal-Recipient: rfc822; ${o.our.to}\r\nOriginal-Recipient: rfc822;${o.our.to}\r\nAction: failed\r\nStatus: 5.1.1\r\nRemote-MTA: dns; ${mta}\r\nDiagnostic-Code: smtp; 550 5.1.1 <${o.our.to}>: Recipient address rejected: User unknown in virtual mailbox table\r\n`,
    );
  root.createChild('text/rfc822-headers').setHeader('Content-Transfer-Encoding', '7bit').setContent(`${ourHeaders}\r\n`);
  return root.build();
}

export type ReactionKind = Exclude<PersonaKind, 'silent'>;
