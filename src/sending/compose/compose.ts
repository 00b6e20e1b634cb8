import { createHash } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { cadenzaError } from '../../common/errors.ts';
import { textToHtml } from '../../common/html.ts';
import type { SentDetails } from '../outbox.ts';
import { dkimSign, type DkimKey } from './dkim.ts';
import { threadHeaders, isMessageId, type ThreadContext } from './threading.ts';
import { insertPixel, rewriteLinks, type TrackedLink, type TrackingLinks, type UntrackedLink } from './tracking.ts';
import { listUnsubscribe, type ListUnsubscribe } from './unsubscribe.ts';

/**
 * Composes the MIME message of one sequence email with nodemailer's MailComposer:
 *
 * - Message-ID is the outbox's ('<id@mailbox-domain>', the same on every retry of the request, so
 *   receivers and a Sent-folder search see one message); composing never invents another.
 * - Date comes from the injected clock; From is the mailbox with its display name, To the lead
 *   with their name. MIME-Version is set by the composer.
 * - Text only by default (text/plain); with an HTML body, multipart/alternative with the text first.
 * - Follow-ups: In-Reply-To, References and "Re:" subject (threading.ts).
 * - List-Unsubscribe and List-Unsubscribe-Post on every email (unsubscribe.ts).
 * - Open pixel and click redirects only when the sequence turns them on, only in the HTML part.
 * - DKIM only for mail through Cadenza's own relay on a custom domain (dkim.ts).
 *
 * No custom X- header: Cadenza finds its own messages by Message-ID, and an unusual header is one
 * more fingerprint that filters learn to score as bulk mail.
 *
 * The MIME boundary is derived from the Message-ID rather than drawn at random, so that the bytes
 * depend only on the inputs (and the sealed tokens' nonces).
 */

export interface Address {
  address: string;
  name?: string | null;
}

export interface ComposeInput {
  /** '<id@domain>', from the outbox claim. */
  messageId: string;
  /** Epoch ms, from the injected clock. */
  date: number;
  /** The sending mailbox (display name from mailbox.display_name). */
  from: Address;
  /** The lead. */
  to: Address;
  /** A successful renderEmail result. */
  content: { subject: string | null; text: string; html?: string | null };
  /** The enrollment's earlier emails in this thread; absent for the first step. */
  thread?: ThreadContext | null;
  /** trackingLinks() for this send request: the unsubscribe link always, pixel and clicks when on. */
  links: TrackingLinks;
  /** Per sequence; both off by default. */
  track?: { opens?: boolean; clicks?: boolean };
  /** Only for mail through Cadenza's own relay on a custom domain. */
  dkim?: DkimKey | null;
}

export interface ComposedEmail {
  /** The RFC 5322 message, CRLF line ends, signed when dkim was given. */
  raw: Buffer;
  messageId: string;
  subject: string;
  inReplyTo: string | null;
  references: string[];
  /** Gmail's thread id of the earlier emails, for the Gmail transport; null otherwise. */
  threadId: string | null;
  /** SMTP envelope. */
  envelope: { from: string; to: string[] };
  listUnsubscribe: ListUnsubscribe;
  /** The links sent through the click redirect, with the index each token carries. */
  trackedLinks: TrackedLink[];
  /** Links click tracking left as written (too long for a token), with the reason. */
  untrackedLinks: UntrackedLink[];
  openPixel: boolean;
  dkimSigned: boolean;
  /** What outbox.recordSent stores with the message row. */
  sent: SentDetails;
}

