import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { MailboxTable } from '../../store/schema.ts';
import type { AccessTokenProvider } from '../access-token.ts';
import type { PushRegistry } from '../sync/push-registry.ts';
import type { MailboxSync } from '../sync/source.ts';
import type { Credential } from '../vault.ts';
import type { Envelope, FindSentResult, FolderActionResult, RecentMailQuery, RecentMailResult, SendContext, SendOutcome, SentPageHandler, SentProof, SentSinceResult } from './outcomes.ts';
import type { SmtpTimeouts } from './smtp-imap/smtp-timeouts.ts';

/**
 * A mailbox connector: ONE object per mailbox with everything Cadenza does with the mailbox,
 * whatever its provider. One folder per provider builds it (smtp-imap/, gmail/, graph/), from the
 * mailbox row, its vault credential and a token source; registry.ts lists them. Each role uses
 * the part it needs, declared here as its own interface (STYLE habit 8):
 *
 *   Transport      the sender role (sending/mailbox-sender.ts, the outbox, the mailbox last look,
 *                  inbox replies): send, findSent (by Message-ID), recentMailFrom (the last look),
 *                  sentProof. Replying in a thread is `send` with In-Reply-To and References in
 *                  the composed bytes and, for Gmail, SendContext.threadId (the thread's id from an
 *                  earlier send or from the sync): Gmail files a message in a thread only when told.
 *   MailboxSync    the sync role (ingest/worker/): pull from a cursor, watch for pushes
 *                  (mailbox/sync/source.ts declares it, with the sync's types).
 *   FolderActions  the warmup feature: take a message out of Junk/Spam into the inbox, flag it,
 *                  mark it read, each by its sync key (FetchedMessage.key).
 *
 * What each provider's calls mean, and the outcome types, are in outcomes.ts; none of the methods
 * throws for anything the network or the provider does.
 */

export type Provider = MailboxTable['provider'];

/** A mailbox as its connector is built from it: the `mailbox` row's columns (one type for every role). */
export interface MailboxRow {
  id: string;
  email: string;
  provider: Provider;
  /** mailbox.settings (jsonb): servers and serverSavesSent for smtp_imap (mailbox/settings.ts). */
  settings: unknown;
}

/** The sending part: what the sender role uses. */
export interface Transport {
  readonly kind: 'smtp' | 'gmail' | 'graph';
  /** What findSent can prove about a lost answer (outcomes.ts SentProof). */
  readonly sentProof: SentProof;
  /**
   * The mailbox last look: mail matching `q` in the mailbox now (inbox and junk), one round trip on
   * a warm connection where the protocol allows. Never throws for network or provider trouble.
   */
  recentMailFrom(q: RecentMailQuery): Promise<RecentMailResult>;
  /** Sends raw RFC 5322 bytes (with their Message-ID header) to envelope.to. Never throws for network or provider trouble. */
  send(raw: Buffer, envelope: Envelope, ctx: SendContext): Promise<SendOutcome>;
  /** Looks for messageId ('<id@domain>') in the mailbox's Sent folder. Never throws for network or provider trouble. */
  findSent(messageId: string, opts?: { signal?: AbortSignal }): Promise<FindSentResult>;
  /**
   * Every copy in the mailbox's Sent folder stored or sent since `since` (ms), handed to `onPage` a
   * page at a time (the next page is read once the handler is done): what `cadenza reconcile-sent`
   * reads after a point-in-time restore (sending/reconcile-sent.ts). IMAP: UID SEARCH SINCE over the
   * Sent folder; Gmail: messages.list `labelIds=SENT` `after:` and messages.get format=metadata;
   * Graph: `mailFolders/sentitems/messages` `$filter=sentDateTime ge`, following @odata.nextLink.
   * A transport without it is reported as unable to reconcile. Never throws for network or
   * provider trouble; rethrows what the handler throws.
   */
  sentSince?(since: number, onPage: SentPageHandler): Promise<SentSinceResult>;
  /** Releases connections and timers. Idempotent. */
  close(): Promise<void>;
}

