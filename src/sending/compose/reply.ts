import { createHash } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { cadenzaError } from '../../common/errors.ts';
import type { Address } from './compose.ts';
import { isMessageId, threadHeaders } from './threading.ts';

/**
 * A person's plain-text answer to one inbound message, composed with nodemailer's MailComposer as
 * composeEmail does, but without what only sequence mail carries (List-Unsubscribe, tracking):
 * this is one person writing to another. It continues the inbound message's thread: In-Reply-To
 * is its Message-ID, References its references then its Message-ID (capped as threading.ts
 * caps them), the subject "Re: " once, and Gmail's threadId carried for the Gmail transport.
 */

export interface InboundRef {
  /** '<id@domain>' of the message being answered. */
  messageId: string;
  refs: readonly string[];
  subject: string | null;
  threadId: string | null;
}

export interface ReplyInput {
  /** '<id@domain>' for the reply (makeMessageId with the mailbox's address). */
  messageId: string;
  /** Epoch ms, from the injected clock. */
  date: number;
  from: Address;
  /** Reply-To or From of the message answered (sending/reply-recipients.ts); at least one. */
  to: Address[];
  /** "Reply all": the message's other recipients. */
  cc?: Address[];
  text: string;
  inbound: InboundRef;
}

export interface ComposedReply {
  raw: Buffer;
  messageId: string;
  subject: string;
  inReplyTo: string;
  references: string[];
  threadId: string | null;
  envelope: { from: string; to: string[] };
}

export async function composeReply(input: ReplyInput): Promise<ComposedReply> {
  if (!isMessageId(input.messageId)) throw cadenzaError('INVALID_INPUT', `Message-ID ${JSON.stringify(input.messageId)} is not of the form <id@domain>`);
  if (!isMessageId(input.inbound.messageId)) throw cadenzaError('INVALID_INPUT', 'the message being answered has no usable Message-ID', { messageId: input.inbound.messageId });
  if (input.text.trim() === '') throw cadenzaError('INVALID_INPUT', 'a reply needs a text body');
  if (input.to.length === 0) throw cadenzaError('INVALID_INPUT', 'a reply needs a recipient');
  const cc = input.cc ?? [];
  // A malformed id among the inbound References is dropped rather than refusing the reply.
  const chain = [...input.inbound.refs.filter((r) => isMessageId(r) && r !== input.inbound.messageId), input.inbound.messageId];
  const t = threadHeaders({ messageIds: chain, firstSubject: input.inbound.subject ?? '', threadId: input.inbound.threadId }, null);
  const addr = (a: Address) => (a.name ? { name: a.name.replace(/[\r\n\t]+/g, ' ').trim(), address: a.address } : a.address);
  // baseBoundary and newline are read by MailComposer but missing from its typings (as in compose.ts).
  const options: Mail.Options & { baseBoundary: string; newline: string } = {
    messageId: input.messageId,
    date: new Date(input.date),
    from: addr(input.from),
    to: input.to.map(addr),
    ...(cc.length ? { cc: cc.map(addr) } : {}),
    subject: t.subject,
    inReplyTo: t.inReplyTo!,
    references: t.references,
    text: input.text,
    baseBoundary: createHash('sha256').update(input.messageId).digest('hex').slice(0, 24),
    newline: 'windows',
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  const raw = await new MailComposer(options).compile().build();
  return {
    raw,
    messageId: input.messageId,
    subject: t.subject,
    inReplyTo: t.inReplyTo!,
    references: t.references,
    threadId: t.threadId,
    envelope: { from: input.from.address, to: [...input.to, ...cc].map((a) => a.address) },
  };
}
