/**
 * Sends a mailbox's due warmup mail through its own transport, under its own token bucket. The
 * mailbox's sender (sending/mailbox-sender.ts) calls this when its campaign queue has nothing to
 * send now, so campaign mail goes first and warmup fills the gaps.
 *
 * The claim is one transaction: the mailbox row locked as a campaign claim locks it (reserve.ts),
 * the fence checked, the bucket rebuilt from every counted send of the mailbox, campaign and warmup
 * alike (dispatch sql.ts), and the due mail's claimed_at set only `where claimed_at is null`. So a
 * planned warmup mail reaches a server at most once (its Message-ID is its unique key, fixed when
 * planned), and warmup plus campaign sends never pass the mailbox's daily cap, hourly ceiling or
 * minimum gap. What the server answered decides the rest:
 *   accepted          sent_at set;
 *   transient         claim given back (it stops counting), due again after the server's delay;
 *   credentials       claim given back, the mailbox paused (as for campaign mail);
 *   refused, bounced  kept claimed (providers count a refusal), not retried, the reason noted;
 *   ambiguous         kept claimed and never retried: at most once beats at least once for small talk.
 *
 * Mail planned for more than STALE_MS ago (the mailbox was paused, the process down) is not sent:
 * warmup that arrives a day late at a burst would look like what it is.
 */
import { sql } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { MailboxBucket } from '../../mailbox/pacing/bucket.ts';
import { blockedReason, toMailboxPacing, type PacedMailboxRow } from '../../mailbox/pacing/mailbox.ts';
import type { Transport } from '../../mailbox/connectors/connector.ts';
import { holdsSql } from '../../ops/leases.ts';
import { usageSql } from '../../sending/dispatch/sql.ts';
import type { Store } from '../../store/store.ts';
import type { WarmupLanguage } from '../text/generate.ts';
import { warmupPoolKey } from '../text/marker.ts';
import { composeWarmup } from './compose.ts';

const DAY_MS = 86_400_000;
export const STALE_MS = 6 * 3_600_000;
/** A transient failure waits at least this long before the mail is due again. */
const MIN_RETRY_MS = 5 * 60_000;

export interface WarmupSendDeps {
  store: Store;
  clock: Clock;
  transport: Pick<Transport, 'send'>;
  /**
   * The key the mail is written with: the pool's (text/marker.ts warmupPoolKey), or for mail to a
   * peer installation's member the pair key of the two (federation/identity.ts pairKey).
   */
  keyFor(pool: string, peer?: { signKey: string; agreeKey: string }): Buffer;
  fence?: { resource: string; token: number };
  pauseMailbox?: (mailboxId: string, reason: string) => Promise<void>;
}

export type WarmupStep =
  | { kind: 'idle' }
  | { kind: 'paced'; reason: string }
  | { kind: 'fenced' }
  | { kind: 'sent'; id: string; messageId: string }
  | { kind: 'failed'; id: string; outcome: string; reason: string };

interface DueRow {
  id: string;
  pool: string;
  kind: 'first' | 'reply';
  message_id: string;
  in_reply_to: string | null;
  sender_address: string;
  receiver_address: string;
  reply_subject: string | null;
  reply_to_name: string | null;
  language: WarmupLanguage | null;
  sender_name: string | null;
  receiver_name: string | null;
  peer_sign_key: string | null;
  peer_agree_key: string | null;
}

// -- name: warmup-claim-mailbox
const mailboxSql = (id: string) => sql<PacedMailboxRow & { email: string; display_name: string | null }>`
  select m.id, m.workspace_id, m.email, m.display_name, m.daily_cap, m.hourly_cap, m.ramp, m.ramp_started_at, m.created_at, m.time_zone, m.settings,
         m.health, m.health_reason, w.time_zone as ws_zone, w.settings as ws_settings, w.daily_cap as ws_cap, wm.cap_factor, wm.cap_reason
  from mailbox m join workspace w on w.id = m.workspace_id left join warmup_member wm on wm.mailbox_id = m.id
  where m.id = ${id} and m.removed_at is null
  for no key update of m`;

