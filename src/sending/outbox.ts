import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import { holdsSql } from '../ops/leases.ts';
import { reserveColumns, reserveLoaded, type ReserveRow } from './dispatch/reserve.ts';
import type { Random } from '../common/random.ts';
import { recordSendOutcome } from './dispatch/health.ts';
import { messageIdDomain, stepMessageId } from './step-message-id.ts';
import type { RecipientBounce, SentProof } from '../mailbox/connectors/outcomes.ts';
import type { Applied, EnrollmentService } from '../sequence/enrollment-service.ts';
import type { EngineEvent, TransitionResult } from '../sequence/model.ts';
import type { EnrollmentStateName, SendRequestState } from '../store/schema.ts';
import type { Store, Tx } from '../store/store.ts';

/**
 * The outbox: the claim protocol of the send queue (`send_request`, one row per enrollment and step).
 *
 * A request moves through these states; each arrow is one function below, one transaction each:
 *
 *   queued ──claimNext──► in_flight ──recordSent──► sent
 *     ▲  │                  │  │ │ └──recordFailure / recordBounce (permanent, or transient past maxAttempts)──► failed
 *     │  │                  │  │ └──markUnknown (no answer after handing over) / recoverInFlight──► unknown
 *     │  │                  │  └──recordFailure(transient): back to queued, later (retryDelay)
 *     │  │                  └──recordBounce(partial: accepted, some recipients refused): sent + bounce
 *     │  └──claimNext / lastLook refuse: enrollment stopped, paused or moved on, address suppressed──► cancelled
 *     │
 *     │      unknown ──resolveUnknown──► sent           a settled copy in Sent (proof of the send)
 *     │         │ │                   └► possibly_sent  a pending copy, or absence that proves nothing
 *     └─────────┘ └ (not found past unknownGraceMs, and absence is a proof: same Message-ID)
 *   possibly_sent ──resendByHand (a person asked)──► queued (manual_resend: same Message-ID)
 *
 * Promise 1 (at most once): the (enrollment_id, step_id) key makes a second request impossible; a
 * request leaves 'queued' only through a row lock taken with FOR UPDATE SKIP LOCKED, so two
 * senders never claim one request. A request whose fate is unknown (crash or timeout after the
 * transport may have accepted it) is sent again only when the mailbox's Sent folder PROVES it was
 * not handed over, under the rule the request was claimed with (`proof`, mailbox/connectors/outcomes.ts SentProof;
 * docs/architecture.md, "Exactly once"):
 *   copy_first     (SMTP, Cadenza writes Sent: the copy is APPENDed pending before the handover)
 *                  no copy → never handed over → queued again; pending copy → possibly_sent;
 *                  settled copy → sent.
 *   provider_copy  (Gmail, Graph, SMTP whose server files Sent) a copy → sent (a Graph draft:
 *                  accepted, submission unfinished → possibly_sent); none after unknownGraceMs →
 *                  queued again. Trusted for an SMTP mailbox only once one of its confirmed sends
 *                  was seen filed by the server (sent-copy-check.ts); before that, possibly_sent.
 *   null           (claimed before migration 0019) absence proves nothing → possibly_sent.
 * A retry goes under the SAME Message-ID, so that receivers and a later search see one message:
 * a step's Message-ID is a function of its key (step-message-id.ts), which is also what lets a
 * database restored to an earlier time recognise the steps it lost (reconcile-sent.ts).
 * A possibly_sent request is never retried automatically: the enrollment continued as if it had
 * been sent (step_sent, the next step threads on its Message-ID) and the user sees it, with
 * resendByHand to send it once more (same Message-ID: a receiver that got it dedupes).

 * Promise 2 (never after a stop): the claim locks the request AND its enrollment in one statement
 * (FOR UPDATE OF r, e SKIP LOCKED) and re-checks, under that lock, the enrollment's state and step,
 * the suppression list and the mailbox. A transition that stops or pauses the enrollment (it locks
 * the enrollment, then cancels its queued requests, effects.ts) either committed before (the
 * request is no longer queued, or the re-check sees the stop) or waits for the claim to commit and
 * then finds the request in flight: the claim happened before the stop was recorded. Taking both
 * locks without waiting (skip locked) means the claim never waits holding one of them, so it cannot
 * deadlock with the engine, which takes the same two rows the other way round. Between the claim
 * and the transport the sender may wait (pacing, rendering); lastLook() re-checks once more just
 * before the transport call, so what remains is the time the transport call itself takes (promise
 * 3 keeps the stop latency, and the transport deadline keeps that call, far below the gap between
 * steps).
 *
 * Ownership: one process owns a mailbox at a time (ARCHITECTURE, leases), and only that owner
 * calls these functions for the mailbox's requests. recoverInFlight() is what a new owner does
 * first: requests its predecessor left in flight become unknown.
 *
 * Every time comes from the injected clock, every id and jitter from the injected random source.
 */

