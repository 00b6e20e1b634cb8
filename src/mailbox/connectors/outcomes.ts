/**
 * What a mailbox connector's send side answers (connector.ts declares the connector): the outcome
 * of one send, of a search of the Sent folder, and of the mailbox last look, each a closed type
 * the sender acts on without knowing the protocol. Moved here from the sending side's transport
 * file so that the mailbox folder, which implements them, does not import the sending folder.
 *
 * A send hands the composed bytes of ONE message to the provider and says, without throwing,
 * what happened:
 *
 *   accepted     the provider took responsibility for the message (SMTP 250 after the DATA
 *                terminator, HTTP 2xx): record it sent.
 *   transient    it was certainly NOT accepted and trying again later may work (4xx, refused
 *                connection, timeout before the message was handed over, 429/5xx HTTP before the
 *                body was sent): retry with backoff (outbox.recordFailure, permanent: false).
 *   bounce       every recipient was refused permanently at RCPT time (5xx): a bounce signal for
 *                each recipient to the engine (hard bounce, suppression); nothing was sent.
 *   auth_failed  the credentials were refused (SMTP 535/534/530 at AUTH, HTTP 401, XOAUTH2 error):
 *                pause the mailbox; nothing was sent. Not the request's fault: do not fail it.
 *   rejected     the message itself was refused permanently (5xx at MAIL FROM or after DATA,
 *                HTTP 400/403 on the message): fail the request (permanent: true).
 *   ambiguous    the message was handed over completely (the SMTP DATA terminator was written,
 *                the HTTP request body was sent) and then no answer came: the provider may or may
 *                not have accepted it. The request becomes 'unknown' (outbox.markUnknown) and is
 *                settled later by findSent(messageId), never by sending again blindly.
 *
 * A connector never throws for anything the network or the provider does; it throws only for
 * programming errors (an empty envelope, a message without the Message-ID it was told about).
 */

/** SMTP envelope (RFC 5321 MAIL FROM / RCPT TO); HTTP transports use it to check the message. */
export interface Envelope {
  from: string;
  to: string[];
}

export interface SendContext {
  /**
   * The Message-ID header of `raw`, with angle brackets ('<id@domain>'). The same on every retry
   * of a request, so that findSent and the receivers see one message (promise 1).
   */
  messageId: string;
  /** Aborts the attempt. An abort after the message was handed over gives 'ambiguous'. */
  signal?: AbortSignal;
  /**
   * The provider's thread of the conversation this message continues (Gmail `threadId`, as an
   * earlier step's `accepted.threadId` or `findSent`'s `found.threadId` gave it). Gmail files a
   * follow-up in that thread only when told (the headers alone are not enough); SMTP and Graph
   * thread by In-Reply-To/References and ignore it.
   */
  threadId?: string | null;
}

/** How far a send got when it ended; names the protocol step, for logs and for the classification. */
export type SendPhase =
  | 'sent_copy' // SMTP without serverSavesSent: writing the pending Sent copy over IMAP, before any handover
  | 'connect' // TCP (+ implicit TLS) connection
  | 'greeting' // waiting for the SMTP 220 banner
  | 'ehlo'
  | 'starttls'
  | 'auth' // SMTP AUTH, or obtaining an OAuth access token
  | 'mail' // MAIL FROM
  | 'rcpt' // RCPT TO
  | 'data' // the DATA command, before the 354
  | 'body' // message bytes being written, terminator not yet written
  | 'end_of_data' // terminator written, waiting for the final reply: the ambiguous window
  | 'http_request' // HTTP transports: request not completely sent
  | 'http_response' // HTTP transports: request sent, waiting for the response: the ambiguous window
  | 'done';

/** One recipient refused permanently (SMTP 5xx at RCPT; a provider's equivalent). */
export interface RecipientBounce {
  recipient: string;
  /** 550, or null when the provider gives no SMTP code. */
  responseCode: number | null;
  /** RFC 3463 enhanced status code such as '5.1.1', or null when the server gave none. */
  enhancedStatus: string | null;
  /** The server's text, for the bounce record (never contains credentials). */
  diagnostic: string;
}

/**
 * Where the copy in the sender's Sent folder comes from, which is what findSent searches:
 * 'server'  the provider files it itself (Gmail, Graph, hosted SMTP with server-side Sent copies);
 * 'appended' the transport APPENDed the bytes over IMAP before the handover and settled it after
 *           the provider's answer (SentProof 'copy_first');
 * 'pending' the copy was appended but is still marked pending (the answer was lost, or clearing
 *           the mark failed): findSent reports it as `pending`;
 * 'append_failed' it tried and failed (logged; the send itself stands);
 * 'none'    nothing was filed (nothing was sent).
 */
