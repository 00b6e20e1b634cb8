import { randomBytes } from 'node:crypto';
import { systemClock, type Clock, type TimerHandle } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { ApiFailure, TokenSource } from '../providers/call.ts';
import { graphApi, isServiceLink, type GraphApi } from '../providers/graph/api.ts';
import { isDeltaExpired } from '../providers/graph/messages-delta.ts';
import { mapLimit } from './map-limit.ts';
import type { PushRegistry } from './push-registry.ts';
import { defaultRetryPolicy, syncFailure, throwIfAborted, withRetry, type RetryPolicy } from './retry.ts';
import type { FetchedMessage, FetchProblem, FolderRole, MailboxSync, PullOptions, SyncBatch, SyncCursor, WatchHandle } from './source.ts';
import { defaultResyncWindowMs } from './gmail-sync.ts';

/**
 * Incremental sync of a Microsoft 365 mailbox through Microsoft Graph delta queries
 * (concepts/delta-query-messages.md), one delta per folder: Inbox and Junk Email.
 *
 * Cursor: `{ folders: { inbox: "<link>", junkemail: "<link>" } }`, each the URL to call next for
 * that folder: its `@odata.deltaLink` once a round is complete, or the `@odata.nextLink` of the
 * page after the last batch yielded when a round was cut into several batches (Graph's links
 * carry the round's state, so a crash resumes where the stored cursor says).
 *
 *   no link for a folder   first round, bounded: `$filter=receivedDateTime ge <window start>`
 *                          (the one filter delta takes on messages), batches marked 'resync'.
 *   a stored link          followed page by page; each new message's MIME is `$value`; `@removed`
 *                          entries are skipped (a moved or deleted message was already yielded).
 *   410 / syncStateNotFound / resyncRequired
 *                          the folder's state is gone from Graph's cache: a fresh bounded round
 *                          for that folder only, batches marked 'resync'; the worker deduplicates
 *                          by key (immutable id) and Message-ID. The 410's Location (the initial
 *                          URL without options) is not followed: ours carries the window filter.
 *
 * Ids are immutable ids (`Prefer: IdType="ImmutableId"`), so a message moved from Junk Email to
 * Inbox keeps its key. Retries: 429/503 after Retry-After (decimals), other 5xx and network with
 * backoff, bounded and abortable (retry.ts). Push (watch): a subscription per folder whose
 * notifications reach push-routes.ts, which only calls `changed`.
 */
export interface GraphSyncOptions {
  tokens: TokenSource;
  /** 'https://graph.microsoft.com/v1.0' unless pointed at an emulator. */
  baseUrl?: string;
  /** 'me' or the mailbox's id / user principal name. */
  user?: string;
  clock?: Clock;
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** `Prefer: odata.maxpagesize` (default 50). */
  pageSize?: number;
  /** Larger messages become a FetchProblem instead of being read into memory. */
  maxMessageBytes?: number;
  /** `$value` calls in flight at once (default 4: Graph's concurrency limit per app and mailbox). */
  concurrency?: number;
  /** Push: where Graph POSTs notifications (graphPushRoutes' public URL) and the registry it looks watchers up in. */
  push?: {
    notificationUrl: string;
    registry: PushRegistry;
    /** Subscription lifetime asked for (default 2 days; Graph's cap for messages is 4,230 minutes in its table). */
    lifetimeMs?: number;
    /** The clientState secret (default: 32 random bytes); tests may fix it. */
    clientState?: string;
  };
}

export const graphFolders: ReadonlyArray<{ name: 'inbox' | 'junkemail'; role: FolderRole }> = [
  { name: 'inbox', role: 'inbox' },
  { name: 'junkemail', role: 'junk' },
];
const select = ['id', 'internetMessageId', 'conversationId', 'receivedDateTime'];
const defaultBatchSize = 50;

type Links = Partial<Record<'inbox' | 'junkemail', string>>;

export class GraphSync implements MailboxSync {
  private readonly api: GraphApi;
  private readonly clock: Clock;
  private readonly policy: RetryPolicy;

  /** Present only when push is configured; without it the worker polls (source.ts: watch is optional). */
  readonly watch?: (changed: () => void, failed: (error: unknown) => void) => Promise<WatchHandle>;

