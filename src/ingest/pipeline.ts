import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { cadenzaError, isCadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import type { FolderActions } from '../mailbox/connectors/connector.ts';
import type { FetchedMessage, SyncBatch } from '../mailbox/sync/source.ts';
import { stopLatenciesUpdate, stopLatencyMs } from '../ops/figures.ts';
import type { Metrics } from '../ops/metrics.ts';
import { recogniseUnsubscribeRequest } from '../sending/compose/unsubscribe.ts';
import { recordSendOutcome } from '../sending/dispatch/health.ts';
import type { Applied, EnrollmentService } from '../sequence/enrollment-service.ts';
import { isTerminal, type EngineEvent } from '../sequence/model.ts';
import { suppress, stopCompany } from '../sequence/suppress.ts';
import type { Store, Tx } from '../store/store.ts';
import { isTransientStoreError } from '../store/transient.ts';
import { conditionHolds, decide, defaultActOptions, type ActOptions, type Decision, type EnrollmentTarget, type IngestStep, type TargetOutcome } from './act.ts';
import { enrollmentsOfSends, insertInbound, insertQuarantine, loadTargets, saveCursor, type InboundRow, type QuarantineRow } from './store.ts';
import { loadThreadContext, matchThread, threadKeys, type ThreadMatch } from './thread.ts';
import type { Classification, ParsedMail } from './types.ts';

/**
 * The ingestion pipeline for one SyncBatch of one mailbox:
 *
 *   outside any transaction (CPU):  parse (quarantine on failure) → new text → classify, in the
 *                                   sync role's worker pool under a deadline (quarantine: timeout)
 *                                   → the warmup network's receiving side takes its mail
 *                                   (WarmupRecogniser), which goes no further
 *   in ONE transaction:             fencing check → thread → decide (act.ts) → insert inbound rows
 *                                   (dedup) → carry out the decision's steps (carryOut: suppressions,
 *                                   engine events, company stop, bounce health) → quarantine rows →
 *                                   the batch's cursor
 *   after commit:                   notify the engine (timers), metrics
 *
 * Promise 5: the cursor is written with the signals it yielded, so a crash before the commit
 * replays the batch and a crash after it never skips one. A replay cannot act twice: a message acts
 * only if its row was inserted now (unique per mailbox + provider key and per mailbox + Message-ID).
 * Promise 8: a message that cannot be parsed is quarantined with its reason; the batch goes on.
 */

/** The CPU stages, injected (STYLE habit 8); the defaults are in pipeline-steps.ts. */
export interface IngestSteps {
  parse(raw: Uint8Array): Promise<{ ok: true; mail: ParsedMail } | { ok: false; reason: string }>;
  newText(mail: ParsedMail): string;
  classify(mail: ParsedMail, newText: string): Promise<Classification> | Classification;
  /**
   * All three at once, where they run elsewhere: the sync role's worker pool
   * (worker/prepare-pool.ts) runs them off the main thread under a deadline. Without it, the
   * three above run here, one after the other (runSteps in pipeline-steps.ts).
   */
  /** `key`: the mailbox's workspace, whose turn the message waits in where the stages are shared. */
  prepare?(raw: Uint8Array, key?: string): Promise<PreparedMail>;
}

/** What the CPU stages make of one message: a parsed and classified mail, or a quarantine reason. */
export type PreparedMail = { ok: true; mail: ParsedMail; newText: string; classification: Classification } | { ok: false; reason: string };

/**
 * Characters of `text` and `newText` the pipeline reads after the CPU stages (the stored excerpt
 * and new text, the unsubscribe-token check): what a worker thread sends back, so that the main
 * thread never copies or collects megabytes per message.
 */
export const MAIN_THREAD_TEXT_CHARS = 20_000;

/**
 * Characters of a reply's HTML kept: the inbox shows it in a sandboxed frame (src/inbox/reply-html.ts).
 * A reply's new part sits at the top; a longer document is cut (the sanitizer closes what the cut
 * leaves open) and the frame says so.
 */
export const STORED_HTML_CHARS = 100_000;

/**
 * A prepared mail cut to what the pipeline's transaction reads: the envelope fields, the opening
 * of the text and new text, the opening of the HTML the inbox shows; no parts or headers (the
 * classifier, which needs them, has run).
 */
export function forMainThread(p: PreparedMail): PreparedMail {
  if (!p.ok) return p;
  const cut = (s: string) => (s.length > MAIN_THREAD_TEXT_CHARS ? s.slice(0, MAIN_THREAD_TEXT_CHARS) : s);
  return { ...p, mail: { ...p.mail, text: cut(p.mail.text), html: p.mail.html ? p.mail.html.slice(0, STORED_HTML_CHARS) : null, parts: [], headers: [] }, newText: cut(p.newText) };
}

/** The folder actions the warmup receiving side uses (the mailbox's connector, when it has them). */
export type WarmupFolders = Pick<FolderActions, 'moveToInbox' | 'flag' | 'markRead'>;

/**
 * The warmup network's receiving side (warmup/receive/recogniser.ts), injected by the composition
 * root so that ingest does not import warmup. Given a batch's parsed messages, it answers which are
 * warmup mail, having recorded and acted on them; the pipeline drops those before anything
 * user-facing (no inbound row, so no inbox view, analytics, webhook, CRM activity or signal).
 */
export interface WarmupRecogniser {
  take(mailbox: MailboxRef, messages: ReadonlyArray<{ fetched: FetchedMessage; from: string | null }>, folders: WarmupFolders | null): Promise<Set<number>>;
}

export interface IngestDeps {
  store: Store;
  service: EnrollmentService;
  clock: Clock;
  random: Random;
  steps: IngestSteps;
  /** The key of our List-Unsubscribe tokens: a mail to our unsubscribe mailto: is honoured exactly. */
  trackingKey?: Buffer;
  metrics?: Metrics;
  log?: Logger;
  options?: Partial<IngestOptions>;
  /** Absent: no warmup network here, every message goes on. */
  warmup?: WarmupRecogniser;
}

export interface IngestOptions extends ActOptions {
  /** Sender + subject threading looks this far back (default 90 days). */
  recentSendsMs: number;
  /** Stored bounds (the full message stays on the server). */
  newTextChars: number;
  excerptChars: number;
  quarantineBytes: number;
}

export const defaultIngestOptions: IngestOptions = {
  ...defaultActOptions,
  recentSendsMs: 90 * 86_400_000,
  newTextChars: 20_000,
  excerptChars: 2_000,
  quarantineBytes: 256 * 1024,
};

export interface MailboxRef {
  id: string;
  workspaceId: string;
}

export interface Fence {
  resource: string;
  token: number;
}

export interface IngestedMessage {
  key: string;
  messageId: string;
  label: string;
  action: Decision['action'];
  enrollmentId: string | null;
  /** False for a duplicate (already stored: a replay or a second copy), which did nothing. */
  inserted: boolean;
  needsReview: boolean;
}

export interface IngestReport {
  messages: IngestedMessage[];
  quarantined: number;
  /** Every engine transition the batch applied (already notified). */
  applied: Applied[];
  /**
   * The batch's timeline (the deps' clock, ms): its CPU stages done, its transaction begun (after
   * the loop's previous batch committed), committed. For profiles: what a stop waited for.
   */
  preparedAt: number;
  startedAt: number;
  /** Provider keys of the warmup mail the receiving side took (recorded, acted on, nowhere else). */
  warmup: string[];
  committedAt: number;
}

interface Prepared {
  fetched: FetchedMessage;
  mail: ParsedMail;
  messageId: string;
  newText: string;
  classification: Classification;
  /** Set when the message carries one of our unsubscribe tokens. */
  unsubscribeSend: string | null;
}

/**
 * The stages one after the other, in this thread: a parser failure is a quarantine reason, a
 * classifier failure keeps the message for a person (confidence 0 sends it to review).
 */
export async function runSteps(steps: Pick<IngestSteps, 'parse' | 'newText' | 'classify'>, raw: Uint8Array): Promise<PreparedMail> {
  let parsed;
  try {
    parsed = await steps.parse(raw);
  } catch (e) {
    parsed = { ok: false as const, reason: `parser failed: ${(e as Error).message}` };
  }
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const mail = parsed.mail;
  let newText = '';
  let classification: Classification;
  try {
    newText = steps.newText(mail);
    classification = await steps.classify(mail, newText);
  } catch (e) {
    classification = { label: 'human_reply', confidence: 0, reason: `classifier failed: ${(e as Error).message}`.slice(0, 500), rung: 'error' };
  }
  return { ok: true, mail, newText, classification };
}

/**
 * A batch after its CPU stages, ready for its transaction (`commitBatch`). Kept apart so that the
 * mailbox loop (worker/mailbox-loop.ts) prepares the next batch while this one commits.
 */
export interface PreparedBatch {
  batch: SyncBatch;
  prepared: Prepared[];
  /** The connector's problems and the messages the stages refused. */
  quarantine: QuarantineRow[];
  /** When the CPU stages ended (the deps' clock). */
  preparedAt: number;
  /** Provider keys of the warmup mail taken out of `prepared`. */
  warmup: string[];
}

export async function ingestBatch(deps: IngestDeps, mailbox: MailboxRef, batch: SyncBatch, o: { fence?: Fence; countResync?: boolean; folders?: WarmupFolders | null } = {}): Promise<IngestReport> {
  return commitBatch(deps, mailbox, await prepareBatch(deps, mailbox, batch, { folders: o.folders ?? null }), o);
}

/**
 * The CPU stages of a batch (parse, new text, classify), outside any transaction, then the warmup
 * receiving side (its folder actions are network calls: never inside the batch's transaction).
 * Its receipts are idempotent (the first folder recorded wins), so a batch replayed after a failed
 * commit records nothing twice.
 */
export async function prepareBatch(deps: IngestDeps, mailbox: MailboxRef, batch: SyncBatch, o: { folders?: WarmupFolders | null } = {}): Promise<PreparedBatch> {
  const opts = { ...defaultIngestOptions, ...deps.options };
  const receivedAtStart = deps.clock.now();
  const quarantine: QuarantineRow[] = batch.problems.map((p) => ({
    id: newId(receivedAtStart, deps.random),
    workspaceId: mailbox.workspaceId,
    mailboxId: mailbox.id,
    providerKey: p.key,
    folder: p.folder,
    reason: p.reason,
    raw: null,
    rawSize: null,
    at: receivedAtStart,
  }));
  const prepared: Prepared[] = [];
  // All at once: a worker pool (steps.prepare) works on as many as it has workers; in-process
  // steps run one after the other anyway. Order is kept.
  const outcomes = await Promise.all(batch.messages.map((f) => prepare(deps, mailbox, f)));
  for (const [i, f] of batch.messages.entries()) {
    const p = outcomes[i]!;
    if ('reason' in p) {
      quarantine.push({
        id: newId(receivedAtStart, deps.random),
        workspaceId: mailbox.workspaceId,
        mailboxId: mailbox.id,
        providerKey: f.key,
        folder: f.folder,
        reason: p.reason,
        raw: f.raw.subarray(0, opts.quarantineBytes),
        rawSize: f.raw.byteLength,
        at: receivedAtStart,
      });
    } else prepared.push(p);
  }
  const preparedAt = deps.clock.now();
  if (!deps.warmup || prepared.length === 0) return { batch, prepared, quarantine, preparedAt, warmup: [] };
  const taken = await deps.warmup.take(mailbox, prepared.map((p) => ({ fetched: p.fetched, from: p.mail.from?.address || null })), o.folders ?? null);
  if (taken.size === 0) return { batch, prepared, quarantine, preparedAt, warmup: [] };
  return { batch, prepared: prepared.filter((_, i) => !taken.has(i)), quarantine, preparedAt, warmup: prepared.filter((_, i) => taken.has(i)).map((p) => p.fetched.key) };
}

/** One message of a batch in its transaction: what it threads to, what it does, its row. */
interface Planned {
  p: Prepared;
  target: EnrollmentTarget | null;
  decision: Decision;
  /** Null for our own copy or the rep's own mail: never stored as inbound, never acts. */
  row: InboundRow | null;
}

/**
 * The transaction of a prepared batch. Set-based: the thread context (one statement), the targets
 * (one), the inbound rows (one), the engine events of every message whose decision is one event
 * (one call of the engine for the lot), the quarantine rows (one), the stop latencies (one), and
 * the cursor with the fencing check (one). Messages whose decision has more steps (suppressions,
 * the company stop, a bounce counted against its mailbox) are carried out one by one, in order.
 */
export async function commitBatch(deps: IngestDeps, mailbox: MailboxRef, pb: PreparedBatch, o: { fence?: Fence; countResync?: boolean } = {}): Promise<IngestReport> {
  const opts = { ...defaultIngestOptions, ...deps.options };
  const startedAt = deps.clock.now();
  const { batch, prepared } = pb;
  let messages: IngestedMessage[] = [];
  let applied: Applied[] = [];
  let acted: Acted[] = [];
  let quarantined = 0;
  // Optimistic first: the whole batch in one go. Only if that fails is it retried with a savepoint
  // per message, so that one poison message is rolled back alone (a few more round trips a
  // message, paid only then).
  const attempt = (guarded: boolean) => deps.store.db.transaction().execute(async (tx) => {
    messages = [];
    applied = [];
    acted = [];
    const quarantine = [...pb.quarantine];
    const now = deps.clock.now();
    const inputs = prepared.map((p) => ({ mail: p.mail, threadId: p.fetched.threadId, classification: p.classification }));
    const ctx = await loadThreadContext(tx, { workspaceId: mailbox.workspaceId, mailboxId: mailbox.id, since: now - opts.recentSendsMs }, threadKeys(inputs));
    const matches: ThreadMatch[] = inputs.map((i) => matchThread(i, ctx));
    const bySend = await enrollmentsOfSends(tx, mailbox.workspaceId, prepared.flatMap((p) => (p.unsubscribeSend ? [p.unsubscribeSend] : [])));
    const enrollmentOf = prepared.map((p, i) => (p.unsubscribeSend ? (bySend.get(p.unsubscribeSend) ?? null) : enrollmentOfMatch(matches[i]!)));
    // Threading read its sends' enrollments; only those named by an unsubscribe token are left.
    const targets = new Map(ctx.targets);
    for (const [id, t] of await loadTargets(tx, [...new Set(enrollmentOf.filter((e): e is string => e !== null && !ctx.targets.has(e)))])) targets.set(id, t);
    const planned = prepared.map((p, i) => plan(deps, mailbox, opts, now, p, matches[i]!, enrollmentOf[i] ? (targets.get(enrollmentOf[i]!) ?? null) : null));

    // Stores the rows, then carries out what the stored ones do: a message acts only if its row
    // was inserted now (a replay, a resync's re-yield or a second copy does nothing).
    const storeAndAct = async (group: Planned[]) => {
      const rows = firstOfEach(group.flatMap((x) => (x.row ? [x.row] : [])));
      const inserted = await insertInbound(tx, rows);
      const acting: Planned[] = [];
      for (const x of group) {
        const ok = x.row !== null && inserted.has(x.row.id);
        messages.push({ key: x.p.fetched.key, messageId: x.p.messageId, label: x.p.classification.label, action: x.decision.action, enrollmentId: x.target?.enrollmentId ?? null, inserted: ok, needsReview: x.decision.needsReview });
        if (ok && x.target) acting.push(x);
      }
      const done = await carryOutAll(
        tx,
        deps.service,
        acting.map((x) => ({ c: { workspaceId: mailbox.workspaceId, target: x.target!, messageId: x.p.messageId, source: `message ${x.p.messageId}`, now }, steps: x.decision.steps })),
      );
      for (const [i, x] of acting.entries()) {
        applied.push(...done[i]!.target, ...done[i]!.others);
        acted.push({ rowId: x.row!.id, receivedAt: x.p.fetched.receivedAt, applied: done[i]!.target, action: x.decision.action, stopMs: null });
      }
    };
    if (!guarded) await storeAndAct(planned);
    else {
      // One message's failure (a constraint, a bug on odd input) must not block the mailbox behind
      // it forever: it is rolled back alone and quarantined with the reason (promise 8).
      for (const x of planned) {
        await sql`savepoint ingest_message`.execute(tx);
        const before = { messages: messages.length, applied: applied.length, acted: acted.length };
        try {
          await storeAndAct([x]);
          await sql`release savepoint ingest_message`.execute(tx);
        } catch (e) {
          // The database failing (a failover, a deadlock, a lost connection, a missing grant) is not
          // the message's fault: quarantined, a reply would count as read (the sender's last look
          // passes over it) and never stop its enrollment, and the cursor would move past it. The
          // batch fails whole instead, and the loop pulls it again from the stored cursor.
          if (storeNotMessage(e)) throw e;
          await sql`rollback to savepoint ingest_message`.execute(tx);
          messages.length = before.messages;
          applied.length = before.applied;
          acted.length = before.acted;
          deps.log?.error({ err: e, mailboxId: mailbox.id, key: x.p.fetched.key }, 'ingesting a message failed; quarantined');
          const f = x.p.fetched;
          quarantine.push({ id: newId(now, deps.random), workspaceId: mailbox.workspaceId, mailboxId: mailbox.id, providerKey: f.key, folder: f.folder, reason: `processing failed: ${(e as Error).message}`, raw: f.raw.subarray(0, opts.quarantineBytes), rawSize: f.raw.byteLength, at: now });
        }
      }
    }
    quarantined = await insertQuarantine(tx, quarantine);
    // Reply-to-stop (ops/figures.ts): measured once, as this transaction ends (its commit follows),
    // stored with the stops and recorded in /metrics as the same numbers.
    const stoppedAt = deps.clock.now();
    for (const a of acted) if (a.receivedAt !== null && stoppedOrPaused(a.applied)) a.stopMs = stopLatencyMs(deps.clock, a.receivedAt, stoppedAt);
    const latencies = stopLatenciesUpdate(acted.flatMap((a) => (a.stopMs === null ? [] : [{ messageRowId: a.rowId, ms: a.stopMs }])));
    // The fencing check and the cursor (with the latencies, one round trip): the cursor moves only
    // under the lease, and the lease row stays share-locked until the commit, so no takeover slips in.
    if (!(await saveCursor(tx, mailbox.id, batch.cursor, now, { resync: o.countResync === true, fence: o.fence ?? null, ...(latencies ? { alsoWrite: [latencies] } : {}) }))) {
      throw cadenzaError('CONFLICT', `the sync lease ${o.fence!.resource} moved to another owner; this batch is left to it`, { fenced: true, resource: o.fence!.resource });
    }
  });
  try {
    await attempt(false);
  } catch (e) {
    if (isCadenzaError(e, 'CONFLICT') && (e.details as { fenced?: boolean }).fenced) throw e;
    deps.log?.warn({ err: e, mailboxId: mailbox.id }, 'ingesting a batch failed; retrying it message by message');
    await attempt(true);
  }
  const committedAt = deps.clock.now();
  deps.service.notify(applied);
  recordMetrics(deps.metrics, messages, quarantined, acted);
  return { messages, quarantined, applied, warmup: pb.warmup, preparedAt: pb.preparedAt, startedAt, committedAt };
}

/**
 * Errors that say the store, not the message, failed: transient ones (store/transient.ts), and
 * those of the server's state or setup: lock timeout (55P03), statement cancelled (57014),
 * insufficient resources (53xxx), permission denied (42501).
 */
function storeNotMessage(e: unknown): boolean {
  if (isTransientStoreError(e)) return true;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === '55P03' || code === '57014' || code === '42501' || code.startsWith('53'));
}