export interface OutboxDeps {
  store: Store;
  /** Applies the engine's events (step_sent, send_failed, stop) in the outbox's own transactions. */
  service: EnrollmentService;
  clock: Clock;
  random: Random;
  policy?: Partial<RetryPolicy>;
  /**
   * The sender's lease on the mailbox (ops/leases.ts). When given, a claim is made only while this
   * token still holds the lease, checked inside the claiming transaction: a sender that lost its
   * mailbox (stalled past its lease, another process took over) cannot claim from its queue.
   */
  fence?: { resource: string; token: number };
  /**
   * Claim only requests the dispatcher planned (send_at reached), and only when the mailbox's
   * bucket grants the slot (sending/dispatch reserve.ts: working day, caps, gap, window). The
   * sender role always paces; the engine simulation and the protocol tests claim by due time.
   */
  paced?: boolean;
  /**
   * What the mailbox's transport can prove after a lost answer (Transport.sentProof), written on
   * each request it claims; resolveUnknown judges the request by it. Absent: nothing is proven
   * (an unknown request then becomes possibly_sent, never queued again).
   */
  proof?: SentProof;
  /**
   * For an SMTP mailbox with proof 'provider_copy': has the server been seen filing a copy of a
   * confirmed send (sent-copy-check.ts)? False: absence proves nothing yet. Default true.
   */
  providerCopyTrusted?: () => Promise<boolean>;
}

export interface RetryPolicy {
  /** Delay before the first retry of a transient failure (a 4xx answer, a refused connection). */
  baseMs: number;
  /** No single retry delay is longer than this. */
  maxMs: number;
  /** Claims a request may use up; a transient failure on the last one fails it for good. */
  maxAttempts: number;
  /**
   * How long a request stays 'unknown' before "not found in the Sent folder" is taken to mean it
   * was never accepted. Must exceed the provider's delay between accepting a message and showing
   * it in Sent (IMAP APPEND after SMTP, Gmail and Graph index lag), or a message could go twice.
   */
  unknownGraceMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  baseMs: 60_000,
  maxMs: 6 * 3_600_000,
  maxAttempts: 8,
  unknownGraceMs: 15 * 60_000,
};

function policyOf(deps: OutboxDeps): RetryPolicy {
  return { ...defaultRetryPolicy, ...deps.policy };
}

/**
 * The one place retry delays are computed: exponential in the attempts already made, capped, with
 * "equal jitter" (half fixed, half random) so that requests failing together do not retry together.
 * attempts = 1 (the first claim failed) gives [base/2, base).
 */
export function retryDelay(attempts: number, random: Random, policy: RetryPolicy = defaultRetryPolicy): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempts, 1) - 1, 30));
  return Math.floor(exp / 2 + random.next() * (exp / 2));
}

/** A request this process has claimed: everything the sending pipeline needs to render and send it. */
export interface Claim {
  requestId: string;
  workspaceId: string;
  enrollmentId: string;
  stepId: string;
  mailboxId: string;
  variantId: string | null;
  /** '<id@mailbox-domain>': the same on every retry of this request. */
  messageId: string;
  /** Claims so far, this one included. */
  attempts: number;
  dueAt: number;
  claimedAt: number;
  /** The lead's address. */
  to: string;
  /** The mailbox's address. */
  from: string;
  /** The Sent-folder rule it was handed over under (OutboxDeps.proof at the claim); null: none. */
  proof?: SentProof | null;
  /** A resend asked for by hand of a possibly-sent step: recording it does not advance the enrollment. */
  manualResend?: boolean;
}

export type ClaimResult =
  | { kind: 'claimed'; claim: Claim }
  /** The oldest due request was not sendable; it is cancelled with `reason` in last_error. Call again for the next. */
  | { kind: 'refused'; requestId: string; enrollmentId: string; reason: string }
  /** Nothing due in this mailbox's queue (or every due request is being claimed by someone else). */
  | { kind: 'empty' }
  /** deps.fence no longer holds the mailbox's lease: stop sending for it. */
  | { kind: 'fenced' }
  /** The mailbox's bucket refused the slot now (paced claims); the request goes back to the dispatcher. */
  | { kind: 'paced'; requestId: string; reason: string; retryAt: number | null };

interface RequestRow {
  id: string;
  workspace_id: string;
  enrollment_id: string;
  step_id: string;
  mailbox_id: string;
  variant_id: string | null;
  due_at: Date;
  message_id: string | null;
  attempts: number;
  updated_at: Date;
  proof: SentProof | null;
  manual_resend: boolean;
}

interface Recheck {
  state: EnrollmentStateName;
  waiting_for: 'timer' | 'send' | 'task' | null;
  next_step_id: string | null;
  email: string;
  suppressed: string | null;
  /** Null when the mailbox is gone. */
  mailbox_email: string | null;
}