/**
 * The folder actions the warmup feature needs, each on one message named by its sync key
 * (FetchedMessage.key: 'INBOX:<uidvalidity>:<uid>' or '<Junk path>:<uidvalidity>:<uid>' for IMAP,
 * the Gmail message id, the Graph immutable id). Idempotent; never throw for provider trouble.
 *   IMAP   UID MOVE to INBOX (RFC 6851; imapflow falls back to COPY + \Deleted + EXPUNGE where the
 *          server lacks MOVE), UID STORE +FLAGS (\Flagged) / (\Seen) (RFC 3501 6.4.6).
 *   Gmail  users.messages.modify: +INBOX −SPAM; +IMPORTANT +STARRED; −UNREAD (scope gmail.modify).
 *   Graph  POST /me/messages/{id}/move to inbox; PATCH flag.flagStatus flagged; PATCH isRead
 *          (scope Mail.ReadWrite).
 */
export interface FolderActions {
  /** Out of Junk/Spam into the inbox (warmup's "not spam"). A message already in the inbox is left there. */
  moveToInbox(key: string, opts?: { signal?: AbortSignal }): Promise<FolderActionResult>;
  /** Marks it important: IMAP \Flagged, Gmail IMPORTANT and STARRED, Graph flagged. */
  flag(key: string, opts?: { signal?: AbortSignal }): Promise<FolderActionResult>;
  /** Marks it read: IMAP \Seen, Gmail without UNREAD, Graph isRead. */
  markRead(key: string, opts?: { signal?: AbortSignal }): Promise<FolderActionResult>;
  close(): Promise<void>;
}

/** The parts a role can need; an SMTP/IMAP mailbox may lack one (no SMTP server, no IMAP server). */
export type Ability = 'send' | 'sync' | 'folders';

export interface MailboxConnector extends Transport, MailboxSync, FolderActions {
  readonly provider: Provider;
  /** Transport.sentSince, always there: a transport without it answers 'unavailable' with the reason (assemble.ts). */
  sentSince(since: number, onPage: SentPageHandler): Promise<SentSinceResult>;
  /** Why `ability` cannot work with this mailbox's settings, or null when it can. Calling a lacking part throws CONFIG_INVALID. */
  lacks(ability: Ability): string | null;
  /** Closes every part. Idempotent. */
  close(): Promise<void>;
}

/** Push for Gmail and Graph sync (mailbox/sync/push-settings.ts); a provider without its setting is polled. */
export interface ConnectorPush {
  /** The process's registry, shared with the push routes (relayed between processes: push-relay.ts). */
  registry: PushRegistry;
  /** The key of each mailbox's Graph clientState, so that any process can check a notification. */
  secret: string;
  gmailTopic?: string;
  graphNotificationUrl?: string;
}

/** What a process sets once for building any mailbox's connector (besides the credential and tokens). */
export interface ConnectorOptions {
  /** Emulators in tests; the providers' public endpoints otherwise. */
  baseUrls?: { gmail?: string; graph?: string };
  push?: ConnectorPush;
  /** Deadline of one Gmail or Graph HTTP exchange (default 30 s; the demo counts it in real time). */
  httpTimeoutMs?: number;
  smtpTimeouts?: Partial<SmtpTimeouts>;
}

/** Where a process gets an OAuth mailbox's access tokens: MailboxTokens in the app (it refreshes and stores them), the emulators' issuer in the demo and tests. */
export type TokensFor = (mailbox: MailboxRow, credential: Extract<Credential, { kind: 'oauth' }>) => AccessTokenProvider;

/** Everything a process knows for building connectors: the options and its token source. */
export interface ConnectorSetup extends ConnectorOptions {
  tokens?: TokensFor;
}

/** What one provider's factory builds a connector from, besides the row. */
export interface ConnectorDeps extends ConnectorOptions {
  clock: Clock;
  random: Random;
  logger?: Logger;
  /** The mailbox's credential from the vault: a password (smtp_imap) or an OAuth grant. */
  credential: Credential | undefined;
  /** Fresh access tokens for a mailbox with an OAuth grant (required for gmail, graph, and XOAUTH2 on smtp_imap). */
  tokens?: AccessTokenProvider;
}

/**
 * One provider's factory. It opens nothing (the parts connect when used), and throws
 * CONFIG_INVALID (INVALID_INPUT for unreadable settings) when the mailbox cannot have a connector
 * at all: no credential, an OAuth grant and no token source. A part its settings do not allow is
 * reported by `lacks`, not thrown.
 */
export type ConnectorFactory = (mailbox: MailboxRow, deps: ConnectorDeps) => MailboxConnector;
