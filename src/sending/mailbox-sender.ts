import type { Logger } from '../common/logger.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import { prepareEmail } from './compose/prepare.ts';
import { recordSendOutcome } from './dispatch/health.ts';
import { loadSendMaterial } from './send-context.ts';
import { MailboxLastLook, type LastLookPolicy } from './mailbox-last-look.ts';
import {
  claimNext,
  lastLook,
  listUnknown,
  markUnknown,
  recordFailure,
  recordSent,
  recoverInFlight,
  releaseClaim,
  resolveUnknown,
  type Claim,
  type OutboxDeps,
} from './outbox.ts';
import type { SendOutcome, Transport } from './transports/transport.ts';

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
  log?: Logger;
}

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
  | { kind: 'mailbox_paused'; reason: string };

/**
 * Sends one mailbox's queue, one message at a time: claim (outbox), compose, last look, hand to
 * the transport, record what the transport says. It is the only sender of its mailbox while its
 * lease holds (deps.fence), so the mailbox's pace is one process's to keep.
 */
export class MailboxSender {
  private readonly mailboxLook: MailboxLastLook;

  constructor(
    readonly mailboxId: string,
    private readonly deps: MailboxSenderDeps,
  ) {
    this.mailboxLook = new MailboxLastLook(deps);
  }

  /** What a new owner does first: requests its predecessor left in flight become unknown. */
  async recover(): Promise<number> {
    return recoverInFlight(this.deps, this.mailboxId);
  }

  /** Claims and sends at most one message. */
  async step(): Promise<StepResult> {
    const d = this.deps;
    const r = await claimNext(d, this.mailboxId);
    if (r.kind === 'empty' || r.kind === 'paced') return { kind: 'idle' };
    if (r.kind === 'fenced') return { kind: 'fenced' };
    if (r.kind === 'refused') return { kind: 'refused', reason: r.reason };
    const claim = r.claim;

    const material = await loadSendMaterial(d.store.db, claim);
    const prepared = await prepareEmail({
      claim,
      template: material.template,
      lead: material.lead,
      sender: material.sender,
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
    const glance = await this.mailboxLook.check(claim);
    if (glance.kind === 'defer') return { kind: 'deferred', claim, reason: glance.reason };

    const look = await lastLook(d, claim);
    if (!look.ok) return { kind: 'refused', reason: look.reason };

    const outcome = await d.transport.send(email.raw, email.envelope, { messageId: claim.messageId, threadId: email.threadId });
    switch (outcome.kind) {
      case 'accepted': {
        await recordSent(d, claim, d.clock.now(), { ...email.sent, threadId: outcome.threadId ?? email.threadId });
        for (const b of outcome.bounced) await this.bounce(claim, b.enhancedStatus, b.diagnostic);
        return { kind: 'sent', claim };
      }
      case 'bounce': {
        const b = outcome.recipients[0];
        // The bounce stops the enrollment and suppresses the address; then the request fails.
        await this.bounce(claim, b?.enhancedStatus ?? null, b?.diagnostic ?? 'refused at RCPT');
        await recordFailure(d, claim, { permanent: true, reason: `bounced at RCPT: ${b?.enhancedStatus ?? ''} ${b?.diagnostic ?? ''}`.trim() });
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
   * Settles requests whose fate is unknown by looking for their Message-ID in the Sent folder:
   * found → sent; absent past the grace period → queued again with the same Message-ID.
   */
  async resolveUnknowns(): Promise<{ found: number; requeued: number; waiting: number }> {
    const out = { found: 0, requeued: 0, waiting: 0 };
    for (const u of await listUnknown(this.deps, this.mailboxId)) {
      const f = await this.deps.transport.findSent(u.messageId);
      if (f.status === 'unavailable') {
        out.waiting++;
        continue;
      }
      const r = await resolveUnknown(this.deps, u, f.status === 'found' ? { sentAt: f.sentAt ?? this.deps.clock.now() } : null);
      if (r === 'sent') out.found++;
      else if (r === 'requeued') out.requeued++;
      else out.waiting++;
    }
    return out;
  }

  private async bounce(claim: Claim, status: string | null, diagnostic: string): Promise<void> {
    const permanent = status === null || status.startsWith('5');
    await this.deps.service.apply(claim.enrollmentId, { type: 'bounce', hard: permanent, reason: `${status ?? ''} ${diagnostic}`.trim() });
    // The mailbox's health counts its bounces: too many and it pauses itself (burnt-domain guard).
    await recordSendOutcome(this.deps.store.db, { kind: 'bounce', requestId: claim.requestId, hard: permanent, at: this.deps.clock.now() });
  }
}
