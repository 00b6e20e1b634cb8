import { sql } from 'kysely';
import type { Logger } from '../common/logger.ts';
import type { Db } from '../store/store.ts';
import { deferClaim, type Claim, type OutboxDeps } from './outbox.ts';
import type { Transport } from '../mailbox/connectors/connector.ts';
import type { RecentMail, RecentMailResult } from '../mailbox/connectors/outcomes.ts';

/**
 * The mailbox last look (promises 2 and 3): before a follow-up leaves, the sender asks the mailbox
 * itself whether the lead has written since the previous step.
 *
 * Why: a reply stops its enrollment once the sync role has been told (IMAP IDLE, a push), pulled
 * it and the pipeline has committed the stop: about 0.6 s (p50) after it reached the mailbox. The
 * outbox re-checks the enrollment in the database (claim, lastLook), which cannot see a reply the
 * pipeline has not processed yet; a reply that lands in that window did not stop the step that
 * was about to leave (issue 10). The look closes the window to the time between the look and the
 * transport call (a database round trip).
 *
 * When: before any step after the first, and before a first step to a lead who has ever written to
 * this mailbox. What: mail from the lead, or threaded on our Message-IDs (IMAP), received since
 * the previous step (a minute earlier, for clock skew), in the inbox and the junk folder
 * (Transport.recentMailFrom: IMAP UID SEARCH, Gmail messages.list, Graph $filter).
 *
 * What a hit does: only mail the pipeline has not read yet counts (its provider key or Message-ID
 * is not in `message` or `quarantine`); what it has read, it has already decided (a reply stopped
 * the enrollment, which the outbox's lastLook sees next). An unread hit defers the send
 * (deferClaim: back to the queue untouched, due in `deferMs`) and asks the sync role to pull this
 * mailbox now; the pipeline then decides: a reply stops the enrollment, an out-of-office pauses
 * it, and anything else (a newsletter from the lead, a note the classifier keeps in the inbox)
 * lets the next claim go out, since by then it has been read.
 *
 * Unread mail from the lead holds the step for as long as it stays unread, the deferrals growing
 * from `deferMs` to `maxDeferMs`: never sent on a guess. It used to go after 5 deferrals (10 s),
 * and a sync role behind by more than that (a saturated machine: day-load at 10,000 mailboxes,
 * reply-to-stop p99 96 s) sent follow-ups to leads whose replies sat in the mailbox. What still
 * holds a step: the sync role down or far behind (the step goes, or stops, once it has read the
 * mail), and a message the sync never reads (the lead's mail in the trash, which Gmail's search
 * includes): after `holdAlertMs` the sender logs it as an error, and the request's last error says
 * why it waits; a person stops the enrollment or moves the message back to the inbox.
 *
 * When the look itself fails (connection refused, timeout, a provider 5xx) the send is deferred
 * too, by `failedLookDeferMs`, at most `maxFailedLooks` times for a request, then it goes: the look
 * narrows a race that the pipeline closes a second later anyway, so a mailbox whose IMAP is down
 * must not stop sending altogether, and a short outage (a server restart) costs a few seconds.
 *
 * Order matters: this runs BEFORE the outbox's lastLook, so that a reply the pipeline committed
 * while we looked (read, hence not counted here) is seen by lastLook's re-check of the enrollment.
 *
 * The deferral counts live in this object (one per mailbox sender): a restart forgets them, which
 * only restarts the bound.
 */
export interface LastLookPolicy {
  /** A deferred step is claimed again after this long: the pull and the pipeline take ~0.6 s (p50). */
  deferMs: number;
  /** Each further deferral for unread mail doubles, up to this. */
  maxDeferMs: number;
  /** Held this long for unread mail, the sender says so as an error (once per request). */
  holdAlertMs: number;
  /** A failed look defers by this long… */
  failedLookDeferMs: number;
  /** …at most this many times for one request. */
  maxFailedLooks: number;
  /** Mail received this long before the previous step still counts (our clock against the server's). */
  skewMs: number;
}

export const defaultLastLookPolicy: LastLookPolicy = { deferMs: 2_000, maxDeferMs: 5 * 60_000, holdAlertMs: 30 * 60_000, failedLookDeferMs: 5_000, maxFailedLooks: 3, skewMs: 60_000 };