// -- name: claim-next
// One statement: the fence, then the oldest due request of the mailbox with its enrollment, both
// locked; a request or enrollment another transaction holds is skipped, not waited for
// (graphile-worker's getJobs). With it, what the re-check needs: the enrollment's state and step,
// the lead's address and whether it is suppressed anywhere in the workspace (promise 6), and the
// sending mailbox's address; and for a paced claim what the reservation reads (reserveColumns),
// with the mailbox row locked FOR NO KEY UPDATE (waited for: reservations of one mailbox take
// turns, dispatch/reserve.ts), as reserveSlot's own read would. The fence (the lease row, FOR
// SHARE: a takeover cannot commit before this transaction does) is evaluated first; when it does
// not hold, no request is looked at. Ties on due_at are broken by id so the order is stable.
const claimNextSql = (mailboxId: string, now: number, paced: boolean, fence: OutboxDeps['fence']) => sql<{ fence_ok: boolean } & Partial<RequestRow & Recheck & ReserveRow>>`
  select f.ok as fence_ok, c.*
  from (select ${fence ? holdsSql(fence.resource, fence.token, now) : sql`true`} as ok) f
  left join lateral (
    select r.id, r.workspace_id, r.enrollment_id, r.step_id, r.mailbox_id, r.variant_id, r.due_at,
           r.message_id, r.attempts, r.updated_at, r.proof, r.manual_resend,
           e.state, e.waiting_for, e.next_step_id, l.email, sup.reason as suppressed, m.email as mailbox_email
           ${paced ? sql`, ${reserveColumns}` : sql``}
    from send_request r
    join enrollment e on e.id = r.enrollment_id
    join lead l on l.id = e.lead_id
    ${paced ? sql`join mailbox m on m.id = r.mailbox_id join sequence s on s.id = e.sequence_id join workspace w on w.id = r.workspace_id` : sql`left join mailbox m on m.id = r.mailbox_id`}
    left join suppression sup on sup.workspace_id = l.workspace_id and sup.email_norm = l.email_norm
    where f.ok and r.mailbox_id = ${mailboxId} and r.state = 'queued' and r.due_at <= ${new Date(now)}
      ${paced ? sql`and r.send_at <= ${new Date(now)} and r.send_at >= r.due_at` : sql``}
    order by ${paced ? sql`r.send_at` : sql`r.due_at`}, r.id
    limit 1
    for update of r, e skip locked ${paced ? sql`for no key update of m` : sql``}
  ) c on true`;

// -- name: claim
// Only a queued request is claimed (the row lock above makes the check race-free). A Message-ID
// given on an earlier attempt is kept: a copy may exist under it (one claimed before step
// Message-IDs were derived from the key, step-message-id.ts, keeps its random one).
// The proof is the rule of the transport that is about to send it (a mailbox's setting may change).
// A paced claim's reservation is granted here too (claimed_at: from now on it counts, reserve.ts).
const markClaimedSql = (id: string, messageId: string, proof: SentProof | null, now: number, granted: boolean) => sql<{ message_id: string; attempts: number }>`
  update send_request
  set state = 'in_flight', message_id = coalesce(message_id, ${messageId}), attempts = attempts + 1,
      proof = ${proof}, updated_at = ${new Date(now)}${granted ? sql`, claimed_at = ${new Date(now)}` : sql``}
  where id = ${id} and state = 'queued'
  returning message_id, attempts`;

// -- name: cancel-request
// A queued request (the claim's re-check), or one in flight under the claim's Message-ID (lastLook).
const cancelSql = (id: string, from: 'queued' | 'in_flight', reason: string, now: number, messageId: string | null = null) => sql`
  update send_request set state = 'cancelled', last_error = ${reason}, updated_at = ${new Date(now)}
  where id = ${id} and state = ${from} ${messageId !== null ? sql`and message_id = ${messageId}` : sql``}`;

type ApplyInTx = (enrollmentId: string, event: EngineEvent) => Promise<TransitionResult>;

/**
 * One transaction in which the outbox's own writes and the engine's events commit together (or
 * not at all); the scheduler's timer listeners hear of the engine's changes after the commit.
 */
async function inTx<T>(deps: OutboxDeps, fn: (tx: Tx, apply: ApplyInTx) => Promise<T>): Promise<T> {
  const applied: Applied[] = [];
  const now = deps.clock.now();
  const out = await deps.store.db.transaction().execute((tx) =>
    fn(tx, async (enrollmentId, event) => {
      const a = await deps.service.applyInTx(tx, enrollmentId, event, now);
      applied.push(...a);
      return a[0]!.result;
    }),
  );
  deps.service.notify(applied);
  return out;
}

/** Enrollment states after which nothing more may go to the lead, a resend by hand included. */
const stoppedStates: ReadonlySet<EnrollmentStateName> = new Set(['replied', 'bounced', 'unsubscribed', 'stopped', 'failed', 'moved']);

/**
 * Why an enrollment may not be sent this step now; null when it may. A resend by hand (of a step
 * the enrollment already continued past) is refused only by a stop, a suppression or a lost mailbox.
 */
function refusal(r: Recheck | undefined, stepId: string, manualResend = false): string | null {
  if (!r) return 'enrollment not found';
  if (r.suppressed) return `address suppressed (${r.suppressed})`;
  if (manualResend) {
    if (stoppedStates.has(r.state)) return `enrollment ${r.state}`;
    return r.mailbox_email === null ? 'mailbox not found' : null;
  }
  if (r.state !== 'active') return `enrollment ${r.state}`;
  if (r.waiting_for !== 'send') return `enrollment is waiting for ${r.waiting_for ?? 'nothing'}, not this send`;
  if (r.next_step_id !== stepId) return 'enrollment awaits another step';
  if (r.mailbox_email === null) return 'mailbox not found';
  return null;
}