// A deliberately plain check: the address was validated on import; this only keeps a broken one
// (spaces, angle brackets, line breaks) from being interpreted by the address parser.
const ADDRESS = /^[^\s<>()[\]\\,;:"@]+@[^\s<>()[\]\\,;:"@]+\.[^\s<>()[\]\\,;:"@]+$/;

function checkAddress(a: Address, role: string): { address: string; name: string } {
  if (!a || typeof a.address !== 'string' || !ADDRESS.test(a.address)) {
    throw cadenzaError('INVALID_INPUT', `${role} address ${JSON.stringify(a?.address)} is not a plain e-mail address`, { role });
  }
  return { address: a.address, name: (a.name ?? '').replace(/[\r\n\t]+/g, ' ').trim() };
}

/** "First Last" for the To header, or '' (then the bare address is used). */
export function leadDisplayName(lead: { first_name?: string | null; last_name?: string | null }): string {
  return [lead.first_name, lead.last_name].map((s) => (s ?? '').trim()).filter(Boolean).join(' ');
}

export async function composeEmail(input: ComposeInput): Promise<ComposedEmail> {
  if (!isMessageId(input.messageId)) {
    throw cadenzaError('INVALID_INPUT', `Message-ID ${JSON.stringify(input.messageId)} is not of the form <id@domain>`);
  }
  if (!Number.isFinite(input.date)) throw cadenzaError('INVALID_INPUT', 'date must be epoch milliseconds');
  const from = checkAddress(input.from, 'From');
  const to = checkAddress(input.to, 'To');
  const { content } = input;
  if (typeof content.text !== 'string' || content.text.trim() === '') throw cadenzaError('INVALID_INPUT', 'an email needs a text body');
  const t = threadHeaders(input.thread, content.subject);

  const unsub = listUnsubscribe(input.links, from.address);
  let html = content.html ?? null;
  // A pixel and redirects live in HTML: a tracked text-only step gets an HTML alternative made
  // from its text, and the text part stays as written (no redirect URLs in plain text).
  if ((html === null || html.trim() === '') && (input.track?.opens || input.track?.clicks)) html = textToHtml(content.text);
  let tracked: TrackedLink[] = [];
  let untracked: UntrackedLink[] = [];
  let pixel = false;
  if (html !== null && html.trim() !== '') {
    if (input.track?.clicks) {
      const r = rewriteLinks(html, input.links);
      html = r.html;
      tracked = r.tracked;
      untracked = r.untracked;
    }
    if (input.track?.opens) {
      html = insertPixel(html, input.links.pixelUrl());
      pixel = true;
    }
  } else {
    html = null;
  }

  // baseBoundary and newline are read by MailComposer (it passes them to each MimeNode) but missing from the typings.
  const options: Mail.Options & { baseBoundary: string; newline: string } = {
    messageId: input.messageId,
    date: new Date(input.date),
    from: from.name ? { name: from.name, address: from.address } : from.address,
    to: to.name ? { name: to.name, address: to.address } : to.address,
    subject: t.subject,
    ...(t.inReplyTo ? { inReplyTo: t.inReplyTo, references: t.references } : {}),
    text: content.text,
    ...(html !== null ? { html } : {}),
    headers: {
      // Prepared: the value is ASCII and must reach the wire as written (folded between the two URIs).
      'List-Unsubscribe': { prepared: true, value: unsub.listUnsubscribe.replace(', <mailto:', ',\r\n <mailto:') },
      'List-Unsubscribe-Post': { prepared: true, value: unsub.listUnsubscribePost },
    },
    baseBoundary: createHash('sha256').update(input.messageId).digest('hex').slice(0, 24),
    // CRLF everywhere (RFC 5322 §2.1): a template's bare LFs would otherwise reach the wire in
    // 7bit parts, where the Gmail and Graph APIs and DKIM verifiers each treat them their own way.
    newline: 'windows',
    // Never read a file or fetch a URL while composing, whatever a template contains.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  const composer = new MailComposer(options);
  let raw = await composer.compile().build();
  if (input.dkim) raw = await dkimSign(raw, input.dkim);

  return {
    raw,
    messageId: input.messageId,
    subject: t.subject,
    inReplyTo: t.inReplyTo,
    references: t.references,
    threadId: t.threadId,
    envelope: { from: from.address, to: [to.address] },
    listUnsubscribe: unsub,
    trackedLinks: tracked,
    untrackedLinks: untracked,
    openPixel: pixel,
    dkimSigned: !!input.dkim,
    sent: { subject: t.subject, inReplyTo: t.inReplyTo, refs: t.references, threadId: t.threadId },
  };
}