/** A message's decision and inbound row (pure). */
function plan(deps: IngestDeps, mailbox: MailboxRef, opts: IngestOptions, now: number, p: Prepared, m: ThreadMatch, target: EnrollmentTarget | null): Planned {
  if (m.kind === 'own' || p.fetched.folder === 'sent') {
    // Our own copy (a Sent copy, a Bcc to self) or the rep's own outgoing mail: never a reply.
    return { p, target: null, decision: { action: 'own', steps: [], needsReview: false, returnAt: null }, row: null };
  }
  const decision = decide(p.classification, target, opts, m.kind === 'matched' ? m.ref.sendRequestId : null);
  const row: InboundRow = {
    id: newId(now, deps.random),
    workspaceId: mailbox.workspaceId,
    mailboxId: mailbox.id,
    enrollmentId: target?.enrollmentId ?? null,
    messageId: p.messageId,
    inReplyTo: p.mail.inReplyTo,
    refs: p.mail.references.slice(-50),
    threadId: p.fetched.threadId,
    subject: p.mail.subject.slice(0, 1000),
    fromAddr: p.mail.from?.address || null,
    toAddrs: p.mail.to.map((a) => a.address).filter(Boolean).slice(0, 50),
    replyTo: p.mail.replyTo.map((a) => a.address).filter(Boolean).slice(0, 50),
    ccAddrs: p.mail.cc.map((a) => a.address).filter(Boolean).slice(0, 50),
    at: p.fetched.receivedAt ?? p.mail.date ?? now,
    folder: p.fetched.folder,
    providerKey: p.fetched.key,
    receivedAt: p.fetched.receivedAt,
    label: p.classification.label,
    confidence: clamp01(p.classification.confidence),
    reason: p.classification.reason.slice(0, 1000),
    rung: p.classification.rung,
    intent: p.classification.intent?.intent ?? null,
    intentConfidence: p.classification.intent?.confidence ?? null,
    bounce: p.classification.bounce ?? p.classification.feedback ?? null,
    returnAt: decision.returnAt ?? p.classification.returnDate ?? null,
    threadVia: p.unsubscribeSend ? 'unsubscribe_token' : m.kind === 'matched' ? m.via : 'none',
    action: decision.action,
    newText: p.newText.slice(0, opts.newTextChars),
    excerpt: p.mail.text.slice(0, opts.excerptChars),
    bodyHtml: p.mail.html ? p.mail.html.slice(0, STORED_HTML_CHARS) : null,
    needsReview: decision.needsReview,
  };
  return { p, target, decision, row };
}

