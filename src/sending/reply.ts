import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import type { Clock } from '../common/clock.ts';
import { cadenzaError, isCadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Vault } from '../mailbox/vault.ts';
import type { Db } from '../store/store.ts';
import { composeReply, type ComposedReply } from './compose/reply.ts';
import { makeMessageId } from './outbox.ts';
import { replyRecipients } from './reply-recipients.ts';
import type { ConnectorSetup, MailboxRow, Transport } from '../mailbox/connectors/connector.ts';
import type { FindSentResult, SendOutcome } from '../mailbox/connectors/outcomes.ts';
import { buildConnector } from '../mailbox/connectors/registry.ts';

/**
 * Answers one inbound message from the mailbox that received it, through that mailbox's own
 * connector (mailbox/connectors/registry.ts, as the sender pool builds it: OAuth mailboxes get
 * their tokens from the process's token source), and
 * records the outbound message row so that the next reply in the conversation threads to it.
 *
 * At most once, as the sending pipeline (outbox.ts): nothing here retries by itself. A transport
 * answer that is ambiguous (the connection broke after the message was handed over) is settled
 * before answering, as the outbox settles an 'unknown' request: the mailbox's Sent folder is
 * searched for the reply's Message-ID for up to settle.windowMs. Found: it was sent. Not found:
 * SEND_UNCONFIRMED, saying it was not sent and that sending again with the same idempotency key
 * is safe. With an idempotency key (reply_request, 0012) a double click or a retry never sends
 * twice: the Message-ID is fixed when the key is first seen, a key already sent answers what it
 * answered then, and a retry after an unconfirmed attempt looks in the Sent folder again before
 * sending, under the same Message-ID, so receivers and later searches see one message.
 */

export interface SettlePolicy {
  /** How long the Sent folder is searched after an ambiguous answer before "not sent" is said. */
  windowMs: number;
  /** Between two searches. */
  pollMs: number;
  /** A key still 'sending' after this long was left by a process that died: settled like unconfirmed. */
  staleSendingMs: number;
}

/**
 * The server files its Sent copy within a second or two of accepting (Postfix + LMTP, Gmail,
 * Graph); 20 s leaves room for a slow one while the person waits for an answer.
 */
export const defaultSettlePolicy: SettlePolicy = { windowMs: 20_000, pollMs: 1_000, staleSendingMs: 5 * 60_000 };

export interface ReplyDeps {
  db: Db;
  clock: Clock;
  random: Random;
  vault: Vault;
  /** How this process builds connectors (app.ts: its token source and API base URLs). */
  connectors?: ConnectorSetup;
  settle?: Partial<SettlePolicy>;
}

export interface ReplyRequest {
  workspaceId: string;
  /** message.id of the inbound message. */
  messageRowId: string;
  text: string;
  /** Copy the message's other recipients (its To and Cc, less the workspace's own mailboxes). */
  replyAll?: boolean;
  /** The caller's key for this reply: the same key never sends twice. */
  idempotencyKey?: string | null;
  /** When set, the receiving mailbox must belong to this member (members reply only from their own). */
  ownerUserId?: string | null;
}

export interface ReplySent {
  id: string;
  messageId: string;
  mailboxId: string;
  to: string[];
  cc: string[];
  subject: string;
  threadId: string | null;
  /** 'server': the server said it took it; 'sent_folder': no answer came, and the Sent folder shows it. */
  confirmedBy: 'server' | 'sent_folder';
  /** True when this key had already sent it: nothing was sent now. */
  replayed: boolean;
}

type Stored = Omit<ReplySent, 'replayed'>;