// -- name: warmup-due
// The earliest due, unclaimed mail of the sender; a receiver's name from its mailbox when it is ours.
// Mail to a peer installation's member goes only while the peering is active (checked here, in the
// claim: nothing goes once it ended), and a first mail only once the peer accepted it.
/** The mailbox's warmup mail that may still go out (not claimed, not sent, not stale, its peer ready), over x and p. */
const sendable = (id: string, now: number) => sql`
  x.sender_mailbox_id = ${id} and x.claimed_at is null and x.sent_at is null and x.planned_at > ${new Date(now - STALE_MS)}
    and (x.peer_id is null or (p.state = 'active' and (x.kind = 'reply' or x.peer_accepted_at is not null)))`;

const dueSql = (id: string, now: number) => sql<DueRow>`
  select x.id, x.pool, x.kind, x.message_id, x.in_reply_to, x.sender_address, x.receiver_address, x.reply_subject, x.reply_to_name, x.language,
         s.display_name as sender_name, r.display_name as receiver_name, p.sign_key as peer_sign_key, p.agree_key as peer_agree_key
  from warmup_mail x join mailbox s on s.id = x.sender_mailbox_id left join mailbox r on r.id = x.receiver_mailbox_id
    left join warmup_peer p on p.id = x.peer_id
  where ${sendable(id, now)} and x.planned_at <= ${new Date(now)}
  order by x.planned_at limit 1
  for update of x skip locked`;

type Claim = { kind: 'claimed'; row: DueRow } | Exclude<WarmupStep, { kind: 'sent' | 'failed' }>;

async function claim(d: WarmupSendDeps, mailboxId: string, now: number): Promise<Claim> {
  return d.store.db.transaction().execute(async (tx): Promise<Claim> => {
    if (d.fence && !(await sql<{ ok: boolean }>`select ${holdsSql(d.fence.resource, d.fence.token, now)} as ok`.execute(tx)).rows[0]?.ok) return { kind: 'fenced' };
    const mb = (await mailboxSql(mailboxId).execute(tx)).rows[0];
    if (!mb) return { kind: 'idle' };
    const blocked = blockedReason(mb);
    if (blocked !== null) return { kind: 'paced', reason: `mailbox ${blocked}` };
    const row = (await dueSql(mailboxId, now).execute(tx)).rows[0];
    if (!row) return { kind: 'idle' };
    let bucket: MailboxBucket;
    try {
      // Every counted send of the mailbox, campaign and warmup: one bucket (dispatch sql.ts).
      const counted = (await usageSql([mailboxId], now - 2 * DAY_MS).execute(tx)).rows.map((u) => u.claimed_at.getTime());
      bucket = new MailboxBucket(toMailboxPacing(mb, { time_zone: mb.ws_zone, settings: mb.ws_settings }), counted);
    } catch (e) {
      if (!isCadenzaError(e)) throw e;
      return { kind: 'paced', reason: `mailbox settings are invalid: ${e.message}` };
    }
    const check = bucket.check(now, now + DAY_MS);
    if (!check.ok) {
      await sql`update warmup_mail set send_note = ${`waiting: ${check.reason}`} where id = ${row.id}`.execute(tx);
      return { kind: 'paced', reason: check.reason };
    }
    const got = await sql`update warmup_mail set claimed_at = ${new Date(now)}, send_note = null where id = ${row.id} and claimed_at is null returning id`.execute(tx);
    return got.rows.length ? { kind: 'claimed', row } : { kind: 'idle' };
  });
}

/**
 * The sender pool's extra step (sending/sender-pool.ts `extraStepFor`): a mailbox's due warmup
 * mail, sent with the mailbox's transport and lease, each pool's key derived from the
 * installation's master key. What the composition root and the demo wire.
 */
export function warmupExtraStep(d: Pick<WarmupSendDeps, 'store' | 'clock' | 'keyFor'>) {
  return (c: { transport: Pick<Transport, 'send'>; fence: { resource: string; token: number }; pauseMailbox: (id: string, reason: string) => Promise<void> }) => (mailboxId: string) =>
    sendDueWarmup({ store: d.store, clock: d.clock, transport: c.transport, fence: c.fence, pauseMailbox: c.pauseMailbox, keyFor: d.keyFor }, mailboxId);
}

// -- name: warmup-next
const nextSql = (id: string, now: number) => sql<{ at: Date | null }>`
  select min(x.planned_at) as at from warmup_mail x left join warmup_peer p on p.id = x.peer_id where ${sendable(id, now)}`;

/**
 * The sender pool's `extraDueAt` (sending/sender-pool.ts): when the mailbox's next warmup mail is
 * planned (null: none), so that an idle send loop claims only when something is due.
 */
