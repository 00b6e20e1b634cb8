import { systemClock, type Clock } from '../../../common/clock.ts';
import { cadenzaError } from '../../../common/errors.ts';
import { describeFailure, type ApiFailure } from '../../providers/call.ts';
import { graphApi, type GraphApi } from '../../providers/graph/api.ts';
import { odataString } from '../../providers/graph/message.ts';
import { graphMimeSendMaxRawBytes } from '../../providers/graph/send-mail.ts';
import { checkOutgoing } from '../../providers/outgoing-check.ts';
import { byStatus, nonHttpOutcome, oversize, recipientRefused } from '../../providers/send-outcome.ts';
import type { AccessTokenProvider } from '../../access-token.ts';
import type { Transport } from '../connector.ts';
import { defaultRetryPolicy, type RetryPolicy } from '../../sync/retry.ts';
import type { Envelope, FindSentResult, RecentMailQuery, RecentMailResult, SendContext, SendOutcome, SentPageHandler, SentSinceResult } from '../outcomes.ts';
import { handSentPages } from '../sent-pages.ts';
import { graphSentPages } from './sent-since.ts';

/**
 * The sending part of a Microsoft 365 mailbox's connector (../connector.ts
 * Transport; ./connector.ts joins it to the sync and folder parts): `POST /me/sendMail` (or
 * `/users/{id}/sendMail`) with our composed bytes as base64 MIME, so the Message-ID and every
 * header are ours.
 *
 * Graph's 202 only means "a draft was saved; submission follows"
 * (concepts/outlook-things-to-know-about-send-mail.md). The outcome is therefore `accepted` with
 * `confirm: 'sent_folder'`: the message must never be sent again (it is on its way), and the
 * sender confirms it with findSent once the Sent copy shows; a submission that fails after the 202
 * comes back as an NDR in the inbox, like any bounce.
 *
 * Classification:
 *   202 (any 2xx)                                  accepted, confirm: 'sent_folder'
 *   401 (after one refresh of the token)           auth_failed
 *   403 ErrorAccessDenied, ErrorSendAsDenied,
 *       ErrorMessageSubmissionBlocked, …;
 *   404 MailboxNotEnabledForRESTAPI, …             auth_failed: the mailbox cannot send at all
 *                                                  until someone fixes it; not this message's fault
 *   400 ErrorInvalidRecipients                     bounce (one recipient) or rejected (several)
 *   other 400, 403, 413                            rejected
 *   429, 503 (Retry-After, decimals allowed),
 *   500, 507 (mailbox full)                        transient
 *   502, 504; no answer after the body was sent    ambiguous (see send-outcome.ts byStatus)
 *   no connection, or body not completely sent     transient
 *
 * findSent looks in the whole mailbox (`/me/messages?$filter=internetMessageId eq '…'`), Sent
 * Items included, for a copy that is not a draft: a rep may have moved the Sent copy to another
 * folder, and while a submission is in flight the item is still a draft, which proves nothing.
 */
export interface GraphTransportOptions {
  tokens: AccessTokenProvider;
  /** 'https://graph.microsoft.com/v1.0' unless pointed at an emulator. */
  baseUrl?: string;
  /** 'me' (the token's owner) or the mailbox's id or user principal name. */
  user?: string;
  clock?: Clock;
  /** Deadline of one HTTP exchange, connection to last byte. */
  timeoutMs?: number;
  /** How sentSince retries each request (default: the sync connectors' policy, mailbox/sync/retry.ts). */
  retry?: RetryPolicy;
  /** sentSince's page size (default 100). */
  sentPageSize?: number;
}

/** Codes that say the mailbox or the grant cannot send, whatever the message. */
const mailboxCodes = new Set([
  'ErrorAccessDenied',
  'AccessDenied',
  'Authorization_RequestDenied',
  'ErrorSendAsDenied',
  'ErrorMessageSubmissionBlocked',
  'ErrorAccountSuspend',
  'ErrorAccountDisabled',
  'MailboxNotEnabledForRESTAPI',
  'MailboxNotSupportedForRESTAPI',
  'ErrorInvalidUser',
  'ErrorNonExistentMailbox',
  'ResourceNotFound',
]);
/** Codes of limits that lift with time. */
const limitCodes = new Set(['TooManyRequests', 'ApplicationThrottled', 'ErrorQuotaExceeded', 'ErrorSubmissionQuotaExceeded', 'serviceNotAvailable']);

export class GraphTransport implements Transport {
  readonly kind = 'graph' as const;
  /** Graph files the copy itself: a draft from the 202 on, then Sent Items after submission. */
  readonly sentProof = 'provider_copy' as const;
  private readonly api: GraphApi;
  private readonly clock: Clock;
  private closed = false;

  constructor(private readonly opts: GraphTransportOptions) {
    this.clock = opts.clock ?? systemClock;
    this.api = graphApi({
      baseUrl: opts.baseUrl,
      user: opts.user,
      tokens: opts.tokens,
      clock: this.clock,
      timeoutMs: opts.timeoutMs ?? 30_000,
    });
  }