  constructor(private readonly opts: GraphSyncOptions) {
    this.clock = opts.clock ?? systemClock;
    this.policy = opts.retry ?? defaultRetryPolicy;
    this.api = graphApi({ baseUrl: opts.baseUrl, user: opts.user, tokens: opts.tokens, clock: this.clock, timeoutMs: opts.timeoutMs ?? 30_000 });
    const push = opts.push;
    if (push) this.watch = (changed, failed) => this.startWatch(push, changed, failed);
  }

  async *pull(cursor: SyncCursor | null, options: PullOptions = {}): AsyncIterable<SyncBatch> {
    const stored = (cursor?.folders ?? {}) as Record<string, unknown>;
    const links: Links = {};
    for (const f of graphFolders) if (typeof stored[f.name] === 'string') links[f.name] = stored[f.name] as string;
    for (const f of graphFolders) {
      const link = links[f.name];
      // A link is called with the mailbox's token, so only one pointing at Graph itself is followed.
      if (link !== undefined && this.ours(link)) {
        const expired = yield* this.round(f, new URL(link), 'incremental', links, options);
        if (!expired) continue;
      }
      const start = this.api.deltaStartUrl(f.name, { select, receivedSince: this.clock.now() - (options.resyncWindowMs ?? defaultResyncWindowMs) });
      const expiredAgain = yield* this.round(f, start, 'resync', links, options);
      if (expiredAgain) throw cadenzaError('MAILBOX_UNAVAILABLE', `Graph delta on ${f.name}: a fresh round was refused as expired`);
    }
  }

  /**
   * One delta round on one folder, from `url` to its deltaLink; `links` is updated as it goes and
   * every batch carries a copy. Returns true when Graph said the state is gone.
   */
  private async *round(
    folder: (typeof graphFolders)[number],
    url: URL,
    mode: SyncBatch['mode'],
    links: Links,
    o: PullOptions,
  ): AsyncGenerator<SyncBatch, boolean> {
    const batchSize = o.batchSize ?? defaultBatchSize;
    const seen = new Set<string>();
    const startLink = links[folder.name];
    let messages: FetchedMessage[] = [];
    let problems: FetchProblem[] = [];
    let next = url;
    for (;;) {
      const r = await withRetry(
        this.clock,
        `Graph delta ${folder.name}`,
        () => this.api.delta({ url: next, pageSize: this.opts.pageSize ?? 50, immutableIds: true }, { signal: o.signal }),
        { policy: this.policy, signal: o.signal, accept: expiredFailure },
      );
      if (!r.ok) return true;
      // Delta may repeat an item within a round; a removal needs nothing (it was yielded when it came).
      const fresh = r.value.items.filter((item) => !item.removed && !seen.has(item.id) && seen.add(item.id));
      const fetched = await mapLimit(fresh, this.opts.concurrency ?? 4, (item) =>
        this.fetch(item.id, folder.role, item.message?.conversationId ?? null, item.message?.receivedAt ?? null, o.signal),
      );
      for (const got of fetched) {
        if (got && 'raw' in got) messages.push(got);
        else if (got) problems.push(got);
      }
      const link = r.value.deltaLink ?? r.value.nextLink!;
      if (!this.ours(link)) throw cadenzaError('MAILBOX_UNAVAILABLE', `Graph delta on ${folder.name}: a link to another host`, { link: new URL(link).origin });
      links[folder.name] = link;
      if (r.value.deltaLink !== null) {
        if (messages.length || problems.length || link !== startLink) yield { messages, problems, cursor: cursorOf(links), mode };
        return false;
      }
      if (messages.length + problems.length >= batchSize) {
        yield { messages, problems, cursor: cursorOf(links), mode };
        messages = [];
        problems = [];
      }
      next = new URL(link);
    }
  }

  private ours(link: string): boolean {
    return isServiceLink(this.api.serviceRoot, link);
  }


