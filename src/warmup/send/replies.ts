/**
 * A reply the receiving side decided on (receive.ts: a share of first mails, in the receiver's
 * working hours) becomes a planned warmup mail of the receiving mailbox, sent by its own sender
 * like any other (warmup-sender.ts): its Message-ID fixed now, In-Reply-To the mail it answers,
 * the subject and the name it greets kept, since the text is regenerated from them at send time.
 * Scheduling the same answer twice (a resync reads the mail again) plans one reply: a mail is
 * answered once: the unique index on a pool's replies by `in_reply_to` (0044) makes a second
 * insert a no-op, even from two syncs racing on the same mail.
 */
import { sql } from 'kysely';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Conn } from '../../store/in-tx.ts';
import type { WarmupLanguage } from '../text/generate.ts';

export interface WarmupReplyPlan {
  pool: string;
  senderMailboxId: string;
  senderAddress: string;
  /** The first mail's sender, now answered. */
  to: string;
  toName: string;
  inReplyTo: string;
  /** The subject of the mail answered. */
  subject: string;
  language: WarmupLanguage;
  at: number;
  /** The first mail came from a peer installation's member (federation/): the reply goes back with the pair key. */
  peerId?: string;
}

// -- name: warmup-schedule-reply
const replySql = (r: WarmupReplyPlan, id: string, messageId: string) => sql<{ id: string }>`
  insert into warmup_mail (id, pool, kind, message_id, in_reply_to, sender_mailbox_id, sender_address, receiver_mailbox_id, receiver_address,
                           planned_at, reply_subject, reply_to_name, language, peer_id)
  select ${id}, ${r.pool}, 'reply', ${messageId}, ${r.inReplyTo}, ${r.senderMailboxId}, ${r.senderAddress},
         (select sender_mailbox_id from warmup_mail where message_id = ${r.inReplyTo}), ${r.to},
         ${new Date(r.at)}, ${r.subject}, ${r.toName}, ${r.language}, ${r.peerId ?? null}
  on conflict (pool, in_reply_to) where kind = 'reply' do nothing
  returning id`;

/** Plans the reply; returns its id, or null when that mail already has one. */
export async function scheduleWarmupReply(db: Conn, r: WarmupReplyPlan, random: Random): Promise<string | null> {
  const id = newId(r.at, random);
  const domain = r.senderAddress.slice(r.senderAddress.lastIndexOf('@') + 1);
  return (await replySql(r, id, `<${id}@${domain}>`).execute(db)).rows[0]?.id ?? null;
}
