import { systemClock, type Clock, type TimerHandle } from '../../common/clock.ts';
import type { ApiFailure, TokenSource } from '../providers/call.ts';
import { gmailApi, type GmailApi } from '../providers/gmail/api.ts';
import type { GmailMessageRef } from '../providers/gmail/message.ts';
import type { PushRegistry } from './push-registry.ts';
import { mapLimit } from './map-limit.ts';
import { defaultRetryPolicy, syncFailure, throwIfAborted, withRetry, type RetryPolicy } from './retry.ts';
import type { FetchedMessage, FetchProblem, FolderRole, MailboxSync, PullOptions, SyncBatch, SyncCursor, WatchHandle } from './source.ts';

/**
 * Incremental sync of a Gmail mailbox through the Gmail API (guides/sync, guides/push).
 *
 * Cursor: `{ historyId: "<id>" }`, the mailbox's history id up to which everything in INBOX and
 * SPAM was yielded; `{ historyId: null }` in the middle of a bounded scan (a crash there replays
 * the scan, which the worker deduplicates).
 *
 *   first pull (no cursor)  bounded scan: the profile's historyId is read BEFORE listing, then
 *                           messages.list `after:<window start>` in INBOX and in SPAM, each fetched
 *                           raw; the last batch stores that historyId, so a message arriving during
 *                           the scan is in the history after it and comes with the next pull.
 *   later pulls             history.list from the stored id (messageAdded), page by page; each
 *                           added message still in INBOX or SPAM is fetched raw. A batch's cursor
 *                           is the id of the last history record it covers; the last batch
 *                           stores the answer's historyId.
 *   404 on history.list     the stored id is older than the history Gmail keeps ("typically a
 *                           week, sometimes hours"): the bounded scan again, batches marked
 *                           'resync'. Never a jump to the newest id, which would lose mail.
 *
 * Retries: 429/403 rate limits after their Retry-After, 5xx and network failures with backoff,
 * all bounded (retry.ts). Push (watch): users.watch on INBOX and SPAM, renewed daily; Pub/Sub
 * deliveries reach push-routes.ts, which only calls `changed`.
 */
export interface GmailSyncOptions {
  tokens: TokenSource;
  /** 'https://gmail.googleapis.com' unless pointed at an emulator. */
  baseUrl?: string;
  userId?: string;
  clock?: Clock;
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** history.list and messages.list page size (Gmail's maximum, 500, unless a test wants pages). */
  pageSize?: number;
  /** messages.get calls in flight at once (default 4). */
  concurrency?: number;
  /** Larger messages become a FetchProblem instead of being read into memory (default 40 MB of JSON). */
  maxMessageBytes?: number;
  /** Push: the Pub/Sub topic users.watch publishes to (its push subscription targets push-routes.ts). */
  push?: { topicName: string; registry: PushRegistry; renewEveryMs?: number };
}

/** How far back a bounded scan looks when the worker names no window (the IMAP connector uses the same). */
export const defaultResyncWindowMs = 14 * 86_400_000;
const defaultBatchSize = 50;
/** Gmail takes 35 MB messages (upload limit); their base64url JSON is 4/3 of that. */
const defaultMaxJsonBytes = 48 * 1024 * 1024;
/** Gmail lists up to 500 per page (gmail-api.json maxResults). */
const maxPageSize = 500;
const watchedLabels: Array<{ label: string; folder: FolderRole }> = [
  { label: 'INBOX', folder: 'inbox' },
  { label: 'SPAM', folder: 'junk' },
];

export class GmailSync implements MailboxSync {
  private readonly api: GmailApi;
  private readonly clock: Clock;
  private readonly policy: RetryPolicy;
  private readonly pageSize: number;
  private readonly concurrency: number;

  /** Present only when push is configured; without it the worker polls (source.ts: watch is optional). */
  readonly watch?: (changed: () => void, failed: (error: unknown) => void) => Promise<WatchHandle>;

  constructor(private readonly opts: GmailSyncOptions) {
    this.clock = opts.clock ?? systemClock;
    this.policy = opts.retry ?? defaultRetryPolicy;
    this.pageSize = Math.min(Math.max(1, opts.pageSize ?? maxPageSize), maxPageSize);
    this.concurrency = Math.max(1, opts.concurrency ?? 4);
    this.api = gmailApi({ baseUrl: opts.baseUrl, userId: opts.userId, tokens: opts.tokens, clock: this.clock, timeoutMs: opts.timeoutMs ?? 30_000 });
    const push = opts.push;
    if (push) this.watch = (changed, failed) => this.startWatch(push, changed, failed);
  }

