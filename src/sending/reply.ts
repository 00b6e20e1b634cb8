import addressparser from 'nodemailer/lib/addressparser/index.js';
import type { Clock } from '../common/clock.ts';
import { cadenzaError, isCadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Vault } from '../mailbox/vault.ts';
import type { Db } from '../store/store.ts';
import { composeReply } from './compose/reply.ts';
import { makeMessageId } from './outbox.ts';
import { createTransport, type TransportDeps, type TransportMailbox } from './transports/registry.ts';
import type { Transport } from './transports/transport.ts';

/**
 * Answers one inbound message from the mailbox that received it, through that mailbox's own
 * transport (the same factory the sender pool uses, so OAuth mailboxes get their tokens), and
 * records the outbound message row so that the next reply in the conversation threads to it.
 * Sent at most once: nothing here retries; a failure is answered with its code.
 */

export interface ReplyDeps {
  db: Db;
  clock: Clock;
  random: Random;
  vault: Vault;
  /** The sender pool's transport factory (oauthTransportFor in the app); the registry's otherwise. */
  transportFor?: (mailbox: TransportMailbox, deps: TransportDeps) => Transport;
}

export interface ReplyRequest {
  workspaceId: string;
  /** message.id of the inbound message. */
  messageRowId: string;
  text: string;
  /** When set, the receiving mailbox must belong to this member (members reply only from their own). */
  ownerUserId?: string | null;
}

export interface ReplySent {
  id: string;
  messageId: string;
  mailboxId: string;
  to: string;
  subject: string;
  threadId: string | null;
}

export async function sendReply(deps: ReplyDeps, req: ReplyRequest): Promise<ReplySent> {
  const { db } = deps;
  const inbound = await db
    .selectFrom('message as m')
    .innerJoin('mailbox as mb', 'mb.id', 'm.mailbox_id')
    .select(['m.id', 'm.message_id', 'm.refs', 'm.subject', 'm.thread_id', 'm.from_addr', 'm.enrollment_id', 'mb.id as mailbox_id', 'mb.email', 'mb.display_name', 'mb.provider', 'mb.settings', 'mb.user_id', 'mb.removed_at'])
    .where('m.workspace_id', '=', req.workspaceId)
    .where('m.id', '=', req.messageRowId)
    .where('m.direction', '=', 'inbound')
    .executeTakeFirst();
  if (!inbound) throw cadenzaError('NOT_FOUND', 'no inbound message with a mailbox in this workspace');
  if (inbound.removed_at !== null) {
    throw cadenzaError('CONFLICT', `the mailbox that received this message (${inbound.email}) was removed; answer from another mailbox in your own mail client`, { mailboxId: inbound.mailbox_id, removed: true });
  }
  if (req.ownerUserId !== undefined && inbound.user_id !== req.ownerUserId) {
    throw cadenzaError('FORBIDDEN', "a member replies only from their own mailboxes; this message reached someone else's");
  }
  const to = addressparser(inbound.from_addr ?? '', { flatten: true }).find((a) => a.address)?.address;
  if (!to) throw cadenzaError('INVALID_INPUT', 'the message has no sender address to reply to');

  const now = deps.clock.now();
  const reply = await composeReply({
    messageId: makeMessageId(inbound.email, now, deps.random),
    date: now,
    from: { address: inbound.email, name: inbound.display_name },
    to: { address: to },
    text: req.text,
    inbound: { messageId: inbound.message_id, refs: inbound.refs, subject: inbound.subject, threadId: inbound.provider === 'gmail' ? inbound.thread_id : null },
  });

  const mailbox: TransportMailbox = { id: inbound.mailbox_id, email: inbound.email, provider: inbound.provider, settings: inbound.settings };
  let transport: Transport;
  try {
    const credential = await deps.vault.get(mailbox.id);
    transport = (deps.transportFor ?? createTransport)(mailbox, { clock: deps.clock, credential });
  } catch (e) {
    if (isCadenzaError(e, 'CONFIG_INVALID')) throw cadenzaError('SEND_REJECTED', `the mailbox cannot send: ${e.message}`, { mailboxId: mailbox.id });
    throw e;
  }
  let outcome;
  try {
    outcome = await transport.send(reply.raw, reply.envelope, { messageId: reply.messageId, threadId: reply.threadId });
  } finally {
    await transport.close();
  }
  const details = { mailboxId: mailbox.id };
  switch (outcome.kind) {
    case 'accepted':
      break;
    case 'transient':
      throw cadenzaError('MAILBOX_UNAVAILABLE', `the mailbox's server did not take the reply (${outcome.phase}): ${outcome.reason}`, details);
    case 'auth_failed':
      throw cadenzaError('MAILBOX_AUTH_FAILED', `the mailbox's server refused its credentials (${outcome.phase}): ${outcome.reason}`, details);
    case 'bounce':
      throw cadenzaError('SEND_REJECTED', `the recipient was refused: ${outcome.recipients.map((r) => r.diagnostic).join('; ')}`, details);
    case 'rejected':
      throw cadenzaError('SEND_REJECTED', `the mailbox's server refused the reply (${outcome.phase}): ${outcome.reason}`, details);
    case 'ambiguous':
      // Handed over with no answer: it may have gone. Not sent again (at most once); the person checks their Sent folder.
      throw cadenzaError('SEND_UNCONFIRMED', `the reply was handed to the server but no answer came (${outcome.phase}): ${outcome.reason}; check the Sent folder before sending again`, { ...details, messageId: reply.messageId });
  }

  const id = newId(deps.clock.now(), deps.random);
  const threadId = outcome.threadId ?? reply.threadId ?? (inbound.provider === 'gmail' ? null : inbound.thread_id);
  await db
    .insertInto('message')
    .values({
      id,
      workspace_id: req.workspaceId,
      mailbox_id: mailbox.id,
      enrollment_id: inbound.enrollment_id,
      send_request_id: null,
      direction: 'outbound',
      message_id: reply.messageId,
      in_reply_to: reply.inReplyTo,
      refs: reply.references,
      thread_id: threadId,
      subject: reply.subject,
      from_addr: inbound.email,
      to_addrs: [to],
      at: new Date(now),
      folder: 'sent',
    })
    .execute();
  return { id, messageId: reply.messageId, mailboxId: mailbox.id, to, subject: reply.subject, threadId };
}