  private async fetch(id: string, folder: FolderRole, threadId: string | null, receivedAt: number | null, signal: AbortSignal | undefined): Promise<FetchedMessage | FetchProblem | null> {
    throwIfAborted(signal, 'Graph $value');
    const r = await withRetry(this.clock, 'Graph $value', () => this.api.mime({ id, maxBytes: this.opts.maxMessageBytes }, { signal }), {
      policy: this.policy,
      signal,
      accept: (f) => (f.kind === 'http' && f.status === 404) || (f.kind === 'network' && f.tooLarge === true),
    });
    if (!r.ok) {
      if (r.failure.kind === 'http') return null; // deleted since the delta named it
      return { key: id, folder, reason: `Graph $value: ${(r.failure as { reason: string }).reason}` };
    }
    if (r.value.length === 0) return { key: id, folder, reason: 'Graph $value: empty MIME content' };
    return { key: id, folder, raw: new Uint8Array(r.value), threadId, receivedAt };
  }

  /**
   * A subscription per folder (created messages), notifications and lifecycle events to
   * push.notificationUrl, checked by clientState in push-routes.ts. Renewed at half their lifetime;
   * `reauthorizationRequired` renews at once, `missed` pulls, `subscriptionRemoved` (or a failed
   * renewal) calls `failed` so that the worker watches again and pulls.
   */
  private async startWatch(push: NonNullable<GraphSyncOptions['push']>, changed: () => void, failed: (error: unknown) => void): Promise<WatchHandle> {
    const lifetime = push.lifetimeMs ?? 2 * 86_400_000;
    const clientState = push.clientState ?? randomBytes(32).toString('base64url');
    const subs = new Map<string, number>();
    let closed = false;
    let timer: TimerHandle | null = null;
    const renewAll = async () => {
      for (const id of [...subs.keys()]) {
        const r = await withRetry(this.clock, 'Graph subscription renewal', () => this.api.renewSubscription({ id, expirationDateTime: this.clock.now() + lifetime }), {
          policy: this.policy,
        });
        if (!r.ok) throw syncFailure('Graph subscription renewal', r.failure);
        subs.set(id, r.value.expiration);
      }
    };
    const schedule = () => {
      timer?.cancel();
      if (subs.size === 0) return;
      const soonest = Math.min(...subs.values());
      timer = this.clock.setTimer(Math.max(1_000, (soonest - this.clock.now()) / 2), () => {
        if (closed) return;
        renewAll().then(
          () => !closed && schedule(),
          (e) => !closed && failed(e),
        );
      });
    };
    const reg = push.registry.watchGraph(clientState, {
      changed,
      lifecycle: (event, id) => {
        if (closed) return;
        if (event === 'missed') changed();
        else if (event === 'reauthorizationRequired') renewAll().then(schedule, failed);
        else if (event === 'subscriptionRemoved') {
          reg.forget(id);
          subs.delete(id);
          failed(cadenzaError('MAILBOX_UNAVAILABLE', `Graph removed subscription ${id}`, { lifecycleEvent: event }));
        }
      },
    });
    const resourceBase = !this.opts.user || this.opts.user === 'me' ? '/me' : `/users/${encodeURIComponent(this.opts.user)}`;
    const unsubscribeAll = async () => {
      for (const id of subs.keys()) await this.api.unsubscribe({ id }).catch(() => undefined);
    };
    try {
      for (const f of graphFolders) {
        const r = await withRetry(
          this.clock,
          'Graph subscription',
          () =>
            this.api.subscribe({
              changeType: 'created',
              notificationUrl: push.notificationUrl,
              lifecycleNotificationUrl: push.notificationUrl,
              resource: `${resourceBase}/mailFolders('${f.name}')/messages`,
              expirationDateTime: this.clock.now() + lifetime,
              clientState,
            }),
          { policy: this.policy },
        );
        if (!r.ok) throw syncFailure('Graph subscription', r.failure);
        subs.set(r.value.id, r.value.expiration);
        reg.subscribed(r.value.id);
      }
    } catch (e) {
      reg.close();
      await unsubscribeAll();
      throw e;
    }
    schedule();
    return {
      close: async () => {
        if (closed) return;
        closed = true;
        (timer as TimerHandle | null)?.cancel();
        reg.close();
        await unsubscribeAll();
      },
    };
  }

  async close(): Promise<void> {
    // Nothing held open: every request has its own connection (providers/http.ts).
  }
}

function expiredFailure(f: ApiFailure): boolean {
  return f.kind === 'http' && isDeltaExpired(f.status, f.error.codes);
}

function cursorOf(links: Links): SyncCursor {
  return { folders: { ...links } };
}

export function graphSync(opts: GraphSyncOptions): GraphSync {
  return new GraphSync(opts);
}