  async *pull(cursor: SyncCursor | null, options: PullOptions = {}): AsyncIterable<SyncBatch> {
    const start = typeof cursor?.historyId === 'string' && /^\d+$/.test(cursor.historyId) ? cursor.historyId : null;
    if (start !== null) {
      const expired = yield* this.incremental(start, options);
      if (!expired) return;
    }
    yield* this.scan(options);
  }

  /** history.list from `start`; returns true when Gmail answered 404 (the id is too old). */
  private async *incremental(start: string, o: PullOptions): AsyncGenerator<SyncBatch, boolean> {
    const batchSize = o.batchSize ?? defaultBatchSize;
    const seen = new Set<string>();
    let messages: FetchedMessage[] = [];
    let problems: FetchProblem[] = [];
    let pending: GmailMessageRef[] = [];
    const fetchPending = async () => {
      for (const got of await mapLimit(pending, this.concurrency, (ref) => this.fetch(ref, o.signal))) {
        if (got && 'raw' in got) messages.push(got);
        else if (got) problems.push(got);
      }
      pending = [];
    };
    let pageToken: string | undefined;
    for (;;) {
      const r = await withRetry(
        this.clock,
        'Gmail history.list',
        () => this.api.history({ startHistoryId: start, historyTypes: ['messageAdded'], maxResults: this.pageSize, pageToken }, { signal: o.signal }),
        { policy: this.policy, signal: o.signal, accept: isNotFound },
      );
      if (!r.ok) return true;
      const page = r.value;
      for (const rec of page.history) {
        for (const added of rec.messagesAdded) {
          if (seen.has(added.id)) continue;
          seen.add(added.id);
          // The record names the labels the message had; skip what is neither INBOX nor SPAM
          // (our own SENT copies, drafts) without fetching it.
          if (added.labelIds && !added.labelIds.some((l) => l === 'INBOX' || l === 'SPAM')) continue;
          pending.push(added);
        }
        // Batches end on a record boundary, so that the record's id is a cursor that covers them.
        if (pending.length + messages.length + problems.length >= batchSize) {
          await fetchPending();
          if (messages.length || problems.length) yield { messages, problems, cursor: { historyId: rec.id }, mode: 'incremental' };
          messages = [];
          problems = [];
        }
      }
      await fetchPending();
      if (page.nextPageToken === null) {
        if (messages.length || problems.length || page.historyId !== start) {
          yield { messages, problems, cursor: { historyId: page.historyId }, mode: 'incremental' };
        }
        return false;
      }
      pageToken = page.nextPageToken;
    }
  }

  /** The bounded full scan of INBOX and SPAM (first sync, or after a 404). */
  private async *scan(o: PullOptions): AsyncGenerator<SyncBatch> {
    const batchSize = o.batchSize ?? defaultBatchSize;
    const profile = await withRetry(this.clock, 'Gmail getProfile', () => this.api.profile({ signal: o.signal }), { policy: this.policy, signal: o.signal });
    if (!profile.ok) throw syncFailure('Gmail getProfile', profile.failure);
    const since = Math.floor((this.clock.now() - (o.resyncWindowMs ?? defaultResyncWindowMs)) / 1000);
    const refs = new Map<string, GmailMessageRef>();
    for (const { label } of watchedLabels) {
      let pageToken: string | undefined;
      do {
        const r = await withRetry(
          this.clock,
          'Gmail messages.list',
          // includeSpamTrash for SPAM: whether labelIds=SPAM alone reaches spam is not documented.
          () => this.api.list({ q: `after:${since}`, labelIds: [label], includeSpamTrash: label === 'SPAM', maxResults: this.pageSize, pageToken }, { signal: o.signal }),
          { policy: this.policy, signal: o.signal },
        );
        if (!r.ok) throw syncFailure('Gmail messages.list', r.failure);
        for (const m of r.value.messages) refs.set(m.id, m);
        pageToken = r.value.nextPageToken ?? undefined;
      } while (pageToken);
    }
    // Lists come newest first; hand them over oldest first, as they arrived.
    const ordered = [...refs.values()].reverse();
    for (let i = 0; i < ordered.length || i === 0; i += batchSize) {
      const messages: FetchedMessage[] = [];
      const problems: FetchProblem[] = [];
      for (const got of await mapLimit(ordered.slice(i, i + batchSize), this.concurrency, (ref) => this.fetch(ref, o.signal))) {
        if (got && 'raw' in got) messages.push(got);
        else if (got) problems.push(got);
      }
      const last = i + batchSize >= ordered.length;
      yield { messages, problems, cursor: last ? { historyId: profile.value.historyId } : { historyId: null }, mode: 'resync' };
    }
  }

