import type { Logger } from '../common/logger.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import { prepareEmail } from './compose/prepare.ts';
import { loadSendMaterial } from './send-context.ts';
import { MailboxLastLook, type LastLookPolicy } from './mailbox-last-look.ts';
import type { SentRecorder } from './sent-recorder.ts';
import { checkServerSentCopies, serverCopyVerified, type SentCopyCheck } from './sent-copy-check.ts';
import {
  claimNext,
  lastLook,
  listUnknown,
  markUnknown,
  recordBounce,
  recordFailure,
  recoverInFlight,
  releaseClaim,
  resolveUnknown,
  defaultRetryPolicy,
  type Claim,
  type OutboxDeps,
} from './outbox.ts';
import type { Transport } from '../mailbox/connectors/connector.ts';
import type { SendOutcome } from '../mailbox/connectors/outcomes.ts';
import { recordAccepted } from './record-accepted.ts';

export interface MailboxSenderDeps extends OutboxDeps {
  service: EnrollmentService;
  transport: Transport;
  /** trackingKey(master): seals unsubscribe, pixel and click tokens. */
  trackingKey: Buffer;
  /** Cadenza's public URL (https), for a workspace without its own tracking domain. */
  publicUrl: string;
  /** Pauses the mailbox with a reason the user sees (credentials refused). */
  pauseMailbox: (mailboxId: string, reason: string) => Promise<void>;
  /** Asks the sync role to pull a mailbox now (the mailbox last look found unread mail from the lead). */
  pullMailbox?: (mailboxId: string) => void;
  lastLookPolicy?: Partial<LastLookPolicy>;
  /** The process's group commit for accepted sends (sent-recorder.ts); absent: each send on its own (recordSent). */
  recorder?: SentRecorder;
  log?: Logger;
  /**
   * The mailbox's other mail under the same bucket (warmup/send/warmup-sender.ts, injected by the
   * runtime): tried when the campaign queue has nothing to send now, so campaign mail goes first.
   * It claims under the same mailbox lock and counts in the same usage, so both together keep
   * the daily cap and gaps.
   */
  extraStep?: (mailboxId: string) => Promise<ExtraStepResult>;
  /** How long the record of an accepted send is retried through a failover (record-accepted.ts). */
  recordRetryMs?: number;
}

/** What an injected extra step did: 'idle' when it had nothing it could send now. */
export type ExtraStepResult = { kind: 'idle' | 'paced' | 'fenced' } | { kind: 'sent' | 'failed'; id: string; reason?: string };

export type StepResult =
  | { kind: 'idle' }
  | { kind: 'fenced' }
  | { kind: 'refused'; reason: string }
  | { kind: 'sent'; claim: Claim }
  | { kind: 'blocked'; claim: Claim; reason: string }
  | { kind: 'failed'; claim: Claim; outcome: SendOutcome['kind']; reason: string }
  | { kind: 'unknown'; claim: Claim }
  /** The mailbox last look found mail from the lead the sync has not read: back to the queue, due again shortly. */
  | { kind: 'deferred'; claim: Claim; reason: string }
  | { kind: 'mailbox_paused'; reason: string }
  /** The extra step (warmup) sent or tried one of its mails. */
  | { kind: 'extra'; result: ExtraStepResult };

/**
 * Sends one mailbox's queue, one message at a time: claim (outbox), compose, last look, hand to
 * the transport, record what the transport says. It is the only sender of its mailbox while its
 * lease holds (deps.fence), so the mailbox's pace is one process's to keep.
 */
export class MailboxSender {
  private readonly deps: MailboxSenderDeps;
  private readonly mailboxLook: MailboxLastLook;

  constructor(
    readonly mailboxId: string,
    deps: MailboxSenderDeps,
  ) {
    // Each claim records what this transport's Sent folder can prove (outbox resolveUnknown).
    // The server's own copies are trusted as proof only once seen (sent-copy-check.ts).
    const smtpServerCopy = deps.transport.kind === 'smtp' && deps.transport.sentProof === 'provider_copy';
    this.deps = {
      ...deps,
      proof: deps.proof ?? deps.transport.sentProof,
      ...(smtpServerCopy && !deps.providerCopyTrusted ? { providerCopyTrusted: () => serverCopyVerified(deps.store, mailboxId) } : {}),
    };
    this.mailboxLook = new MailboxLastLook(this.deps);
  }

  /** What a new owner does first: requests its predecessor left in flight become unknown. */
  async recover(): Promise<number> {
    return recoverInFlight(this.deps, this.mailboxId);
  }