export function warmupDueAt(d: Pick<WarmupSendDeps, 'store' | 'clock'>) {
  return async (mailboxId: string): Promise<number | null> => {
    const at = (await nextSql(mailboxId, d.clock.now()).execute(d.store.db)).rows[0]?.at;
    return at ? new Date(at).getTime() : null;
  };
}

/** Sends at most one due warmup mail of the mailbox, if its bucket allows it now. */
export async function sendDueWarmup(d: WarmupSendDeps, mailboxId: string): Promise<WarmupStep> {
  const now = d.clock.now();
  const c = await claim(d, mailboxId, now);
  if (c.kind !== 'claimed') return c;
  const row = c.row;
  const db = d.store.db;
  const note = (id: string, text: string) => sql`update warmup_mail set send_note = ${text} where id = ${id}`.execute(db);
  let mail: Awaited<ReturnType<typeof composeWarmup>>;
  try {
    const peer = row.peer_sign_key && row.peer_agree_key ? { signKey: row.peer_sign_key, agreeKey: row.peer_agree_key } : undefined;
    mail = await composeWarmup(d.keyFor(row.pool, peer), {
      messageId: row.message_id,
      ...(row.in_reply_to ? { inReplyTo: row.in_reply_to, answeredSubject: row.reply_subject ?? '' } : {}),
      from: { address: row.sender_address, name: row.sender_name ?? '' },
      to: { address: row.receiver_address, name: row.kind === 'reply' ? (row.reply_to_name ?? '') : (row.receiver_name ?? '') },
      language: row.language ?? languageOf(row.message_id),
      date: now,
    });
  } catch (e) {
    if (!isCadenzaError(e)) throw e;
    // Claimed and never sent: a planned mail that cannot be written is not tried again.
    await note(row.id, `not sent: ${e.message}`);
    return { kind: 'failed', id: row.id, outcome: 'invalid', reason: e.message };
  }
  const outcome = await d.transport.send(mail.raw, mail.envelope, { messageId: row.message_id, threadId: null });
  switch (outcome.kind) {
    case 'accepted':
      await sql`update warmup_mail set sent_at = ${new Date(d.clock.now())}, send_note = null where id = ${row.id}`.execute(db);
      return { kind: 'sent', id: row.id, messageId: row.message_id };
    case 'transient': {
      const at = d.clock.now() + Math.max(MIN_RETRY_MS, outcome.retryAfterMs ?? 0);
      await sql`update warmup_mail set claimed_at = null, planned_at = ${new Date(at)}, send_note = ${`retry: ${outcome.phase}: ${outcome.reason}`} where id = ${row.id}`.execute(db);
      return { kind: 'failed', id: row.id, outcome: 'transient', reason: outcome.reason };
    }
    case 'auth_failed': {
      await sql`update warmup_mail set claimed_at = null, send_note = ${`credentials refused: ${outcome.reason}`} where id = ${row.id}`.execute(db);
      await d.pauseMailbox?.(mailboxId, `credentials refused (${outcome.phase}): ${outcome.reason}`);
      return { kind: 'failed', id: row.id, outcome: 'auth_failed', reason: outcome.reason };
    }
    case 'bounce':
      await note(row.id, `bounced: ${outcome.recipients[0]?.diagnostic ?? ''}`);
      return { kind: 'failed', id: row.id, outcome: 'bounce', reason: outcome.recipients[0]?.diagnostic ?? '' };
    case 'rejected':
      await note(row.id, `rejected: ${outcome.phase}: ${outcome.reason}`);
      return { kind: 'failed', id: row.id, outcome: 'rejected', reason: outcome.reason };
    case 'ambiguous':
      await note(row.id, `unknown: ${outcome.phase}: ${outcome.reason}`);
      return { kind: 'failed', id: row.id, outcome: 'ambiguous', reason: outcome.reason };
  }
}

const LANGS: readonly WarmupLanguage[] = ['en', 'de', 'fr', 'es'];
/** A first mail's language when the plan named none: English mostly, the others now and then, fixed by its Message-ID. */
export function languageOf(messageId: string): WarmupLanguage {
  let h = 0;
  for (let i = 0; i < messageId.length; i++) h = (h * 31 + messageId.charCodeAt(i)) >>> 0;
  const x = h % 10;
  return x < 7 ? 'en' : LANGS[x - 6]!;
}