/**
 * '<id@domain>' with the mailbox's domain (RFC 5322 §3.6.4; the domain part names the sender's
 * host), a fresh id: for messages that are not a sequence step (replies from the inbox). A step's
 * Message-ID comes from its key instead (step-message-id.ts).
 */
export function makeMessageId(mailboxEmail: string, nowMs: number, random: Random): string {
  return `<${newId(nowMs, random)}@${messageIdDomain(mailboxEmail)}>`;
}

/**
 * Claims the oldest due request of the mailbox, in one transaction: lock it and its enrollment
 * (skip locked), re-check the enrollment and the suppression list, then either refuse it
 * (cancelled, with the reason in last_error; a live enrollment whose address is suppressed is
 * stopped in the same transaction, so it does not wait for a send that will never come) or mark
 * it in flight with its Message-ID.
 */
export async function claimNext(deps: OutboxDeps, mailboxId: string): Promise<ClaimResult> {
  const now = deps.clock.now();
  const paced = !!deps.paced;
  return inTx(deps, async (tx, apply): Promise<ClaimResult> => {
    const row = (await claimNextSql(mailboxId, now, paced, deps.fence).execute(tx)).rows[0]!;
    if (!row.fence_ok) return { kind: 'fenced' };
    if (!row.id) return { kind: 'empty' };
    const req = row as RequestRow & Recheck & ReserveRow;
    const check: Recheck = req;
    const why = refusal(check, req.step_id, req.manual_resend);
    if (why !== null) {
      await cancelSql(req.id, 'queued', why, now).execute(tx);
      if (check.suppressed && (check.state === 'active' || check.state === 'paused')) {
        await apply(req.enrollment_id, { type: 'stop', reason: 'address suppressed' });
      }
      return { kind: 'refused', requestId: req.id, enrollmentId: req.enrollment_id, reason: why };
    }
    if (paced) {
      const slot = await reserveLoaded(tx, req, now);
      if (!slot.granted) return { kind: 'paced', requestId: req.id, reason: slot.reason, retryAt: slot.retryAt };
    }
    const proof = deps.proof ?? null;
    const claimed = (await markClaimedSql(req.id, stepMessageId(check.mailbox_email!, req.enrollment_id, req.step_id), proof, now, paced).execute(tx)).rows[0]!;
    return {
      kind: 'claimed',
      claim: {
        requestId: req.id,
        workspaceId: req.workspace_id,
        enrollmentId: req.enrollment_id,
        stepId: req.step_id,
        mailboxId: req.mailbox_id,
        variantId: req.variant_id,
        messageId: claimed.message_id,
        attempts: claimed.attempts,
        dueAt: req.due_at.getTime(),
        claimedAt: now,
        to: check.email,
        from: check.mailbox_email!,
        proof,
        manualResend: req.manual_resend,
      },
    };
  });
}

// -- name: last-look
const lastLookSql = (claim: Claim) => sql<Recheck & { request_state: SendRequestState; message_id: string | null; manual_resend: boolean }>`
  select r.state as request_state, r.message_id, r.manual_resend, e.state, e.waiting_for, e.next_step_id, l.email,
         s.reason as suppressed, r.mailbox_id::text as mailbox_email
  from send_request r
  join enrollment e on e.id = r.enrollment_id
  join lead l on l.id = e.lead_id
  left join suppression s on s.workspace_id = l.workspace_id and s.email_norm = l.email_norm
  where r.id = ${claim.requestId}`;

/**
 * The re-check just before the transport call: is the request still this claim's, and the
 * enrollment still sendable? If not, the request is cancelled (it never reached a server, so it may
 * be revived under the same key by a later resume) and the caller must not send.
 */
export async function lastLook(deps: OutboxDeps, claim: Claim): Promise<{ ok: true } | { ok: false; reason: string }> {
  const now = deps.clock.now();
  // One read, no transaction: the cancel below is itself guarded (still in flight under this
  // claim's Message-ID), and a stop committed after the read is the race the transport call's
  // deadline bounds (file comment, promise 2).
  const r = (await lastLookSql(claim).execute(deps.store.db)).rows[0];
  if (!r || r.request_state !== 'in_flight' || r.message_id !== claim.messageId) {
    return { ok: false, reason: `request is ${r?.request_state ?? 'gone'}, no longer this claim's` };
  }
  const why = refusal(r, claim.stepId, r.manual_resend);
  if (why === null) return { ok: true };
  await cancelSql(claim.requestId, 'in_flight', `${why} (before sending)`, now, claim.messageId).execute(deps.store.db);
  return { ok: false, reason: why };
}

export interface SentDetails {
  subject?: string | null;
  inReplyTo?: string | null;
  refs?: string[];
  threadId?: string | null;
}