/**
 * Within one batch, the first row of each copy (provider key) and of each message (Message-ID):
 * the same reply in INBOX and Junk acts once, as the first of them, as if stored one by one.
 */
function firstOfEach(rows: InboundRow[]): InboundRow[] {
  const keys = new Set<string>();
  const ids = new Set<string>();
  return rows.filter((r) => {
    if (keys.has(r.providerKey) || ids.has(r.messageId)) return false;
    keys.add(r.providerKey);
    ids.add(r.messageId);
    return true;
  });
}

/** What carrying out a decision needs besides its steps. */
export interface CarryOutContext {
  workspaceId: string;
  target: EnrollmentTarget;
  /** The message's Message-ID: a reply event carries it. */
  messageId: string;
  /** Kept with the suppressions the steps write ('message <…>', 'relabelled by …'). */
  source: string;
  now: number;
}

/**
 * Carries out a decision's steps (act.ts), in order, in the caller's transaction; decides nothing:
 * a conditional step is weighed by act.ts `conditionHolds` against the target's first transition.
 * Returns the target's own transitions (its first event's first) apart from the other
 * enrollments' stops; the caller notifies the service of both after its commit.
 */
export async function carryOut(tx: Tx, service: EnrollmentService, c: CarryOutContext, steps: readonly IngestStep[]): Promise<{ target: Applied[]; others: Applied[] }> {
  const mine: Applied[] = [];
  const others: Applied[] = [];
  let first: TargetOutcome | null = null;
  for (const step of steps) {
    switch (step.do) {
      case 'suppress':
        if (conditionHolds(step.when, first)) {
          const source = step.note ? `${c.source} (${step.note})` : c.source;
          const done = await suppress(tx, service, c.workspaceId, step.addresses.map((a) => ({ ...a, source })), { now: c.now, spare: [c.target.enrollmentId] });
          others.push(...done.applied);
        }
        break;
      case 'event': {
        const applied = await service.applyInTx(tx, c.target.enrollmentId, eventFor(step.event, c.messageId), c.now);
        if (first === null && applied[0]) first = { applied: applied[0].result.outcome === 'applied', state: applied[0].result.next.state };
        mine.push(...applied);
        break;
      }
      case 'stop_company':
        if (conditionHolds(step.when, first)) others.push(...(await stopCompany(tx, service, c.workspaceId, step, c.now)));
        break;
      case 'count_bounce':
        await recordSendOutcome(tx, { kind: 'bounce', requestId: step.sendRequestId, hard: step.hard, at: c.now });
        break;
    }
  }
  return { target: mine, others };
}

