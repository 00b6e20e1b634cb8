import { systemClock, type Clock } from '../../../common/clock.ts';
import { cadenzaError } from '../../../common/errors.ts';
import { describeFailure, type ApiFailure } from '../../providers/call.ts';
import { gmailApi, type GmailApi } from '../../providers/gmail/api.ts';
import { gmailJsonSendMaxRawBytes } from '../../providers/gmail/messages-send.ts';
import { checkOutgoing } from '../../providers/outgoing-check.ts';
import { accepted, byStatus, nonHttpOutcome, oversize, recipientRefused } from '../../providers/send-outcome.ts';
import type { AccessTokenProvider } from '../../access-token.ts';
import type { Transport } from '../connector.ts';
import { defaultRetryPolicy, type RetryPolicy } from '../../sync/retry.ts';
import type { Envelope, FindSentResult, RecentMailQuery, RecentMailResult, SendContext, SendOutcome, SentPageHandler, SentSinceResult } from '../outcomes.ts';
import { handSentPages } from '../sent-pages.ts';
import { gmailSentPages } from './sent-since.ts';

/**
 * The sending part of a Gmail mailbox's connector (../connector.ts Transport;
 * ./connector.ts joins it to the sync and folder parts): users.messages.send with our composed
 * bytes (base64url), so the Message-ID and every header are ours, and Gmail files the message in
 * SENT itself. The Sent-folder search is users.messages.list with `rfc822msgid:`.
 *
 * Classification (developers.google.com/workspace/gmail/api/guides/handle-errors):
 *   200                                            accepted (providerId = Gmail id, threadId)
 *   401 (after one refresh of the token)           auth_failed
 *   403 userRateLimitExceeded, rateLimitExceeded,
 *       dailyLimitExceeded; 429 (concurrency, or
 *       the daily sending cap)                     transient, with Retry-After or the "Retry after
 *                                                  <time>" of the message
 *   403 insufficientPermissions, domainPolicy,
 *       forbidden (delegation)                     auth_failed: the grant or the admin refuses;
 *                                                  no message can go until the mailbox is fixed
 *   400 "Invalid To/Cc/Bcc header"                 bounce (one recipient) or rejected (several)
 *   other 400, 403, 413                            rejected
 *   404 with a threadId                            the thread is gone (the rep deleted it): sent
 *                                                  again at once without it, which is safe since
 *                                                  the 404 refused the first request
 *   500, 503                                       transient
 *   502, 504; no answer after the body was sent    ambiguous (see send-outcome.ts byStatus)
 *   no connection, or body not completely sent     transient
 */
export interface GmailTransportOptions {
  tokens: AccessTokenProvider;
  /** 'https://gmail.googleapis.com' unless pointed at an emulator. */
  baseUrl?: string;
  /** 'me' (the token's owner) or the mailbox's address. */
  userId?: string;
  clock?: Clock;
  /** Deadline of one HTTP exchange, connection to last byte. */
  timeoutMs?: number;
  /** How sentSince retries each request (default: the sync connectors' policy, mailbox/sync/retry.ts). */
  retry?: RetryPolicy;
  /** sentSince's page size (default 100). */
  sentPageSize?: number;
}

const rateReasons = new Set(['userRateLimitExceeded', 'rateLimitExceeded', 'dailyLimitExceeded', 'quotaExceeded', 'RESOURCE_EXHAUSTED']);
const grantReasons = new Set(['insufficientPermissions', 'domainPolicy', 'forbidden', 'authError', 'PERMISSION_DENIED', 'UNAUTHENTICATED']);

export class GmailTransport implements Transport {
  readonly kind = 'gmail' as const;
  /** messages.send files the message in SENT as it accepts it. */
  readonly sentProof = 'provider_copy' as const;
  private readonly api: GmailApi;
  private readonly clock: Clock;
  private closed = false;

  constructor(private readonly opts: GmailTransportOptions) {
    this.clock = opts.clock ?? systemClock;
    this.api = gmailApi({
      baseUrl: opts.baseUrl,
      userId: opts.userId,
      tokens: opts.tokens,
      clock: this.clock,
      timeoutMs: opts.timeoutMs ?? 30_000,
    });
  }