export type SentCopy = 'server' | 'appended' | 'pending' | 'append_failed' | 'none';

/**
 * What a search of the Sent folder can prove about a send whose answer was lost (a crash, a
 * timeout after the handover): docs/architecture.md, "Exactly once". Written on the request at
 * its claim, so a request is judged by the rule it was handed over under.
 * 'copy_first'    the transport writes the Sent copy BEFORE the handover, marked PENDING_KEYWORD,
 *                 clears the mark after the provider's 250, and removes the copy after a certain
 *                 refusal. No copy: never handed over (safe to send again). A pending copy: cannot
 *                 tell (possibly sent). A settled copy: sent.
 * 'provider_copy' the provider files the copy itself once it accepted (Gmail, Graph, SMTP with
 *                 serverSavesSent): a copy = sent; none after the provider's documented delay
 *                 (outbox unknownGraceMs) = never accepted.
 */
export type SentProof = 'copy_first' | 'provider_copy';

/** The IMAP keyword on a Sent copy written before its handover and not yet settled (RFC 3501 flag-keyword). */
export const PENDING_KEYWORD = '$CadenzaPending';

export type SendOutcome =
  | {
      kind: 'accepted';
      /** The provider's answer: '250 2.0.0 Ok: queued as 4B76B18003C', or the HTTP id. */
      response: string;
      /** The provider's id for the message (Postfix queue id, Gmail message id, Graph id), if known. */
      providerId: string | null;
      /** Recipients refused at RCPT while others were accepted (bounce signals for these only). */
      bounced: RecipientBounce[];
      sentCopy: SentCopy;
      /** The provider's thread id (Gmail threadId) when the answer gives it: the next step's ctx.threadId. */
      threadId?: string | null;
      /**
       * 'sent_folder': the provider only queued the message (Graph's 202: a draft was saved, the
       * submission happens later and may still fail). It is accepted, and as at-most-once as any
       * acceptance (never send it again), but "sent" is confirmed by findSent once the Sent copy
       * shows (minutes at most); a failure after the 202 arrives as an NDR in the inbox.
       * Absent: the answer itself is the acceptance (SMTP 250, Gmail 200).
       */
      confirm?: 'sent_folder';
    }
  | {
      kind: 'transient';
      phase: SendPhase;
      reason: string;
      responseCode: number | null;
      enhancedStatus: string | null;
      /** The provider asked for this delay (HTTP Retry-After), else null: use the outbox's backoff. */
      retryAfterMs: number | null;
    }
  | { kind: 'bounce'; recipients: RecipientBounce[] }
  | { kind: 'auth_failed'; phase: SendPhase; reason: string; responseCode: number | null }
  | {
      kind: 'rejected';
      phase: SendPhase;
      reason: string;
      responseCode: number | null;
      enhancedStatus: string | null;
    }
  | { kind: 'ambiguous'; phase: SendPhase; reason: string; sentCopy: SentCopy };

export type SendOutcomeKind = SendOutcome['kind'];

/**
 * The answer to "did this message go out?", from the mailbox's Sent folder (IMAP UID SEARCH
 * HEADER Message-ID, Gmail `rfc822msgid:`, Graph `internetMessageId`).
 * found: sentAt is the time the provider shows for the copy (IMAP INTERNALDATE, Gmail
 *        internalDate, Graph sentDateTime), or null if it shows none.
 * not_found: searched and absent. The caller decides whether enough time has passed
 *        (outbox unknownGraceMs) for absence to mean "never accepted".
 * unavailable: could not search (connection, auth, no Sent folder): ask again later; never
 *        treat as not_found.
 */
export type FindSentResult =
  | {
      status: 'found';
      sentAt: number | null;
      /** The copy's provider id (Gmail message id, Graph immutable id) and thread (Gmail threadId, Graph conversationId), when known. */
      providerId?: string | null;
      threadId?: string | null;
      /**
       * True when every copy found still carries PENDING_KEYWORD (SentProof 'copy_first'): it
       * was written before the handover and its answer never settled it, so whether it went out
       * cannot be told. Absent or false: a settled copy, i.e. sent.
       */
      pending?: boolean;
    }
  | { status: 'not_found' }
  | { status: 'unavailable'; reason: string };