/**
 * Carries out many decisions, as if one after the other in the given order, in the caller's
 * transaction: a run of consecutive decisions that are each one engine event (a reply, an
 * out-of-office, a pause for review: the bulk of a mailbox's traffic) goes to the engine in one
 * call (EnrollmentService.applyEachInTx, which applies them in order even where two land on one
 * enrollment); any other decision ends the run and is carried out alone (carryOut), so that its
 * suppressions and company stops see every earlier message's effect and none of a later one's.
 */
export async function carryOutAll(tx: Tx, service: EnrollmentService, list: ReadonlyArray<{ c: CarryOutContext; steps: readonly IngestStep[] }>): Promise<Array<{ target: Applied[]; others: Applied[] }>> {
  const out: Array<{ target: Applied[]; others: Applied[] }> = [];
  let run: Array<{ c: CarryOutContext; event: EngineEvent }> = [];
  const flush = async () => {
    if (!run.length) return;
    // One `now` per run: every context of a batch carries the batch's.
    const done = await service.applyEachInTx(tx, run.map((r) => ({ enrollmentId: r.c.target.enrollmentId, event: r.event })), run[0]!.c.now);
    for (const d of done) out.push({ target: d, others: [] });
    run = [];
  };
  for (const { c, steps } of list) {
    const only = steps.length === 1 && steps[0]!.do === 'event' ? steps[0]! : null;
    if (only?.do === 'event' && (run.length === 0 || run[0]!.c.now === c.now)) {
      run.push({ c, event: eventFor(only.event, c.messageId) });
      continue;
    }
    await flush();
    out.push(await carryOut(tx, service, c, steps));
  }
  await flush();
  return out;
}