// -- name: mark-sent
// From in_flight (the transport said yes) or unknown (settled from the Sent folder), and only
// under the claim's Message-ID: a second report of the same send changes nothing. `state` is
// 'possibly_sent' when the Sent folder shows only that it may have gone. The outbound message row
// is written in the same statement, only for a request marked now (an existing row under the same
// Message-ID is kept). Any number of sends at once (a batch, recordSentBatch).
const markSentSql = (sends: SentRow[], state: 'sent' | 'possibly_sent', note: string | null, now: number) => sql<{ id: string }>`
  with u as (
    select * from jsonb_to_recordset(${JSON.stringify(sends)}::jsonb) as u(
      request_id uuid, message_id text, row_id uuid, workspace_id uuid, mailbox_id uuid, enrollment_id uuid,
      in_reply_to text, refs text[], thread_id text, subject text, from_addr text, to_addr text, at timestamptz)),
  marked as (
    update send_request r set state = ${state}, last_error = ${note}, updated_at = ${new Date(now)}
    from u
    where r.id = u.request_id and r.message_id = u.message_id and r.state in ('in_flight', 'unknown')
    returning r.id),
  outbound as (
    insert into message (id, workspace_id, mailbox_id, enrollment_id, send_request_id, direction, message_id, in_reply_to, refs, thread_id, subject, from_addr, to_addrs, at)
    select u.row_id, u.workspace_id, u.mailbox_id, u.enrollment_id, u.request_id, 'outbound', u.message_id, u.in_reply_to,
           coalesce(u.refs, '{}'), u.thread_id, u.subject, u.from_addr, array[u.to_addr], u.at
    from u join marked on marked.id = u.request_id
    on conflict (mailbox_id, message_id) do nothing)
  select id from marked`;

interface SentRow {
  request_id: string;
  message_id: string;
  row_id: string;
  workspace_id: string;
  mailbox_id: string;
  enrollment_id: string;
  in_reply_to: string | null;
  refs: string[];
  thread_id: string | null;
  subject: string | null;
  from_addr: string;
  to_addr: string;
  at: string;
}

/** A send as markSentSql takes it; the outbound row's id is drawn here. */
function sentRow(deps: OutboxDeps, s: RecordedSend, now: number): SentRow {
  const { claim, sentAt, details: d = {} } = s;
  return {
    request_id: claim.requestId,
    message_id: claim.messageId,
    row_id: newId(now, deps.random),
    workspace_id: claim.workspaceId,
    mailbox_id: claim.mailboxId,
    enrollment_id: claim.enrollmentId,
    in_reply_to: d.inReplyTo ?? null,
    refs: d.refs ?? [],
    thread_id: d.threadId ?? null,
    subject: d.subject ?? null,
    from_addr: claim.from,
    to_addr: claim.to,
    at: new Date(sentAt).toISOString(),
  };
}

/** One send the transport accepted, to be recorded. */
export interface RecordedSend {
  claim: Claim;
  sentAt: number;
  details?: SentDetails;
}

/**
 * Records a send the server accepted, in one transaction: the request is marked sent, the outbound
 * message row is written, and the engine's step_sent event is applied (which plans the next step).
 * Returns false when it was already recorded (nothing is written twice).
 */
export async function recordSent(deps: OutboxDeps, claim: Claim, sentAt: number, details: SentDetails = {}): Promise<boolean> {
  return inTx(deps, (tx, apply) => markSentInTx(tx, apply, deps, claim, sentAt, details, 'sent', null));
}

/**
 * recordSent for many sends in ONE transaction (a group commit, sent-recorder.ts): the requests
 * marked and their outbound rows in one statement, every step_sent in one engine batch
 * (EnrollmentService.applyEachInTx). Each send is recorded exactly as recordSent would; the
 * result says, send by send, whether it was recorded now (false: it already was).
 */
export async function recordSentBatch(deps: OutboxDeps, sends: readonly RecordedSend[]): Promise<boolean[]> {
  if (sends.length === 0) return [];
  const now = deps.clock.now();
  const applied: Applied[] = [];
  const marked = await deps.store.db.transaction().execute(async (tx) => {
    const ids = new Set((await markSentSql(sends.map((s) => sentRow(deps, s, now)), 'sent', null, now).execute(tx)).rows.map((r) => r.id));
    const steps = sends.filter((s) => ids.has(s.claim.requestId) && !s.claim.manualResend);
    applied.push(...(await deps.service.applyEachInTx(tx, steps.map(({ claim, sentAt }) => ({ enrollmentId: claim.enrollmentId, event: { type: 'step_sent', stepId: claim.stepId, at: sentAt, messageId: claim.messageId } as const })), now)).flat());
    return ids;
  });
  deps.service.notify(applied);
  return sends.map((s) => marked.has(s.claim.requestId));
}

/**
 * The send of `claim` as recorded inside the caller's transaction: marked `state`, the outbound
 * row, and step_sent (not for a resend by hand: the enrollment already continued past the step).
 */
async function markSentInTx(tx: Tx, apply: ApplyInTx, deps: OutboxDeps, claim: Claim, sentAt: number, details: SentDetails, state: 'sent' | 'possibly_sent', note: string | null): Promise<boolean> {
  const now = deps.clock.now();
  const marked = (await markSentSql([sentRow(deps, { claim, sentAt, details }, now)], state, note, now).execute(tx)).rows.length > 0;
  if (!marked) return false;
  if (!claim.manualResend) await apply(claim.enrollmentId, { type: 'step_sent', stepId: claim.stepId, at: sentAt, messageId: claim.messageId });
  return true;
}