/**
 * The mailbox last look (sending/mailbox-last-look.ts) asks: has mail from the lead, or threaded
 * on our messages, reached the mailbox since the previous step? The answer comes from the mailbox
 * itself (IMAP UID SEARCH over INBOX and Junk, Gmail messages.list `from:`/`after:`, Graph
 * `$filter` on from and receivedDateTime), not from the sync pipeline, which may not have read it
 * yet: that gap is the race the look closes.
 */
export interface RecentMailQuery {
  /** The lead's address: mail from it counts. */
  from: string;
  /**
   * Our Message-IDs in the conversation ('<id@domain>'): mail whose In-Reply-To or References names
   * one counts whoever sent it (a colleague answering, another address of the lead). IMAP searches
   * them; Gmail and Graph have no search on those headers and look by sender only.
   */
  threadedOn: string[];
  /** Mail the server received at or after this instant (epoch ms) counts. */
  since: number;
  signal?: AbortSignal;
}

export interface RecentMail {
  /** The sync connector's key for this copy (mailbox/sync/source.ts FetchedMessage.key), to tell whether the pipeline has read it. */
  key: string;
  /** Its Message-ID header, when the answer gives it (IMAP, Graph). */
  messageId: string | null;
  /** When the server received it, when the answer gives it. */
  receivedAt: number | null;
}

export type RecentMailResult = { status: 'ok'; messages: RecentMail[] } | { status: 'unavailable'; reason: string };

/** One copy in a mailbox's Sent folder, as Transport.sentSince lists it. */
export interface SentFolderCopy {
  messageId: string;
  /** When the server stored or sent it (IMAP INTERNALDATE, Gmail internalDate, Graph sentDateTime), when known. */
  sentAt: number | null;
  to: string[];
  subject: string | null;
  /** Its In-Reply-To header (IMAP, Gmail); Graph lists no such property, so null there. */
  inReplyTo: string | null;
  /** A copy written before the handover and never settled (PENDING_KEYWORD): it may not have gone out. */
  pending: boolean;
}

/**
 * Takes one page of a Sent-folder listing (Transport.sentSince). The listing waits for it before
 * reading the next page, so a Sent folder of any size is held one page at a time. A handler that
 * throws ends the listing with its error (it is the caller's failure, not the mailbox's).
 */
export type SentPageHandler = (copies: SentFolderCopy[]) => Promise<void>;

/**
 * What a Sent-folder listing read. ok: every page was handed over; `copies` counts the copies
 * handed over, `withoutMessageId` those left out because they carry no Message-ID (none is a
 * step of Cadenza's, which always writes one). unavailable: the listing stopped (connection,
 * grant, a rate limit longer than the reader waits): the pages before it were handed over, the
 * rest were not read; ask again later, and never read it as "nothing else was sent".
 */
export type SentSinceResult =
  | { status: 'ok'; copies: number; withoutMessageId: number }
  | { status: 'unavailable'; reason: string; copies: number };

/**
 * What a folder action (connector.ts FolderActions: move to the inbox, flag, mark read) says,
 * without throwing for anything the network or the provider does:
 *   done         the provider did it (or it was already so: every action is idempotent). `key` is
 *                the message's sync key afterwards: an IMAP move gives the copy a new UID in INBOX
 *                (null when the server did not say which, RFC 4315 COPYUID); Gmail ids and Graph
 *                immutable ids do not change.
 *   not_found    no such message (any more): deleted, moved by the user, or an IMAP key from an
 *                older UIDVALIDITY. Acting again will not help.
 *   forbidden    the grant does not allow it: an OAuth grant without gmail.modify or
 *                Mail.ReadWrite (made before those scopes were asked for), a read-only folder.
 *                The mailbox must be reconnected; retrying will not help.
 *   unavailable  could not act now (connection, credentials, rate limit, 5xx): try later.
 */
export type FolderActionResult =
  | { status: 'done'; key: string | null }
  | { status: 'not_found'; reason: string }
  | { status: 'forbidden'; reason: string }
  | { status: 'unavailable'; reason: string };

/** True for outcomes after which the message certainly did not reach the provider. */
export function notSent(o: SendOutcome): boolean {
  return o.kind === 'transient' || o.kind === 'bounce' || o.kind === 'auth_failed' || o.kind === 'rejected';
}

/** Parses an RFC 3463 enhanced status code ('5.1.1') from the start of a server's reply text. */
export function enhancedStatusOf(text: string | undefined | null): string | null {
  if (!text) return null;
  // The reply may keep its basic code in front ('550 5.1.1 <x>: ...') or not ('5.1.1 <x>: ...').
  const m = /^(?:\d{3}[ -])?([245]\.\d{1,3}\.\d{1,3})\b/.exec(text.trim());
  return m ? m[1]! : null;
}