export async function sendReply(deps: ReplyDeps, req: ReplyRequest): Promise<ReplySent> {
  const { db } = deps;
  const settle = { ...defaultSettlePolicy, ...deps.settle };
  const inbound = await db
    .selectFrom('message as m')
    .innerJoin('mailbox as mb', 'mb.id', 'm.mailbox_id')
    .select([
      'm.id', 'm.message_id', 'm.refs', 'm.subject', 'm.thread_id', 'm.from_addr', 'm.reply_to', 'm.to_addrs', 'm.cc_addrs', 'm.enrollment_id',
      'mb.id as mailbox_id', 'mb.email', 'mb.display_name', 'mb.provider', 'mb.settings', 'mb.user_id', 'mb.removed_at',
    ])
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
  const own = (await db.selectFrom('mailbox').select('email').where('workspace_id', '=', req.workspaceId).execute()).map((r) => r.email);
  const rcpt = replyRecipients(
    { from: addresses([inbound.from_addr])[0] ?? null, replyTo: addresses(inbound.reply_to), to: addresses(inbound.to_addrs), cc: addresses(inbound.cc_addrs) },
    [...own, inbound.email],
    req.replyAll ?? false,
  );
  if (!rcpt.ok) throw cadenzaError('INVALID_INPUT', rcpt.reason);

  const key = req.idempotencyKey ?? null;
  const now = deps.clock.now();
  let messageId = makeMessageId(inbound.email, now, deps.random);
  // After an attempt whose fate is unknown, the Sent folder is asked first.
  let searchFirst = false;
  if (key) {
    const hash = createHash('sha256').update(JSON.stringify([req.messageRowId, req.text, req.replyAll ?? false])).digest('hex');
    const claimed = await claimKey(deps, req.workspaceId, key, { inboundId: req.messageRowId, hash, messageId }, settle);
    if (claimed.kind === 'replay') return { ...claimed.result, replayed: true };
    messageId = claimed.messageId;
    searchFirst = claimed.searchFirst;
  }

  const reply = await composeReply({
    messageId,
    date: now,
    from: { address: inbound.email, name: inbound.display_name },
    to: rcpt.to.map((address) => ({ address })),
    cc: rcpt.cc.map((address) => ({ address })),
    text: req.text,
    inbound: { messageId: inbound.message_id, refs: inbound.refs, subject: inbound.subject, threadId: inbound.provider === 'gmail' ? inbound.thread_id : null },
  });
  const mailbox: MailboxRow = { id: inbound.mailbox_id, email: inbound.email, provider: inbound.provider, settings: inbound.settings };
  const details = { mailboxId: mailbox.id, messageId, ...(key ? { idempotencyKey: key } : {}) };
  const fail = async (code: 'SEND_REJECTED' | 'MAILBOX_UNAVAILABLE' | 'MAILBOX_AUTH_FAILED', message: string): Promise<never> => {
    if (key) await setState(db, req.workspaceId, key, 'failed', message, now);
    throw userFacing(cadenzaError(code, message, { ...details, retrySafe: true }));
  };

  let transport: Transport;
  try {
    transport = await buildConnector(mailbox, { vault: deps.vault, clock: deps.clock, random: deps.random, needs: ['send'], ...(deps.connectors ? { setup: deps.connectors } : {}) });
  } catch (e) {
    if (isCadenzaError(e, 'CONFIG_INVALID')) return fail('SEND_REJECTED', `the mailbox cannot send: ${e.message}`);
    throw e;
  }
  try {
    if (searchFirst) {
      const f = await transport.findSent(messageId);
      if (f.status === 'found') return await record(deps, req, inbound, reply, rcpt, f, 'sent_folder', key);
      if (f.status === 'unavailable') return await unconfirmed(deps, req.workspaceId, key, details, `an earlier attempt with this key may have gone, and the Sent folder could not be searched (${f.reason})`, false);
    }
    const outcome = await transport.send(reply.raw, reply.envelope, { messageId, threadId: reply.threadId });
    switch (outcome.kind) {
      case 'accepted':
        return await record(deps, req, inbound, reply, rcpt, outcome, 'server', key);
      case 'transient':
        return await fail('MAILBOX_UNAVAILABLE', `the mailbox's server did not take the reply (${outcome.phase}): ${outcome.reason}`);
      case 'auth_failed':
        return await fail('MAILBOX_AUTH_FAILED', `the mailbox's server refused its credentials (${outcome.phase}): ${outcome.reason}`);
      case 'bounce':
        return await fail('SEND_REJECTED', `the recipient was refused: ${outcome.recipients.map((r) => r.diagnostic).join('; ')}`);
      case 'rejected':
        return await fail('SEND_REJECTED', `the mailbox's server refused the reply (${outcome.phase}): ${outcome.reason}`);
      case 'ambiguous': {
        const f = await searchSent(deps.clock, transport, messageId, settle);
        if (f.status === 'found') return await record(deps, req, inbound, reply, rcpt, f, 'sent_folder', key);
        const broke = `the connection broke as the reply was handed over (${outcome.phase}: ${outcome.reason})`;
        if (f.status === 'unavailable') return await unconfirmed(deps, req.workspaceId, key, details, `${broke}, and the Sent folder could not be searched (${f.reason})`, false);
        return await unconfirmed(deps, req.workspaceId, key, details, `${broke}, and it is not in ${inbound.email}'s Sent folder after ${Math.round(settle.windowMs / 1000)} s`, true);
      }
    }
  } finally {
    await transport.close();
  }
}

