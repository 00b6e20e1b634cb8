/**
 * The warmup network's receiving side as the sync pipeline sees it (ingest/pipeline.ts
 * `WarmupRecogniser`, wired by the composition root): of one pulled batch, which messages are the
 * pool's warmup mail. Those are recorded (their folder: the sender's placement), acted on through
 * the mailbox's folder actions, and answered for a share (a planned reply row the sending side
 * sends); the pipeline then drops them, so they reach no inbox view, analytics, webhook, CRM or
 * enrollment signal.
 *
 * Cheap for the common case, a human reply: one indexed lookup per batch finds whether the
 * receiving mailbox is a member and which of the batch's senders are members of its pool; only
 * mail from those is parsed and verified (bounded: receive.ts, marker.ts).
 */
import { sql } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { FolderActions } from '../../mailbox/connectors/connector.ts';
import { MailboxBucket } from '../../mailbox/pacing/bucket.ts';
import { toMailboxPacing } from '../../mailbox/pacing/mailbox.ts';
import type { FetchedMessage } from '../../mailbox/sync/source.ts';
import { mailboxesSql } from '../../sending/dispatch/sql.ts';
import type { Conn } from '../../store/in-tx.ts';
import { recordWarmupReceipt } from '../membership.ts';
import { warmupPoolKey } from '../text/marker.ts';
import { receiveWarmup, type ReceiveResult } from './receive.ts';
import { defaultReplyDelay, type ReplyTiming } from './reply-time.ts';
import { scheduleWarmupReply } from '../send/replies.ts';
import { pairKey, type FederationIdentity } from '../federation/identity.ts';
import { LEFT_GRACE_MS } from '../federation/peers.ts';

export interface RecogniserDeps {
  db: Conn;
  /** The installation's master key: each pool's key is derived from it (marker.ts). */
  master: Buffer;
  clock: Clock;
  random: Random;
  /**
   * The share of first mails answered and its delays. When a person would answer is not set here:
   * it is the receiving mailbox's own working hours, as pacing decides them (workingHours below).
   */
  reply?: Partial<Omit<ReplyTiming, 'working'>>;
  log?: Logger;
  /**
   * This installation's federation identity: mail from a peer installation's member (one its
   * last exchange listed, for the receiving mailbox's workspace and pool) is verified with the
   * pair key. A peering that ended is still recognised for LEFT_GRACE_MS (mail in flight), without
   * a reply. Absent: only this installation's members are recognised.
   */
  federation?: FederationIdentity;
}

export interface RecogniserMailbox {
  id: string;
  workspaceId: string;
}

export interface RecogniserInput {
  fetched: FetchedMessage;
  /** The parsed From address (null when it had none): the early bail-out reads only this. */
  from: string | null;
}

/** The default share of first mails a receiver answers. */
export const DEFAULT_REPLY_SHARE = 0.3;

/** Folder actions where the mailbox's connector has none: each answers `unavailable`, the mail is still recorded and hidden. */
const noFolders: Pick<FolderActions, 'moveToInbox' | 'flag' | 'markRead'> = {
  moveToInbox: async () => ({ status: 'unavailable', reason: 'this mailbox has no folder actions' }),
  flag: async () => ({ status: 'unavailable', reason: 'this mailbox has no folder actions' }),
  markRead: async () => ({ status: 'unavailable', reason: 'this mailbox has no folder actions' }),
};

interface MemberRow {
  email: string;
  pool: string;
  mailbox_id: string;
}

interface RemoteRow {
  email: string;
  peer_id: string;
  sign_key: string;
  agree_key: string;
  state: 'active' | 'left';
}

/** Whose mail a sender's is: this installation's pool, or a peer's (its pair key; replies only while active). */
type Source = { key: Buffer; peerId?: string; replies: boolean };