  /** Claims and sends at most one message. */
  async step(): Promise<StepResult> {
    const d = this.deps;
    const r = await claimNext(d, this.mailboxId);
    if (r.kind === 'empty' || r.kind === 'paced') {
      const x = d.extraStep ? await d.extraStep(this.mailboxId) : { kind: 'idle' as const };
      if (x.kind === 'fenced') return { kind: 'fenced' };
      return x.kind === 'sent' || x.kind === 'failed' ? { kind: 'extra', result: x } : { kind: 'idle' };
    }
    if (r.kind === 'fenced') return { kind: 'fenced' };
    if (r.kind === 'refused') return { kind: 'refused', reason: r.reason };
    const claim = r.claim;

    const material = await loadSendMaterial(d.store.db, claim);
    const prepared = await prepareEmail({
      claim,
      template: material.template,
      lead: material.lead,
      sender: material.sender,
      signature: material.signature,
      now: d.clock.now(),
      tracking: { key: d.trackingKey, baseUrl: material.tracking.trackingDomain ? `https://${material.tracking.trackingDomain}` : d.publicUrl, opens: material.tracking.opens, clicks: material.tracking.clicks },
      thread: material.thread,
    });
    if (!prepared.ok) {
      // Never a send containing {{first_name}}: the step is blocked for this enrollment, with the reason.
      const reason = `blocked: ${prepared.reason}`;
      await recordFailure(d, claim, { permanent: true, reason });
      return { kind: 'blocked', claim, reason };
    }
    const email = prepared.email;
    for (const u of email.untrackedLinks) d.log?.warn({ requestId: claim.requestId, url: u.url.slice(0, 200), reason: u.reason }, 'link sent without click tracking');

    // The mailbox itself, before the database re-check (mailbox-last-look.ts: a reply already in
    // the mailbox but not yet read by the sync defers the step; the pipeline then decides).
    const glance = await this.mailboxLook.check(claim, material.look);
    if (glance.kind === 'defer') return { kind: 'deferred', claim, reason: glance.reason };

    const look = await lastLook(d, claim);
    if (!look.ok) return { kind: 'refused', reason: look.reason };

    const outcome = await d.transport.send(email.raw, email.envelope, { messageId: claim.messageId, threadId: email.threadId });
    switch (outcome.kind) {
      case 'accepted': {
        const details = { ...email.sent, threadId: outcome.threadId ?? email.threadId };
        await recordAccepted(d, claim, d.clock.now(), details, outcome.bounced);
        return { kind: 'sent', claim };
      }
      case 'bounce': {
        // The enrollment stops as bounced, the address is suppressed, the request fails: one transaction.
        const b = outcome.recipients[0];
        await recordBounce(d, claim, b);
        return { kind: 'failed', claim, outcome: 'bounce', reason: b?.diagnostic ?? '' };
      }
      case 'transient':
        await recordFailure(d, claim, { permanent: false, reason: `${outcome.phase}: ${outcome.reason}`, retryAfterMs: outcome.retryAfterMs });
        return { kind: 'failed', claim, outcome: 'transient', reason: outcome.reason };
      case 'rejected':
        await recordFailure(d, claim, { permanent: true, reason: `${outcome.phase}: ${outcome.reason}` });
        return { kind: 'failed', claim, outcome: 'rejected', reason: outcome.reason };
      case 'auth_failed': {
        // Not the request's fault: it goes back to the queue untouched and the mailbox pauses.
        await releaseClaim(d, claim, `mailbox credentials refused: ${outcome.reason}`);
        const reason = `credentials refused (${outcome.phase}): ${outcome.reason}`;
        await d.pauseMailbox(this.mailboxId, reason);
        return { kind: 'mailbox_paused', reason };
      }
      case 'ambiguous':
        await markUnknown(d, claim, `${outcome.phase}: ${outcome.reason}`);
        return { kind: 'unknown', claim };
    }
  }

  /**
   * Settles requests whose fate is unknown by looking for their Message-ID in the Sent folder
   * (outbox.resolveUnknown: a settled copy → sent; a pending copy, or absence that proves nothing
   * → possibly sent; absence that proves it, past the grace period → queued again, same Message-ID).
   * A search that could not be made settles nothing: it waits.
   */
  async resolveUnknowns(): Promise<{ found: number; possiblySent: number; requeued: number; waiting: number; sentCopyCheck: SentCopyCheck }> {
    // First: is the server's Sent copy a proof here (verified on a confirmed send, or switched off)?
    const sentCopyCheck = await this.checkSentCopies();
    const out = { found: 0, possiblySent: 0, requeued: 0, waiting: 0, sentCopyCheck };
    if (sentCopyCheck === 'switched') return out; // the transport is rebuilt with the new setting first
    for (const u of await listUnknown(this.deps, this.mailboxId)) {
      const f = await this.deps.transport.findSent(u.messageId);
      if (f.status === 'unavailable') {
        out.waiting++;
        continue;
      }
      const r = await resolveUnknown(this.deps, u, f.status === 'found' ? { sentAt: f.sentAt ?? this.deps.clock.now(), pending: f.pending === true } : null);
      if (r === 'sent') out.found++;
      else if (r === 'possibly_sent') out.possiblySent++;
      else if (r === 'requeued') out.requeued++;
      else out.waiting++;
    }
    return out;
  }

  /** sent-copy-check.ts: 'switched' means this transport's setting is wrong and must be rebuilt. */
  async checkSentCopies(): Promise<SentCopyCheck> {
    const graceMs = this.deps.policy?.unknownGraceMs ?? defaultRetryPolicy.unknownGraceMs;
    return checkServerSentCopies({ store: this.deps.store, clock: this.deps.clock, transport: this.deps.transport, mailboxId: this.mailboxId, graceMs, ...(this.deps.log ? { log: this.deps.log } : {}) });
  }
}