/** A reply event carries the message's Message-ID. */
function eventFor(e: EngineEvent, messageId: string): EngineEvent {
  return e.type === 'reply' ? { type: 'reply', messageId } : e;
}

/** Parse, new text, classify: CPU work, outside the transaction. Returns a quarantine reason on bad input. */
async function prepare(deps: IngestDeps, mailbox: MailboxRef, f: FetchedMessage): Promise<Prepared | { reason: string }> {
  const r = deps.steps.prepare ? await deps.steps.prepare(f.raw, mailbox.workspaceId) : await runSteps(deps.steps, f.raw);
  if (!r.ok) return { reason: r.reason };
  const { mail, newText } = r;
  let classification = r.classification;
  let unsubscribeSend: string | null = null;
  if (deps.trackingKey) {
    const u = recogniseUnsubscribeRequest(deps.trackingKey, { subject: mail.subject, text: newText || mail.text });
    if (u && u.workspaceId === mailbox.workspaceId) {
      unsubscribeSend = u.sendRequestId;
      classification = { ...classification, label: 'unsubscribe_request', confidence: 1, reason: u.reason, rung: 'unsubscribe_mailto' };
    }
  }
  // A message without a usable Message-ID still needs one key for dedup: its content's hash.
  const messageId = mail.messageId ?? `<${createHash('sha256').update(f.raw).digest('hex').slice(0, 40)}@no-message-id.invalid>`;
  return { fetched: f, mail, messageId, newText, classification, unsubscribeSend };
}