export type LookVerdict =
  /** boundReached: sent although the look failed, because the bound on failed looks was spent. */
  | { kind: 'send'; note: string; boundReached: boolean }
  | { kind: 'defer'; retryAt: number; reason: string };

/** How many times a request was deferred so far, by cause; since when for unread mail, and whether that was said. */
export interface Deferrals {
  unread: number;
  failed: number;
  heldSince?: number;
  alerted?: boolean;
}

/**
 * The pure decision: what the look found (unread mail, nothing unread, or no answer) and how often
 * this request was deferred already → send now, or defer until retryAt.
 */
export function judgeLook(found: { kind: 'unread'; count: number } | { kind: 'clear' } | { kind: 'failed'; reason: string }, so: Deferrals, now: number, p: LastLookPolicy): LookVerdict {
  if (found.kind === 'clear') return { kind: 'send', note: 'nothing unread from the lead', boundReached: false };
  if (found.kind === 'unread') {
    const wait = Math.min(p.maxDeferMs, p.deferMs * 2 ** Math.min(so.unread, 30));
    const held = so.unread === 0 ? '' : ` (held ${so.unread + 1} times: the sync role may be behind or stopped, or the message is where it does not read, such as the trash)`;
    return { kind: 'defer', retryAt: now + wait, reason: `mailbox last look: ${found.count} message(s) from the lead not yet read by the sync; held for the pipeline to decide${held}` };
  }
  if (so.failed >= p.maxFailedLooks) return { kind: 'send', note: `mailbox last look failed ${so.failed + 1} times (${found.reason}); sending`, boundReached: true };
  return { kind: 'defer', retryAt: now + p.failedLookDeferMs, reason: `mailbox last look failed (${found.reason}); deferred briefly` };
}

/** What the look needs from the store; the sender reads it with the send's material (send-context.ts). */
export interface LookContext {
  email: string;
  last_step_at: Date | null;
  created_at: Date;
  ours: string[] | null;
  has_written: boolean;
}

// -- name: last-look-context
// (The sender reads the same in its send-material statement, send-context.ts.)
// The lead's address, when the previous step was done, our latest Message-IDs to this enrollment,
// and whether the lead ever wrote to this mailbox (inbound rows are the pipeline's).
const contextSql = (claim: Claim) => sql<LookContext>`
  select l.email, e.last_step_at, e.created_at,
         (select array_agg(x.message_id) from (
            select m.message_id from message m
            where m.enrollment_id = e.id and m.direction = 'outbound' order by m.at desc limit 5) x) as ours,
         exists (select 1 from message m
                 where m.mailbox_id = ${claim.mailboxId} and m.direction = 'inbound' and lower(m.from_addr) = l.email_norm) as has_written
  from enrollment e join lead l on l.id = e.lead_id
  where e.id = ${claim.enrollmentId}`;

// -- name: last-look-read
// Which of the hits the pipeline has stored (or quarantined): by the connector's key, or by
// Message-ID (a second copy of a stored message, our own copy of a send).
const readSql = (mailboxId: string, keys: string[], ids: string[]) => sql<{ provider_key: string | null; message_id: string | null }>`
  select provider_key, message_id from message
  where mailbox_id = ${mailboxId} and (provider_key = any(${keys}::text[]) or message_id = any(${ids}::text[]))
  union all
  select provider_key, null from quarantine where mailbox_id = ${mailboxId} and provider_key = any(${keys}::text[])`;

/** What the look reads from the store for a claim; undefined when the enrollment is gone. */
export async function readLookContext(db: Db, claim: Claim): Promise<LookContext | undefined> {
  return (await contextSql(claim).execute(db)).rows[0];
}

export interface MailboxLastLookDeps extends OutboxDeps {
  transport: Pick<Transport, 'recentMailFrom'>;
  /** Asks the sync role to pull this mailbox now (SyncPool.poke, here or through the bus). */
  pullMailbox?: (mailboxId: string) => void;
  lastLookPolicy?: Partial<LastLookPolicy>;
  log?: Logger;
}

