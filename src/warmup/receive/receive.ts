/**
 * The receiving side of the warmup network, for one message the sync pulled: is it the pool's
 * warmup mail (marker.ts, from the message's own headers), and if so: record where it landed
 * (inbox or junk: the sender's placement), act as a pleased reader through the mailbox's
 * connector (out of Junk into the inbox, flagged, read: FolderActions), and say whether and when
 * to reply (in working hours, for a share of first mails). A message that is not warmup mail is
 * left alone and goes on to the ordinary pipeline; one that is goes nowhere else (no inbox view,
 * analytics, webhook or enrollment signal).
 *
 * Hostile mail costs little: a message over the size limit is not parsed, and verification itself
 * is bounded (marker.ts).
 */
import PostalMime from 'postal-mime';
import type { Random } from '../../common/random.ts';
import type { FolderActions } from '../../mailbox/connectors/connector.ts';
import type { FolderActionResult } from '../../mailbox/connectors/outcomes.ts';
import type { FetchedMessage } from '../../mailbox/sync/source.ts';
import type { WarmupReceipt } from '../membership.ts';
import type { WarmupFields } from '../text/choices.ts';
import type { WarmupLanguage } from '../text/generate.ts';
import { verifyWarmup, WARMUP_TEXT_LIMIT } from '../text/marker.ts';
import { replyTime, type ReplyTiming } from './reply-time.ts';

/** Warmup mail is plain text of a few hundred bytes; anything far larger is not parsed for it. */
const RAW_LIMIT = 8 * WARMUP_TEXT_LIMIT;

export interface WarmupReceiver {
  mailboxId: string;
  address: string;
}

export interface ReceiveDeps {
  key: Buffer;
  pool: string;
  folders: Pick<FolderActions, 'moveToInbox' | 'flag' | 'markRead'>;
  /** Writes the receipt (membership.ts recordWarmupReceipt in the runtime). */
  record(r: WarmupReceipt): Promise<void>;
  reply: ReplyTiming;
  random: Random;
}

export type ReceiveResult =
  | { warmup: false }
  | {
      warmup: true;
      language: WarmupLanguage;
      kind: 'first' | 'reply';
      folder: 'inbox' | 'junk';
      /** What each folder action answered, in order (a failed one is reported, the others still run). */
      actions: Array<{ action: 'moveToInbox' | 'flag' | 'markRead'; result: FolderActionResult | { status: 'failed'; message: string } }>;
      /** The reply to send, or null: its fields are the mail's, turned around. */
      reply: { at: number; to: string; toName: string; inReplyTo: string; subject: string } | null;
    };

const firstName = (name: string | undefined) => (name ?? '').trim().split(/\s+/)[0] ?? '';

/** The fields the marker reads, from the message's headers; null when one is missing. */
export async function warmupFieldsOf(raw: Uint8Array): Promise<{ fields: WarmupFields; subject: string; body: string } | null> {
  if (raw.length > RAW_LIMIT) return null;
  const mail = await PostalMime.parse(raw);
  const from = mail.from?.address;
  const to = mail.to?.[0];
  if (!from || !to?.address || !mail.messageId || mail.text === undefined) return null;
  return {
    fields: {
      from,
      to: to.address,
      messageId: mail.messageId,
      ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
      fromName: firstName(mail.from?.name),
      toName: firstName(to.name),
    },
    subject: mail.subject ?? '',
    body: mail.text,
  };
}

export async function receiveWarmup(msg: FetchedMessage, receiver: WarmupReceiver, deps: ReceiveDeps, now: number): Promise<ReceiveResult> {
  // Only the inbox and junk hold warmup mail as it arrives; Sent holds our own copies.
  if (msg.folder !== 'inbox' && msg.folder !== 'junk') return { warmup: false };
  const read = await warmupFieldsOf(msg.raw).catch(() => null);
  if (!read || read.fields.to.toLowerCase() !== receiver.address.toLowerCase()) return { warmup: false };
  const verdict = verifyWarmup(deps.key, { subject: read.subject, body: read.body }, read.fields);
  if (!verdict.warmup) return { warmup: false };
  const f = read.fields;
  const kind = f.inReplyTo ? 'reply' : 'first';
  const at = msg.receivedAt ?? now;
  await deps.record({ pool: deps.pool, kind, messageId: f.messageId, ...(f.inReplyTo ? { inReplyTo: f.inReplyTo } : {}), senderAddress: f.from, receiverMailboxId: receiver.mailboxId, receiverAddress: receiver.address, folder: msg.folder, at });

  const actions: Extract<ReceiveResult, { warmup: true }>['actions'] = [];
  let key = msg.key;
  const act = async (action: 'moveToInbox' | 'flag' | 'markRead') => {
    try {
      const result = await deps.folders[action](key);
      if (result.status === 'done' && result.key !== null) key = result.key; // a move gives the copy a new key
      actions.push({ action, result });
    } catch (e) {
      actions.push({ action, result: { status: 'failed', message: e instanceof Error ? e.message : String(e) } });
    }
  };
  if (msg.folder === 'junk') await act('moveToInbox');
  await act('flag');
  await act('markRead');

  // Replies to first mails only: a thread of two reads as a conversation, endless ping-pong does not.
  const replyAt = kind === 'first' ? replyTime(Math.max(at, now), deps.reply, deps.random) : null;
  return {
    warmup: true,
    language: verdict.language,
    kind,
    folder: msg.folder,
    actions,
    reply: replyAt === null ? null : { at: replyAt, to: f.from, toName: f.fromName, inReplyTo: f.messageId, subject: read.subject },
  };
}