/**
 * The server accepted the message for some recipients and refused others at RCPT (5xx): the send,
 * and a bounce for each refused recipient (the enrollment stops as bounced, the address is
 * suppressed, the mailbox's health counts it), in ONE transaction: a crash between the two would
 * leave a recorded send whose bounce is lost.
 */
export async function recordSentWithBounces(deps: OutboxDeps, claim: Claim, sentAt: number, details: SentDetails, bounced: RecipientBounce[]): Promise<boolean> {
  return inTx(deps, async (tx, apply) => {
    const marked = await markSentInTx(tx, apply, deps, claim, sentAt, details, 'sent', null);
    if (marked) for (const b of bounced) await bounceInTx(tx, apply, deps, claim, b.enhancedStatus, b.diagnostic);
    return marked;
  });
}

/**
 * Every recipient was refused at RCPT: the enrollment stops as bounced (hard for a 5xx or no
 * status), the mailbox's health counts it, and the request fails, all in ONE transaction, so a
 * crash never leaves the bounced request in flight.
 */
export async function recordBounce(deps: OutboxDeps, claim: Claim, b: RecipientBounce | undefined): Promise<void> {
  const status = b?.enhancedStatus ?? null;
  const diagnostic = b?.diagnostic ?? 'refused at RCPT';
  const reason = `bounced at RCPT: ${status ?? ''} ${b?.diagnostic ?? ''}`.trim();
  await inTx(deps, async (tx, apply) => {
    const failed = (await failSql(claim, reason, deps.clock.now()).execute(tx)).rows.length > 0;
    if (!failed) return; // already settled by someone else: nothing is applied twice
    await bounceInTx(tx, apply, deps, claim, status, diagnostic);
  });
}

async function bounceInTx(tx: Tx, apply: ApplyInTx, deps: OutboxDeps, claim: Claim, status: string | null, diagnostic: string): Promise<void> {
  const hard = status === null || status.startsWith('5');
  await apply(claim.enrollmentId, { type: 'bounce', hard, reason: `${status ?? ''} ${diagnostic}`.trim() });
  // The mailbox's health counts its bounces: too many and it pauses itself (burnt-domain guard).
  await recordSendOutcome(tx, { kind: 'bounce', requestId: claim.requestId, hard, at: deps.clock.now() });
}

// -- name: mark-unknown
const markUnknownSql = (claim: Claim, reason: string, now: number) => sql`
  update send_request set state = 'unknown', last_error = ${reason}, updated_at = ${new Date(now)}
  where id = ${claim.requestId} and message_id = ${claim.messageId} and state = 'in_flight'`;

/**
 * The transport may have accepted the message but the sender cannot tell (a timeout after DATA, a
 * dropped connection, a crash): the request waits, neither sent nor retried, until resolveUnknown.
 */
export async function markUnknown(deps: OutboxDeps, claim: Claim, reason: string): Promise<void> {
  await markUnknownSql(claim, reason, deps.clock.now()).execute(deps.store.db);
}

// -- name: recover-in-flight
// Fenced like the claim: a loop that recovers after an error (sender-pool.ts) may have lost the
// mailbox meanwhile, and must not turn its successor's sends in flight into unknowns.
const recoverSql = (mailboxId: string, now: number, fence: OutboxDeps['fence']) => sql<{ id: string }>`
  update send_request set state = 'unknown', last_error = 'sender stopped while the request was in flight',
         updated_at = ${new Date(now)}
  where mailbox_id = ${mailboxId} and state = 'in_flight' and ${fence ? holdsSql(fence.resource, fence.token, now) : sql`true`}
  returning id`;

/**
 * What the mailbox's new owner does before its first claim (after a crash, a restart or a lease
 * change): its predecessor's in-flight requests may or may not have reached the server, so they
 * become unknown. Only the owner of the mailbox may call this. Returns how many.
 */
export async function recoverInFlight(deps: OutboxDeps, mailboxId: string): Promise<number> {
  return (await recoverSql(mailboxId, deps.clock.now(), deps.fence).execute(deps.store.db)).rows.length;
}

// -- name: list-unknown
const listUnknownSql = (mailboxId: string, limit: number) => sql<RequestRow & { to: string; from: string }>`
  select r.id, r.workspace_id, r.enrollment_id, r.step_id, r.mailbox_id, r.variant_id, r.due_at,
         r.message_id, r.attempts, r.updated_at, r.proof, r.manual_resend, l.email as "to", m.email as "from"
  from send_request r
  join enrollment e on e.id = r.enrollment_id
  join lead l on l.id = e.lead_id
  join mailbox m on m.id = r.mailbox_id
  where r.mailbox_id = ${mailboxId} and r.state = 'unknown'
  order by r.updated_at, r.id
  limit ${limit}`;

export interface UnknownRequest extends Claim {
  /** When it became unknown. */
  since: number;
}

