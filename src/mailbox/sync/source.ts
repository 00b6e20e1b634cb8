/**
 * The sync part of every mailbox connector (mailbox/connectors/connector.ts): IMAP in
 * imap-sync.ts, the Gmail API in gmail-sync.ts, Microsoft Graph in graph-sync.ts. It is what the
 * sync role (ingest/worker/) uses of the connector; its types are the mailbox side's, so that the
 * ingestion pipeline and the connectors share them without ingest/ owning them.
 *
 * Promise 5, "cursors are the truth": a connector never stores its cursor itself. `pull` yields
 * batches, each with the cursor that is valid once that batch and every batch before it are
 * durably processed; the worker stores the batch's signals and the cursor in one transaction, and
 * passes the stored cursor to the next `pull`. A crash between a batch and its commit therefore
 * replays the batch (processing is idempotent by mailbox + Message-ID / provider key), it never
 * skips one.
 *
 * Push (`watch`) only says "something changed, pull now"; it never carries messages. A watch that
 * holds a connection of its own (IMAP IDLE) may also offer `WatchHandle.pull`: the same pull, of
 * the folders it watches, on that connection, so that the pull a push asks for opens nothing.
 */

/** Where a fetched message was found, in the provider's words (for the unified inbox and dedup). */
export type FolderRole = 'inbox' | 'junk' | 'sent' | 'other';

export interface FetchedMessage {
  /**
   * Unique and stable within the mailbox for this copy: 'INBOX:<uidvalidity>:<uid>', a Gmail
   * message id, a Graph message id. Used to deduplicate replays.
   */
  key: string;
  folder: FolderRole;
  /** The complete RFC 5322 message. A connector that cannot get it yields a `problem` instead. */
  raw: Uint8Array;
  /** Gmail threadId, Graph conversationId; null for IMAP. */
  threadId: string | null;
  /** When the server received it (IMAP INTERNALDATE, Gmail internalDate, Graph receivedDateTime), epoch ms. */
  receivedAt: number | null;
}

/** A message the connector saw but could not fetch or that was refused by its limits: quarantine it. */
export interface FetchProblem {
  key: string;
  folder: FolderRole;
  reason: string;
}

/** Opaque JSON, stored as it is; each connector documents its own shape. */
export type SyncCursor = Record<string, unknown>;

export interface SyncBatch {
  messages: FetchedMessage[];
  problems: FetchProblem[];
  /** The cursor to store once this batch (and all before it) is processed. */
  cursor: SyncCursor;
  /**
   * 'incremental' normally; 'resync' when the stored cursor was refused (UIDVALIDITY changed,
   * Gmail history 404, Graph 410) and the connector fell back to a bounded full scan, which yields
   * messages the worker may have seen already (deduplicate by Message-ID).
   */
  mode: 'incremental' | 'resync';
}

export interface PullOptions {
  signal?: AbortSignal;
  /** A full resync looks back this far (ms) at most. */
  resyncWindowMs?: number;
  /** At most this many messages per batch. */
  batchSize?: number;
}

export interface WatchHandle {
  /** Stops watching and closes what it opened. */
  close(): Promise<void>;
  /**
   * Pulls the folders this watch covers (IMAP: INBOX, and Junk with `watchJunk`) on the watch's own
   * connection, from `cursor`; the cursor's other folders are carried as they are, left to the
   * next `MailboxSync.pull`. Batches and cursors as `pull` (promise 5). It throws when the watch's
   * connection is not usable or breaks, and then the watch has failed too: the caller pulls the
   * ordinary way and reconnects the watch.
   */
  pull?(cursor: SyncCursor | null, options?: PullOptions): AsyncIterable<SyncBatch>;
}

export interface MailboxSync {
  /** Pulls everything after `cursor` (null: first sync, start from now minus the resync window). */
  pull(cursor: SyncCursor | null, options?: PullOptions): AsyncIterable<SyncBatch>;
  /**
   * Calls `changed` whenever the server says something may have arrived (IMAP IDLE EXISTS, a
   * Gmail watch notification, a Graph change notification), and `failed` when the watch broke
   * (the worker reconnects with backoff). Optional: a connector without push is polled.
   */
  watch?(changed: () => void, failed: (error: unknown) => void): Promise<WatchHandle>;
  /** Closes connections. */
  close(): Promise<void>;
}