  async send(raw: Buffer, envelope: Envelope, ctx: SendContext): Promise<SendOutcome> {
    if (this.closed) throw cadenzaError('INVALID_INPUT', 'send on a closed Graph transport');
    checkOutgoing(raw, envelope, ctx.messageId);
    const tooLarge = oversize(raw.length, graphMimeSendMaxRawBytes, 'a Graph MIME sendMail takes (4 MB request)');
    if (tooLarge) return tooLarge;
    const r = await this.api.sendMail({ raw }, { signal: ctx.signal });
    if (r.ok) {
      // Graph's 202 names no id: the Sent copy's id and conversation come from findSent.
      return {
        kind: 'accepted',
        response: `${r.status} Accepted`,
        providerId: null,
        threadId: null,
        bounced: [],
        sentCopy: 'server',
        confirm: 'sent_folder',
      };
    }
    const out = classify(r.failure, envelope);
    // A 2xx read from a cut-off or unreadable answer is still only a queued draft.
    return out.kind === 'accepted' ? { ...out, confirm: 'sent_folder' } : out;
  }

  async findSent(messageId: string, opts: { signal?: AbortSignal } = {}): Promise<FindSentResult> {
    const r = await this.api.list(
      {
        filter: `internetMessageId eq ${odataString(messageId)}`,
        select: ['id', 'internetMessageId', 'isDraft', 'sentDateTime', 'conversationId', 'parentFolderId'],
        top: 10,
        immutableIds: true,
      },
      opts,
    );
    if (!r.ok) return { status: 'unavailable', reason: describeFailure(r.failure, 'Graph') };
    // isDraft absent (a provider answer without it) counts as sent: at most once prefers a false "found".
    const sent = r.value.messages.find((m) => m.internetMessageId === messageId && m.isDraft !== true);
    if (!sent) {
      // Only our sendMail makes a draft with this Message-ID, and it makes it at its 202: the
      // request was accepted and its submission has not finished (or never will). That proves it
      // was handed over, not that it went out: pending (the outbox records it possibly sent).
      const draft = r.value.messages.find((m) => m.internetMessageId === messageId);
      if (draft) return { status: 'found', sentAt: null, providerId: draft.id, threadId: draft.conversationId, pending: true };
      return { status: 'not_found' };
    }
    return { status: 'found', sentAt: sent.sentAt, providerId: sent.id, threadId: sent.conversationId };
  }

  /**
   * The mailbox last look: `GET /me/messages?$filter=from/emailAddress/address eq '<lead>' and
   * receivedDateTime ge <instant>` over the whole mailbox (Inbox and Junk Email among its folders),
   * immutable ids as the sync keys them. One request. Graph filters on a message's own properties
   * only, so threaded mail from another address is not seen here (the sync still reads it).
   */
  async recentMailFrom(q: RecentMailQuery): Promise<RecentMailResult> {
    const r = await this.api.list(
      {
        filter: `from/emailAddress/address eq ${odataString(q.from)} and receivedDateTime ge ${new Date(q.since).toISOString().replace(/\.\d{3}Z$/, 'Z')}`,
        select: ['id', 'internetMessageId', 'receivedDateTime'],
        top: 20,
        immutableIds: true,
      },
      q.signal ? { signal: q.signal } : {},
    );
    if (!r.ok) return { status: 'unavailable', reason: describeFailure(r.failure, 'Graph') };
    return { status: 'ok', messages: r.value.messages.map((m) => ({ key: m.id, messageId: m.internetMessageId, receivedAt: m.receivedAt })) };
  }

  /** Sent Items since an instant, page by page (sent-since.ts). */
  async sentSince(since: number, onPage: SentPageHandler): Promise<SentSinceResult> {
    const pages = graphSentPages(this.api, since, {
      clock: this.clock,
      policy: this.opts.retry ?? defaultRetryPolicy,
      pageSize: Math.min(1000, Math.max(1, this.opts.sentPageSize ?? 100)),
    });
    return handSentPages(pages, onPage);
  }

  async close(): Promise<void> {
    // Nothing to release: every request has its own connection (mailbox/providers/http.ts).
    this.closed = true;
  }
}

function classify(f: ApiFailure, envelope: Envelope): SendOutcome {
  if (f.kind !== 'http') return nonHttpOutcome(f, 'Graph');
  const { status, error } = f;
  const reason = `Graph ${status} ${error.code}: ${error.message}`;
  const has = (set: Set<string>) => error.codes.some((c) => set.has(c));
  if (status === 400 && error.codes.includes('ErrorInvalidRecipients')) return recipientRefused(envelope, status, reason);
  if ((status === 403 || status === 404) && has(mailboxCodes)) return { kind: 'auth_failed', phase: 'auth', reason, responseCode: status };
  if (has(limitCodes) || status === 507) {
    return { kind: 'transient', phase: 'http_response', reason, responseCode: status, enhancedStatus: null, retryAfterMs: f.retryAfterMs };
  }
  return byStatus(status, reason, f.retryAfterMs);
}


export function graphTransport(opts: GraphTransportOptions): GraphTransport {
  return new GraphTransport(opts);
}