/** The mailbox's unknown requests, oldest first, to be searched for in its Sent folder. */
export async function listUnknown(deps: OutboxDeps, mailboxId: string, limit = 100): Promise<UnknownRequest[]> {
  const rows = (await listUnknownSql(mailboxId, limit).execute(deps.store.db)).rows;
  return rows.map((r) => ({
    requestId: r.id,
    workspaceId: r.workspace_id,
    enrollmentId: r.enrollment_id,
    stepId: r.step_id,
    mailboxId: r.mailbox_id,
    variantId: r.variant_id,
    messageId: r.message_id!,
    attempts: r.attempts,
    dueAt: r.due_at.getTime(),
    claimedAt: r.updated_at.getTime(),
    to: r.to,
    from: r.from,
    proof: r.proof,
    manualResend: r.manual_resend,
    since: r.updated_at.getTime(),
  }));
}

// -- name: requeue-unknown
// Back to the queue, due now, keeping its Message-ID (claim keeps an existing one).
const requeueSql = (u: UnknownRequest, why: string, now: number) => sql`
  update send_request set state = 'queued', due_at = ${new Date(now)},
         last_error = ${`${why}; retrying under the same Message-ID`},
         updated_at = ${new Date(now)}
  where id = ${u.requestId} and message_id = ${u.messageId} and state = 'unknown'`;

export type Resolution = 'sent' | 'possibly_sent' | 'requeued' | 'waiting';

/** What a search of the Sent folder found for an unknown request (null: searched, nothing). */
export interface SentFolderHit {
  sentAt: number;
  /** Every copy is still marked pending (copy_first), or only a Graph draft exists: it may not have gone. */
  pending?: boolean;
}

/**
 * Settles an unknown request from a search of the mailbox's Sent folder for its Message-ID, by
 * the rule it was claimed under (the file comment, and docs/architecture.md "Exactly once"):
 * a settled copy → sent; past unknownGraceMs since it became unknown (before: waiting), a pending
 * copy → possibly_sent, nothing → queued again (same Message-ID) when absence proves it was not
 * handed over, possibly_sent when it proves nothing.
 * possibly_sent is recorded like a send (step_sent: the sequence continues threaded on it) and is
 * never retried automatically.
 */
export async function resolveUnknown(deps: OutboxDeps, u: UnknownRequest, found: SentFolderHit | null): Promise<Resolution> {
  const now = deps.clock.now();
  if (found && !found.pending) {
    await recordSent(deps, u, found.sentAt);
    return 'sent';
  }
  // The grace period applies to every rule: a provider's filing delay (provider_copy), a Graph
  // submission still running (its draft), and a predecessor that stalled past its lease and may
  // still be about to hand it over or settle its copy.
  if (now - u.since < policyOf(deps).unknownGraceMs) return 'waiting';
  if (found) {
    await recordPossiblySent(deps, u, found.sentAt, 'the Sent folder holds its copy still marked pending (or only a draft): it may or may not have gone out');
    return 'possibly_sent';
  }
  const proven = u.proof === 'copy_first' || (u.proof === 'provider_copy' && (await (deps.providerCopyTrusted?.() ?? true)));
  if (!proven) {
    const why =
      u.proof === 'provider_copy'
        ? "not in the Sent folder, but this mailbox's server has not yet been seen filing its sent copies, so absence proves nothing"
        : 'not in the Sent folder, and it was handed over under a rule whose absence proves nothing';
    await recordPossiblySent(deps, u, u.since, why);
    return 'possibly_sent';
  }
  const why = u.proof === 'copy_first' ? 'no Sent copy (written before every handover): never handed over' : 'not in the Sent folder after the grace period';
  await requeueSql(u, why, now).execute(deps.store.db);
  return 'requeued';
}

/** An unknown request settled as possibly sent: recorded like a send, with `why` in last_error. */
async function recordPossiblySent(deps: OutboxDeps, u: UnknownRequest, at: number, why: string): Promise<boolean> {
  return inTx(deps, (tx, apply) => markSentInTx(tx, apply, deps, u, at, {}, 'possibly_sent', `possibly sent: ${why}`));
}

// -- name: resend-by-hand
// Only a possibly-sent request, and only while its enrollment has not stopped; the Message-ID is kept.
const resendSql = (requestId: string, workspaceId: string, now: number) => sql<{ id: string; mailbox_id: string | null }>`
  update send_request r set state = 'queued', manual_resend = true, due_at = ${new Date(now)},
         send_at = null, planned_at = null, plan_note = null,
         last_error = 'resend asked for by hand after possibly sent (same Message-ID)', updated_at = ${new Date(now)}
  from enrollment e
  where r.id = ${requestId} and r.workspace_id = ${workspaceId} and r.state = 'possibly_sent'
    and e.id = r.enrollment_id and e.state not in ('replied', 'bounced', 'unsubscribed', 'stopped', 'failed', 'moved')
  returning r.id, r.mailbox_id`;

export type ResendResult = { ok: true; mailboxId: string | null } | { ok: false; reason: 'not_possibly_sent' | 'enrollment_stopped' | 'not_found' };

/**
 * A person asked to send a possibly-sent step again: the request is queued once more, marked
 * manual_resend (the claim does not require the enrollment to be waiting for this step, and
 * recording it does not apply step_sent again), under the SAME Message-ID, so that a receiver
 * that did get the first one sees a duplicate it can drop (RFC 5322 3.6.4), and replies to
 * either thread the same way. Domain result; the API maps it.
 */