export function warmupRecogniser(d: RecogniserDeps) {
  const keys = new Map<string, Buffer>();
  const keyOf = (pool: string) => {
    let k = keys.get(pool);
    if (!k) keys.set(pool, (k = warmupPoolKey(d.master, pool)));
    return k;
  };
  const timing: Omit<ReplyTiming, 'working'> = { share: DEFAULT_REPLY_SHARE, ...defaultReplyDelay, ...d.reply };
  return {
    /**
     * The indexes (into `messages`) of the warmup mail among them, each recorded and acted on by
     * now. One lookup for the batch; nothing else runs unless a sender is a member of the
     * receiver's pool.
     */
    async take(mailbox: RecogniserMailbox, messages: readonly RecogniserInput[], folders: Pick<FolderActions, 'moveToInbox' | 'flag' | 'markRead'> | null): Promise<Set<number>> {
      const out = new Set<number>();
      const senders = [...new Set(messages.flatMap((m) => (m.from && (m.fetched.folder === 'inbox' || m.fetched.folder === 'junk') ? [m.from.toLowerCase()] : [])))];
      if (senders.length === 0) return out;
      const rows = await sql<MemberRow>`
        select lower(m.email) as email, w.pool, w.mailbox_id
        from warmup_member w join mailbox m on m.id = w.mailbox_id
        where m.removed_at is null and (w.mailbox_id = ${mailbox.id} or lower(m.email) in (${sql.join(senders)}))`.execute(d.db);
      const me = rows.rows.find((r) => r.mailbox_id === mailbox.id);
      if (!me) return out; // the receiving mailbox takes no part: nothing of this batch is warmup
      const sources = new Map<string, Source>(rows.rows.filter((r) => r.pool === me.pool && r.mailbox_id !== mailbox.id).map((r) => [r.email, { key: keyOf(me.pool), replies: true }]));
      const strangers = senders.filter((s) => !sources.has(s));
      if (d.federation && strangers.length) {
        const fed = d.federation;
        const remote = await sql<RemoteRow>`
          select lower(r.address) as email, p.id as peer_id, p.sign_key, p.agree_key, p.state
          from warmup_remote_member r join warmup_peer p on p.id = r.peer_id
          where p.workspace_id = ${mailbox.workspaceId} and p.pool = ${me.pool} and lower(r.address) in (${sql.join(strangers)})
            and (p.state = 'active' or (p.state = 'left' and p.left_at > ${new Date(d.clock.now() - LEFT_GRACE_MS)}))`.execute(d.db);
        for (const r of remote.rows) {
          if (sources.has(r.email) && r.state !== 'active') continue;
          let k = keys.get(`peer:${r.peer_id}`);
          if (!k) keys.set(`peer:${r.peer_id}`, (k = pairKey(fed, { signKey: r.sign_key, agreeKey: r.agree_key })));
          sources.set(r.email, { key: k, peerId: r.peer_id, replies: r.state === 'active' });
        }
      }
      let working: ReplyTiming['working'] | undefined;
      for (const [i, m] of messages.entries()) {
        const source = m.from ? sources.get(m.from.toLowerCase()) : undefined;
        if (!source) continue;
        working ??= await workingHours(d, mailbox.id);
        const now = d.clock.now();
        const r: ReceiveResult = await receiveWarmup(
          m.fetched,
          { mailboxId: mailbox.id, address: me.email },
          { key: source.key, pool: me.pool, folders: folders ?? noFolders, record: (x) => recordWarmupReceipt(d.db, source.peerId ? { ...x, peerId: source.peerId } : x, d.random), reply: { ...timing, working }, random: d.random },
          now,
        );
        if (!r.warmup) continue;
        out.add(i);
        const failed = r.actions.filter((a) => a.result.status !== 'done');
        if (failed.length) d.log?.warn({ mailboxId: mailbox.id, key: m.fetched.key, failed }, 'warmup folder actions did not all succeed');
        // The sending side (send/warmup-sender.ts) sends the planned row from this mailbox.
        if (r.reply && source.replies) await scheduleWarmupReply(d.db, { pool: me.pool, senderMailboxId: mailbox.id, senderAddress: me.email, to: r.reply.to, toName: r.reply.toName, inReplyTo: r.reply.inReplyTo, subject: r.reply.subject, language: r.language, at: r.reply.at, ...(source.peerId ? { peerId: source.peerId } : {}) }, d.random);
      }
      return out;
    },
  };
}

/**
 * The receiving mailbox's working hours, read as pacing reads them for its sends (its zone, else
 * its workspace's; its working days, day start and end, lunch: MailboxBucket.working), so a person
 * answers when the mailbox would be at work and never at 23:00 its time. A mailbox whose pacing
 * settings cannot be read has no hours: its warmup mail is still recorded and acted on, unanswered
 * (its sender could not send the reply either).
 */
async function workingHours(d: RecogniserDeps, mailboxId: string): Promise<ReplyTiming['working']> {
  const row = (await mailboxesSql([mailboxId]).execute(d.db)).rows[0];
  if (!row) return () => false;
  try {
    const bucket = new MailboxBucket(toMailboxPacing(row, { time_zone: row.ws_zone, settings: row.ws_settings }));
    return (t) => bucket.working(t);
  } catch (e) {
    if (!isCadenzaError(e)) throw e;
    d.log?.warn({ mailboxId, err: e.message }, 'warmup: no reply planned, the mailbox pacing settings are invalid');
    return () => false;
  }
}

export type WarmupRecogniserImpl = ReturnType<typeof warmupRecogniser>;