function enrollmentOfMatch(m: ThreadMatch): string | null {
  return m.kind === 'matched' ? m.ref.enrollmentId : null;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** A message that acted on its enrollment, and its reply-to-stop once measured (null: it did not stop or pause it). */
interface Acted {
  rowId: string;
  receivedAt: number | null;
  applied: Applied[];
  action: Decision['action'];
  stopMs: number | null;
}

function recordMetrics(metrics: Metrics | undefined, messages: IngestedMessage[], quarantined: number, acted: Acted[]): void {
  if (!metrics) return;
  for (const m of messages) if (m.inserted) metrics.ingested.inc({ label: m.label });
  for (const a of acted) metrics.actions.inc({ action: a.action });
  if (quarantined) metrics.quarantined.inc(quarantined);
  // The stored reply-to-stop figures of this batch, the same numbers (ops/figures.ts).
  for (const a of acted) if (a.stopMs !== null) metrics.recordReplyToStop(a.stopMs);
}

/** What counts for reply-to-stop (ops/figures.ts): the message's first engine event applied and left its enrollment ended or paused. */
function stoppedOrPaused(applied: Applied[]): boolean {
  const first = applied[0];
  return first?.result.outcome === 'applied' && (isTerminal(first.result.next.state) || first.result.next.state === 'paused');
}