  /** One message, raw; null when it is gone or no longer in INBOX/SPAM. */
  private async fetch(ref: GmailMessageRef & { labelIds?: string[] | null }, signal: AbortSignal | undefined): Promise<FetchedMessage | FetchProblem | null> {
    throwIfAborted(signal, 'Gmail messages.get');
    const r = await withRetry(this.clock, 'Gmail messages.get', () => this.api.get({ id: ref.id, format: 'raw', maxBytes: this.opts.maxMessageBytes ?? defaultMaxJsonBytes }, { signal }), {
      policy: this.policy,
      signal,
      accept: (f) => isNotFound(f) || f.kind === 'malformed' || (f.kind === 'network' && f.tooLarge === true),
    });
    if (!r.ok) {
      // The folder is unknown without the message; the label the record named decides where a human looks.
      const folder: FolderRole = ref.labelIds?.includes('SPAM') ? 'junk' : ref.labelIds?.includes('INBOX') ? 'inbox' : 'other';
      if (r.failure.kind === 'malformed') return { key: ref.id, folder, reason: `Gmail messages.get: ${r.failure.reason}` };
      if (r.failure.kind === 'network') return { key: ref.id, folder, reason: `Gmail messages.get: ${r.failure.reason}` };
      return null; // deleted since it was listed
    }
    const m = r.value;
    const folder = watchedLabels.find((w) => m.labelIds.includes(w.label))?.folder;
    if (!folder) return null;
    if (!m.raw || m.raw.length === 0) return { key: m.id, folder, reason: 'Gmail messages.get format=raw answered without the message' };
    return { key: m.id, folder, raw: new Uint8Array(m.raw), threadId: m.threadId, receivedAt: m.internalDate };
  }

  /**
   * users.watch on INBOX and SPAM; Pub/Sub pushes for this address reach `changed` through the
   * registry. Renewed every `renewEveryMs` (default daily, as Google advises; a watch lapses after
   * 7 days); a failed renewal calls `failed`, and the worker watches again with backoff.
   */
  private async startWatch(push: NonNullable<GmailSyncOptions['push']>, changed: () => void, failed: (error: unknown) => void): Promise<WatchHandle> {
    const profile = await withRetry(this.clock, 'Gmail getProfile', () => this.api.profile(), { policy: this.policy });
    if (!profile.ok) throw syncFailure('Gmail getProfile', profile.failure);
    // Registered before users.watch, which publishes once at once.
    const unregister = push.registry.watchGmail(profile.value.emailAddress, changed);
    let timer: TimerHandle | null = null;
    let closed = false;
    const renew = async (): Promise<number> => {
      const r = await withRetry(
        this.clock,
        'Gmail users.watch',
        () => this.api.watch({ topicName: push.topicName, labelIds: watchedLabels.map((w) => w.label), labelFilterBehavior: 'INCLUDE' }),
        { policy: this.policy },
      );
      if (!r.ok) throw syncFailure('Gmail users.watch', r.failure);
      return r.value.expiration;
    };
    const schedule = (expiration: number) => {
      const every = push.renewEveryMs ?? 86_400_000;
      // Renew daily, and in any case well before the watch lapses.
      const due = Math.max(1_000, Math.min(every, (expiration - this.clock.now()) / 2));
      timer = this.clock.setTimer(due, () => {
        if (closed) return;
        renew().then(
          (exp) => !closed && schedule(exp),
          (e) => !closed && failed(e),
        );
      });
    };
    try {
      schedule(await renew());
    } catch (e) {
      unregister();
      throw e;
    }
    return {
      close: async () => {
        if (closed) return;
        closed = true;
        (timer as TimerHandle | null)?.cancel();
        unregister();
        // No users.stop here: Gmail keeps one watch per mailbox, not per caller, so a closing owner
        // would stop the watch the next owner (after a lease move or a reconnect) has just made.
        // Notifications nobody listens to are acked and cost nothing; the watch lapses in 7 days.
      },
    };
  }

  /** users.stop, for a mailbox being disconnected: Gmail stops publishing for it (within minutes). */
  async stopPush(opts: { signal?: AbortSignal } = {}): Promise<void> {
    const r = await withRetry(this.clock, 'Gmail users.stop', () => this.api.stop(opts), { policy: this.policy, signal: opts.signal });
    if (!r.ok) throw syncFailure('Gmail users.stop', r.failure);
  }

  async close(): Promise<void> {
    // Nothing held open: every request has its own connection (providers/http.ts).
  }
}

function isNotFound(f: ApiFailure): boolean {
  return f.kind === 'http' && f.status === 404;
}

export function gmailSync(opts: GmailSyncOptions): GmailSync {
  return new GmailSync(opts);
}