type Claim = { kind: 'replay'; result: Stored } | { kind: 'send'; messageId: string; searchFirst: boolean };

/**
 * Takes the key for this attempt. First use: a row in 'sending' with the new Message-ID. Again:
 * the same reply answered as before ('sent'), refused while another attempt runs, or taken over
 * (after 'failed', 'unconfirmed', or a 'sending' left by a dead process) with its Message-ID.
 */
async function claimKey(deps: ReplyDeps, workspaceId: string, key: string, fresh: { inboundId: string; hash: string; messageId: string }, settle: SettlePolicy): Promise<Claim> {
  const now = new Date(deps.clock.now());
  const inserted = await deps.db
    .insertInto('reply_request')
    .values({ workspace_id: workspaceId, idempotency_key: key, inbound_id: fresh.inboundId, request_hash: fresh.hash, message_id: fresh.messageId, state: 'sending', created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['workspace_id', 'idempotency_key']).doNothing())
    .returning('message_id')
    .executeTakeFirst();
  if (inserted) return { kind: 'send', messageId: inserted.message_id, searchFirst: false };
  const row = await deps.db.selectFrom('reply_request').selectAll().where('workspace_id', '=', workspaceId).where('idempotency_key', '=', key).executeTakeFirstOrThrow();
  if (row.request_hash !== fresh.hash) throw cadenzaError('CONFLICT', 'this idempotency key was used for a different reply (another message, text or recipients); use a new key for a new reply', { idempotencyKey: key });
  if (row.state === 'sent') return { kind: 'replay', result: row.result as Stored };
  const stale = row.updated_at.getTime() < now.getTime() - settle.staleSendingMs;
  if (row.state === 'sending' && !stale) throw cadenzaError('CONFLICT', 'this reply is being sent right now (same idempotency key); its answer comes from that request', { idempotencyKey: key });
  // Taken only if nobody else took it since it was read.
  const took = await deps.db
    .updateTable('reply_request')
    .set({ state: 'sending', updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('idempotency_key', '=', key)
    .where('state', '=', row.state)
    .where('updated_at', '=', row.updated_at)
    .executeTakeFirst();
  if (Number(took.numUpdatedRows) !== 1) throw cadenzaError('CONFLICT', 'this reply is being sent right now (same idempotency key); its answer comes from that request', { idempotencyKey: key });
  return { kind: 'send', messageId: row.message_id, searchFirst: row.state !== 'failed' };
}

async function setState(db: Db, workspaceId: string, key: string, state: 'failed' | 'unconfirmed', error: string, now: number): Promise<void> {
  await db.updateTable('reply_request').set({ state, last_error: error.slice(0, 2000), updated_at: new Date(now) }).where('workspace_id', '=', workspaceId).where('idempotency_key', '=', key).execute();
}

/** Searches the Sent folder until the copy shows or the window ends; 'unavailable' only if no search worked. */
async function searchSent(clock: Clock, transport: Transport, messageId: string, settle: SettlePolicy): Promise<FindSentResult> {
  const until = clock.now() + settle.windowMs;
  let last: FindSentResult = { status: 'unavailable', reason: 'not searched' };
  let searched = false;
  for (;;) {
    const f = await transport.findSent(messageId);
    if (f.status === 'found') return f;
    if (f.status === 'not_found') searched = true;
    last = searched ? { status: 'not_found' } : f;
    if (clock.now() + settle.pollMs > until) return last;
    await clock.sleep(settle.pollMs);
  }
}

async function unconfirmed(deps: ReplyDeps, workspaceId: string, key: string | null, details: Record<string, unknown>, why: string, notFound: boolean): Promise<never> {
  const now = deps.clock.now();
  if (key) await setState(deps.db, workspaceId, key, 'unconfirmed', why, now);
  const retry = key
    ? 'Sending it again with the same idempotency key is safe: Cadenza looks in the Sent folder once more first and sends under the same Message-ID, so it never goes twice.'
    : 'Sending it again is safe only with an idempotency key; without one, check the Sent folder first.';
  const message = notFound ? `The reply was not sent: ${why}. ${retry}` : `The reply may have been sent: ${why}. ${retry}`;
  throw userFacing(cadenzaError('SEND_UNCONFIRMED', message, { ...details, sentFolder: notFound ? 'not_found' : 'unavailable', retrySafe: key !== null || notFound }));
}

/**
 * The API says these errors' messages even as 5xx (api/http/errors.ts): they are composed here
 * from the transport's classified reasons, about the person's own mail server, with no secret.
 */
function userFacing<E extends Error>(e: E): E {
  return Object.assign(e, { userFacing: true });
}

interface InboundRow {
  enrollment_id: string | null;
  thread_id: string | null;
  provider: string;
  email: string;
  mailbox_id: string;
}

/** The reply went: its outbound row (the next answer in the thread threads to it), and the key's answer. */
async function record(
  deps: ReplyDeps,
  req: ReplyRequest,
  inbound: InboundRow,
  reply: ComposedReply,
  rcpt: { to: string[]; cc: string[] },
  found: Extract<SendOutcome, { kind: 'accepted' }> | Extract<FindSentResult, { status: 'found' }>,
  confirmedBy: 'server' | 'sent_folder',
  key: string | null,
): Promise<ReplySent> {
  const now = deps.clock.now();
  const id = newId(now, deps.random);
  const threadId = found.threadId ?? reply.threadId ?? (inbound.provider === 'gmail' ? null : inbound.thread_id);
  const result: Stored = { id, messageId: reply.messageId, mailboxId: inbound.mailbox_id, to: rcpt.to, cc: rcpt.cc, subject: reply.subject, threadId, confirmedBy };
  await deps.db.transaction().execute(async (tx) => {
    await tx
      .insertInto('message')
      .values({
        id,
        workspace_id: req.workspaceId,
        mailbox_id: inbound.mailbox_id,
        enrollment_id: inbound.enrollment_id,
        send_request_id: null,
        direction: 'outbound',
        message_id: reply.messageId,
        in_reply_to: reply.inReplyTo,
        refs: reply.references,
        thread_id: threadId,
        subject: reply.subject,
        from_addr: inbound.email,
        to_addrs: rcpt.to,
        cc_addrs: rcpt.cc,
        at: new Date(now),
        folder: 'sent',
      })
      .execute();
    if (key) {
      await tx
        .updateTable('reply_request')
        .set({ state: 'sent', result: sql`${JSON.stringify(result)}::jsonb`, last_error: null, updated_at: new Date(now) })
        .where('workspace_id', '=', req.workspaceId)
        .where('idempotency_key', '=', key)
        .execute();
    }
  });
  return { ...result, replayed: false };
}

/** Bare addresses from stored header values ('Name <a@b>' or 'a@b'). */
function addresses(values: readonly (string | null)[]): string[] {
  return values.flatMap((v) => (v ? addressparser(v, { flatten: true }).map((a) => a.address).filter((a): a is string => !!a) : []));
}