export async function resendByHand(deps: Pick<OutboxDeps, 'store' | 'clock'>, workspaceId: string, requestId: string): Promise<ResendResult> {
  const now = deps.clock.now();
  const row = (await resendSql(requestId, workspaceId, now).execute(deps.store.db)).rows[0];
  if (row) return { ok: true, mailboxId: row.mailbox_id };
  const r = await deps.store.db
    .selectFrom('send_request as r')
    .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
    .select(['r.state', 'e.state as enrollment_state'])
    .where('r.id', '=', requestId)
    .where('r.workspace_id', '=', workspaceId)
    .executeTakeFirst();
  if (!r) return { ok: false, reason: 'not_found' };
  return { ok: false, reason: r.state === 'possibly_sent' ? 'enrollment_stopped' : 'not_possibly_sent' };
}

export interface Failure {
  /** A 5xx answer, a rejected recipient, an invalid address: sending again cannot help. */
  permanent: boolean;
  reason: string;
  /** The provider asked for this delay (HTTP Retry-After): used instead of the backoff when longer. */
  retryAfterMs?: number | null;
}

export type FailureOutcome = { kind: 'retry'; at: number } | { kind: 'failed' };

// -- name: retry-later
const retrySql = (claim: Claim, at: number, reason: string, now: number) => sql`
  update send_request set state = 'queued', due_at = ${new Date(at)}, last_error = ${reason}, updated_at = ${new Date(now)}
  where id = ${claim.requestId} and message_id = ${claim.messageId} and state = 'in_flight'`;

// -- name: fail-request
const failSql = (claim: Claim, reason: string, now: number) => sql<{ id: string }>`
  update send_request set state = 'failed', last_error = ${reason}, updated_at = ${new Date(now)}
  where id = ${claim.requestId} and message_id = ${claim.messageId} and state = 'in_flight'
  returning id`;

/**
 * The server refused the message (it was NOT accepted; use markUnknown when that is not certain).
 * Transient: queued again after retryDelay(attempts). Permanent, or transient on the last allowed
 * attempt: the request fails and, in the same transaction, the engine's send_failed stops the
 * enrollment as failed.
 */
export async function recordFailure(deps: OutboxDeps, claim: Claim, failure: Failure): Promise<FailureOutcome> {
  const now = deps.clock.now();
  const policy = policyOf(deps);
  if (!failure.permanent && claim.attempts < policy.maxAttempts) {
    const at = now + Math.max(retryDelay(claim.attempts, deps.random, policy), failure.retryAfterMs ?? 0);
    await retrySql(claim, at, `transient: ${failure.reason}`, now).execute(deps.store.db);
    return { kind: 'retry', at };
  }
  const reason = failure.permanent ? failure.reason : `${failure.reason} (after ${claim.attempts} attempts)`;
  await inTx(deps, async (tx, apply) => {
    const failed = (await failSql(claim, reason, now).execute(tx)).rows.length > 0;
    if (failed) await apply(claim.enrollmentId, { type: 'send_failed', stepId: claim.stepId, permanent: true, reason });
  });
  return { kind: 'failed' };
}

// -- name: release-claim
const releaseSql = (claim: Claim, reason: string, now: number) => sql`
  update send_request set state = 'queued', attempts = greatest(attempts - 1, 0), last_error = ${reason}, updated_at = ${new Date(now)}
  where id = ${claim.requestId} and message_id = ${claim.messageId} and state = 'in_flight'`;

/**
 * Gives a claim back untouched, not counted as an attempt: the request certainly did not reach a
 * server and it was not its fault (the mailbox's credentials were refused, the sender is stopping
 * before the transport call). It keeps its Message-ID and due time.
 */
export async function releaseClaim(deps: OutboxDeps, claim: Claim, reason: string): Promise<void> {
  await releaseSql(claim, reason, deps.clock.now()).execute(deps.store.db);
}

// -- name: defer-claim
// Back to the queue untouched, as releaseClaim, but due again at `at`: a paced request keeps its
// planned slot moved to `at` (send_at >= due_at still holds, due_at <= now < at), an unpaced one
// (no slot) is due at `at`. Either way its next claim passes the same re-checks and pacing.
const deferSql = (claim: Claim, reason: string, at: number, now: number) => sql`
  update send_request
  set state = 'queued', attempts = greatest(attempts - 1, 0), last_error = ${reason}, updated_at = ${new Date(now)},
      due_at = case when send_at is null then ${new Date(at)} else due_at end,
      send_at = case when send_at is null then null else ${new Date(at)}::timestamptz end
  where id = ${claim.requestId} and message_id = ${claim.messageId} and state = 'in_flight'`;

/**
 * Puts a claim back untouched (not counted as an attempt, same Message-ID) to be claimed again at
 * `at`: the mailbox last look found mail the sync has not read yet (mailbox-last-look.ts), and the
 * pipeline must decide before this step may leave. The request never reached a server.
 */
export async function deferClaim(deps: OutboxDeps, claim: Claim, reason: string, at: number): Promise<void> {
  await deferSql(claim, reason, at, deps.clock.now()).execute(deps.store.db);
}