  async send(raw: Buffer, envelope: Envelope, ctx: SendContext): Promise<SendOutcome> {
    if (this.closed) throw cadenzaError('INVALID_INPUT', 'send on a closed Gmail transport');
    checkOutgoing(raw, envelope, ctx.messageId);
    const tooLarge = oversize(raw.length, gmailJsonSendMaxRawBytes, 'the Gmail JSON send takes');
    if (tooLarge) return tooLarge;
    const threadId = ctx.threadId ?? null;
    let r = await this.api.send({ raw, threadId }, { signal: ctx.signal });
    if (!r.ok && threadId !== null && r.failure.kind === 'http' && r.failure.status === 404) {
      r = await this.api.send({ raw, threadId: null }, { signal: ctx.signal });
    }
    if (r.ok) return accepted(`${r.status} id=${r.value.id} threadId=${r.value.threadId}`, r.value.id, r.value.threadId);
    return classify(r.failure, envelope);
  }

  async findSent(messageId: string, opts: { signal?: AbortSignal } = {}): Promise<FindSentResult> {
    // Anywhere in the mailbox, trash included: a rep who deleted the sent copy still sent it.
    const list = await this.api.list({ q: `rfc822msgid:${messageId}`, includeSpamTrash: true, maxResults: 10 }, opts);
    if (!list.ok) return { status: 'unavailable', reason: describeFailure(list.failure, 'Gmail API') };
    for (const ref of list.value.messages) {
      const got = await this.api.get({ id: ref.id, format: 'minimal' }, opts);
      if (!got.ok) {
        if (got.failure.kind === 'http' && got.failure.status === 404) continue; // deleted since the list
        return { status: 'unavailable', reason: describeFailure(got.failure, 'Gmail API') };
      }
      // Only Cadenza makes these Message-IDs, so any copy but an unsent draft proves the send.
      const labels = got.value.labelIds;
      if (labels.includes('DRAFT') && !labels.includes('SENT')) continue;
      return { status: 'found', sentAt: got.value.internalDate, providerId: got.value.id, threadId: got.value.threadId };
    }
    return { status: 'not_found' };
  }

  /**
   * The mailbox last look: users.messages.list with `q=from:<lead> after:<epoch seconds>` (Gmail
   * reads an epoch-seconds `after:` as an instant, support.google.com/mail/answer/7190), spam
   * included (includeSpamTrash; the trash comes with it, and a hit there costs at most a short
   * deferral). One request; the keys are Gmail message ids, as the sync stores them. Gmail's search
   * has no operator on In-Reply-To/References, so threaded mail from another address is not seen
   * here (the sync still reads it).
   */
  async recentMailFrom(q: RecentMailQuery): Promise<RecentMailResult> {
    const after = Math.floor(q.since / 1000);
    const r = await this.api.list({ q: `from:${q.from} after:${after}`, includeSpamTrash: true, maxResults: 20 }, q.signal ? { signal: q.signal } : {});
    if (!r.ok) return { status: 'unavailable', reason: describeFailure(r.failure, 'Gmail API') };
    return { status: 'ok', messages: r.value.messages.map((m) => ({ key: m.id, messageId: null, receivedAt: null })) };
  }

  /** The SENT label since an instant, page by page (sent-since.ts). */
  async sentSince(since: number, onPage: SentPageHandler): Promise<SentSinceResult> {
    const pages = gmailSentPages(this.api, since, {
      clock: this.clock,
      policy: this.opts.retry ?? defaultRetryPolicy,
      pageSize: Math.min(500, Math.max(1, this.opts.sentPageSize ?? 100)),
      // Gmail publishes no concurrency number; the sync keeps 4 in flight, as here.
      concurrency: 4,
    });
    return handSentPages(pages, onPage);
  }

  async close(): Promise<void> {
    // Nothing to release: every request has its own connection (mailbox/providers/http.ts).
    this.closed = true;
  }
}

function classify(f: ApiFailure, envelope: Envelope): SendOutcome {
  if (f.kind !== 'http') return nonHttpOutcome(f, 'Gmail API');
  const { status, error } = f;
  const reason = `Gmail API ${status} ${error.code}: ${error.message}`;
  const has = (set: Set<string>) => error.codes.some((c) => set.has(c));
  if (status === 400 && /invalid (to|cc|bcc) header/i.test(error.message)) return recipientRefused(envelope, status, reason);
  if ((status === 403 || status === 429) && has(rateReasons)) {
    return { kind: 'transient', phase: 'http_response', reason, responseCode: status, enhancedStatus: null, retryAfterMs: f.retryAfterMs };
  }
  if (status === 403 && has(grantReasons)) return { kind: 'auth_failed', phase: 'auth', reason, responseCode: status };
  return byStatus(status, reason, f.retryAfterMs);
}


export function gmailTransport(opts: GmailTransportOptions): GmailTransport {
  return new GmailTransport(opts);
}