export class MailboxLastLook {
  private readonly policy: LastLookPolicy;
  private readonly deferrals = new Map<string, Deferrals>();

  constructor(private readonly d: MailboxLastLookDeps) {
    this.policy = { ...defaultLastLookPolicy, ...d.lastLookPolicy };
  }

  /**
   * Looks, and either lets the claim go on (send) or defers it (the claim is given back, due again
   * at retryAt, and the mailbox's sync is nudged). The caller must not send after a defer.
   */
  async check(claim: Claim, read?: LookContext): Promise<LookVerdict & { looked: boolean }> {
    // Given when the caller read it in its own statement (one round trip fewer a send).
    const ctx = read ?? (await readLookContext(this.d.store.db, claim));
    if (!ctx) return { kind: 'send', note: 'enrollment gone (the outbox re-check refuses it)', boundReached: false, looked: false };
    const isFollowUp = ctx.last_step_at !== null;
    if (!isFollowUp && !ctx.has_written) return { kind: 'send', note: 'first step to a lead who never wrote', boundReached: false, looked: false };
    const since = (ctx.last_step_at ?? ctx.created_at).getTime() - this.policy.skewMs;
    let result: RecentMailResult;
    try {
      result = await this.d.transport.recentMailFrom({ from: ctx.email, threadedOn: ctx.ours ?? [], since });
    } catch (e) {
      // A transport never throws for network trouble; a programming error must not be read as "clear".
      result = { status: 'unavailable', reason: e instanceof Error ? e.message : String(e) };
    }
    const so = this.deferrals.get(claim.requestId) ?? { unread: 0, failed: 0 };
    const unread = result.status === 'ok' ? await this.unread(claim.mailboxId, result.messages) : [];
    const found = result.status === 'unavailable' ? ({ kind: 'failed', reason: result.reason } as const) : unread.length ? ({ kind: 'unread', count: unread.length } as const) : ({ kind: 'clear' } as const);
    const v = judgeLook(found, so, this.d.clock.now(), this.policy);
    if (v.kind === 'send') {
      this.deferrals.delete(claim.requestId);
      if (found.kind !== 'clear') this.d.log?.warn({ requestId: claim.requestId, mailboxId: claim.mailboxId, note: v.note }, 'mailbox last look: sending after the deferral bound');
      return { ...v, looked: true };
    }
    const now = this.d.clock.now();
    const next: Deferrals = found.kind === 'unread' ? { ...so, unread: so.unread + 1, heldSince: so.heldSince ?? now } : { ...so, failed: so.failed + 1 };
    if (found.kind === 'unread' && !next.alerted && now - next.heldSince! >= this.policy.holdAlertMs) {
      next.alerted = true;
      this.d.log?.error({ requestId: claim.requestId, mailboxId: claim.mailboxId, enrollmentId: claim.enrollmentId, heldMinutes: Math.round((now - next.heldSince!) / 60_000), unread: unread.map((m) => m.key) }, 'mailbox last look: a step held for mail from the lead that the sync has not read (is the sync role running? is the message in the trash?)');
    }
    this.deferrals.set(claim.requestId, next);
    await deferClaim(this.d, claim, v.reason, v.retryAt);
    if (found.kind === 'unread') this.d.pullMailbox?.(claim.mailboxId);
    this.d.log?.info({ requestId: claim.requestId, mailboxId: claim.mailboxId, unread: unread.map((m) => m.key), reason: v.reason }, 'mailbox last look: step deferred');
    return { ...v, looked: true };
  }

  private async unread(mailboxId: string, hits: RecentMail[]): Promise<RecentMail[]> {
    if (hits.length === 0) return [];
    const keys = hits.map((h) => h.key);
    const ids = hits.flatMap((h) => (h.messageId ? [h.messageId] : []));
    const read = (await readSql(mailboxId, keys, ids).execute(this.d.store.db)).rows;
    const readKeys = new Set(read.map((r) => r.provider_key).filter((k): k is string => k !== null));
    const readIds = new Set(read.map((r) => r.message_id).filter((k): k is string => k !== null));
    return hits.filter((h) => !readKeys.has(h.key) && !(h.messageId !== null && readIds.has(h.messageId)));
  }
}
