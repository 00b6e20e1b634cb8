import type { ImapFlow, ImapFlowOptions } from 'imapflow';
import { systemClock, type Clock } from '../../common/clock.ts';
import { cadenzaError, isCadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import { systemRandom, type Random } from '../../common/random.ts';
import { defaultImapTimeouts, type ImapAccount } from '../imap/account.ts';
import { connectImap } from '../imap/connect.ts';
import { imapError } from '../imap/errors.ts';
import { imapMessageKey } from '../imap/message-key.ts';
import { findSpecialFolders } from '../imap/special-folders.ts';
import {
  parseImapCursor,
  planBatches,
  planFolder,
  withinWindow,
  type FolderCursor,
  type ImapCursor,
  type MessageMeta,
  type OpenedFolder,
  type SyncRole,
} from './imap-cursor.ts';
import { watchImapFolder, type ImapFolderWatch, type ImapWatchOptions } from './imap-watch.ts';
import type { FetchedMessage, FetchProblem, MailboxSync, PullOptions, SyncBatch, SyncCursor, WatchHandle } from './source.ts';

/**
 * The IMAP connector of the sync worker (MailboxSync, source.ts), on imapflow.
 *
 * Folders: INBOX, and the Junk folder (SPECIAL-USE \Junk, then common names; the account's own
 * choice first), because replies and bounces land there too. Each pull opens its own connection,
 * EXAMINEs each folder (read-only: nothing is marked \Seen), and yields what arrived after the
 * cursor (imap-cursor.ts documents its shape), INBOX first, in ascending UID order:
 *
 *   - CONDSTORE/QRESYNC when the server has them (RFC 7162): QRESYNC is enabled and the folder
 *     opened with its known UIDVALIDITY and HIGHESTMODSEQ; an unchanged HIGHESTMODSEQ ends the
 *     folder without another command, else UID FETCH n:* … (CHANGEDSINCE m). Without them (or
 *     with `useCondstore: false`), UIDs only: UIDNEXT, then UID FETCH n:*.
 *   - No cursor for a folder, or a changed UIDVALIDITY: SEARCH SINCE over the resync window, never
 *     the years of history behind it, in batches of mode 'resync'.
 *   - A metadata pass (UID RFC822.SIZE INTERNALDATE) first: a message over `maxMessageBytes`
 *     becomes a problem without being fetched; the rest are fetched whole (BODY.PEEK[], capped at
 *     the limit in case RFC822.SIZE lied) in batches of at most batchSize messages and
 *     maxBatchBytes bytes.
 *   - Each batch's cursor covers exactly what was yielded so far, so a crash after batch k
 *     replays from batch k+1.
 *
 * Push (watch): IDLE on INBOX on a connection of its own (imap-watch.ts). The pull a push asks for
 * runs on that connection (WatchHandle.pull, `pullWatched`): no connect, LOGIN or LIST, and Junk
 * is left to the full pull. Junk is not watched by default: a second IDLE per mailbox doubles the
 * connections for a folder that rarely holds replies, so the worker's reconciliation pull (and
 * the pull a sender's last look asks for) covers it; `watchJunk: true` opens a second IDLE for it
 * instead, and its pushes pull it on that connection. NOTIFY (RFC 5465) would do both on one
 * connection, but imapflow does not speak it and few servers besides Dovecot offer it.
 */
export interface ImapSyncOptions {
  account: ImapAccount;
  clock?: Clock;
  random?: Random;
  logger?: Logger;
  /** Use CONDSTORE/QRESYNC when the server offers them (default true); false: UIDs only. */
  useCondstore?: boolean;
  /** Larger messages become problems, not fetched (default 25 MiB, the common provider limit). */
  maxMessageBytes?: number;
  /** What one batch may hold in memory (default 64 MiB); a single message may exceed it. */
  maxBatchBytes?: number;
  /** Watch the Junk folder with its own IDLE connection too (default false: the poll covers it). */
  watchJunk?: boolean;
  watch?: Partial<ImapWatchOptions>;
}

export const defaultResyncWindowMs = 14 * 24 * 3_600_000;
export const defaultBatchSize = 100;
const defaultMaxMessageBytes = 25 * 1024 * 1024;
const defaultMaxBatchBytes = 64 * 1024 * 1024;
const DAY = 24 * 3_600_000;

export function createImapSync(options: ImapSyncOptions): MailboxSync {
  return new ImapSync(options);
}

class ImapSync implements MailboxSync {
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly useCondstore: boolean;
  private readonly maxMessageBytes: number;
  private readonly maxBatchBytes: number;
  private readonly open = new Set<ImapFlow>();
  private readonly watches = new Set<WatchHandle>();
  /** The Junk folder's path as the server's LIST gave it (null: none); undefined until looked up. */
  private junkFound: string | null | undefined;

  constructor(private readonly options: ImapSyncOptions) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? systemRandom();
    this.useCondstore = options.useCondstore !== false;
    this.maxMessageBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
    this.maxBatchBytes = options.maxBatchBytes ?? defaultMaxBatchBytes;
  }

  /** imapflow options for this connector's connections: QRESYNC on, or no ENABLE at all. */
  private flow(extra: Partial<ImapFlowOptions> = {}): Partial<ImapFlowOptions> {
    // disableAutoEnable: imapflow would otherwise ENABLE CONDSTORE on every connection, and a
    // CONDSTORE session gets MODSEQ in every FETCH; the UID-only path must be UID-only.
    return this.useCondstore ? { qresync: true, ...extra } : { disableAutoEnable: true, ...extra };
  }

  async *pull(cursor: SyncCursor | null, options: PullOptions = {}): AsyncIterable<SyncBatch> {
    const signal = options.signal;
    const batchSize = Math.max(1, options.batchSize ?? defaultBatchSize);
    const windowMs = options.resyncWindowMs ?? defaultResyncWindowMs;
    throwIfAborted(signal);
    const state = parseImapCursor(cursor);
    const client = await connectImap(this.options.account, { ...(this.options.logger ? { logger: this.options.logger } : {}), flow: this.flow() });
    this.open.add(client);
    const onAbort = () => client.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    let healthy = false;
    try {
      const folders = await this.folders(client);
      for (const { role, path } of folders) {
        throwIfAborted(signal);
        yield* this.pullFolder(client, state, role, path, { batchSize, windowMs, ...(signal ? { signal } : {}) });
      }
      healthy = true;
    } catch (e) {
      this.junkFound = undefined;
      if (signal?.aborted) throw abortError(signal);
      throw isCadenzaError(e) ? e : imapError(e, 'sync');
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.open.delete(client);
      if (healthy && client.usable) await client.logout().catch(() => client.close());
      else client.close();
    }
  }

  /** INBOX, then the Junk folder when the account has one. */
  private async folders(client: ImapFlow): Promise<Array<{ role: SyncRole; path: string }>> {
    const out: Array<{ role: SyncRole; path: string }> = [{ role: 'inbox', path: 'INBOX' }];
    // The LIST that finds Junk is one round trip of every pull (each IDLE push is a pull): the
    // answer is kept until a pull fails (a renamed or deleted folder fails its EXAMINE).
    const junk = this.options.account.folders?.junk ?? (this.junkFound ??= (await findSpecialFolders(client)).junk);
    if (junk && junk.toUpperCase() !== 'INBOX') out.push({ role: 'junk', path: junk });
    return out;
  }

  private async *pullFolder(
    client: ImapFlow,
    state: ImapCursor,
    role: SyncRole,
    path: string,
    o: { batchSize: number; windowMs: number; signal?: AbortSignal },
  ): AsyncIterable<SyncBatch> {
    const stored = state.folders[role];
    const opened = await openFolder(client, path, stored);
    const plan = planFolder(stored, opened);
    // The folder's cursor once everything up to now is yielded; earlier batches carry less.
    // An incremental batch before the last keeps the stored HIGHESTMODSEQ: a replay from it then
    // asks for everything changed since the last complete pull, which includes the rest.
    const base: FolderCursor =
      plan.kind === 'window' ? { path, uidValidity: opened.uidValidity, lastUid: 0 } : { ...stored!, path, uidValidity: opened.uidValidity };
    // Everything below UIDNEXT as it was when the folder was opened has been seen (fetched, or
    // outside the window); the HIGHESTMODSEQ of that moment, so that later arrivals are newer.
    const finalFolder = (lastUid: number): FolderCursor => {
      const { highestModseq: _old, ...rest } = base;
      return {
        ...rest,
        lastUid: Math.max(lastUid, opened.uidNext !== null ? opened.uidNext - 1 : 0),
        ...(opened.highestModseq !== null ? { highestModseq: opened.highestModseq } : {}),
      };
    };
    const cursorWith = (f: FolderCursor): ImapCursor => {
      state.folders[role] = f;
      return { kind: 'imap', v: 1, folders: { ...state.folders } };
    };

    if (plan.kind === 'unchanged') {
      const f = finalFolder(base.lastUid);
      if (!sameFolderCursor(stored, f)) yield { messages: [], problems: [], cursor: cursorWith(f), mode: 'incremental' };
      return;
    }

    const mode: SyncBatch['mode'] = plan.kind === 'window' ? 'resync' : 'incremental';
    let metas: MessageMeta[];
    if (plan.kind === 'window') {
      const since = this.clock.now() - o.windowMs;
      this.options.logger?.info({ folder: path, reason: plan.reason, since: new Date(since).toISOString() }, 'imap sync: scanning the resync window');
      metas = withinWindow(await windowMetas(client, path, since), since);
    } else {
      metas = await newMetas(client, path, plan.afterUid, plan.changedSince);
    }

    let lastUid = base.lastUid;
    const batches = planBatches(metas, { batchSize: o.batchSize, maxBatchBytes: this.maxBatchBytes, maxMessageBytes: this.maxMessageBytes });
    for (let i = 0; i < batches.length; i++) {
      throwIfAborted(o.signal);
      const batch = batches[i]!;
      const { messages, problems } = await this.fetchBatch(client, role, path, opened.uidValidity, batch);
      lastUid = Math.max(lastUid, ...batch.map((m) => m.uid));
      const last = i === batches.length - 1;
      const f = last ? finalFolder(lastUid) : { ...base, lastUid };
      yield { messages, problems, cursor: cursorWith(f), mode };
    }
    if (batches.length === 0) {
      const f = finalFolder(lastUid);
      if (!sameFolderCursor(stored, f)) yield { messages: [], problems: [], cursor: cursorWith(f), mode };
    }
  }

  private async fetchBatch(client: ImapFlow, role: SyncRole, path: string, uidValidity: string, batch: MessageMeta[]): Promise<{ messages: FetchedMessage[]; problems: FetchProblem[] }> {
    const folder = role;
    const key = (uid: number) => imapMessageKey(path, uidValidity, uid);
    const problems: FetchProblem[] = [];
    const wanted: MessageMeta[] = [];
    for (const m of batch) {
      if (m.size !== null && m.size > this.maxMessageBytes) {
        problems.push({ key: key(m.uid), folder, reason: `message of ${m.size} bytes is over the ${this.maxMessageBytes}-byte limit (RFC822.SIZE); not fetched` });
      } else wanted.push(m);
    }
    const got = new Map<number, { source: Buffer; internalDate: number | null }>();
    if (wanted.length > 0) {
      try {
        // maxLength: a server whose RFC822.SIZE understates the message cannot make us hold more
        // than the limit; BODY.PEEK[] (imapflow's source) never sets \Seen.
        for await (const m of client.fetch(wanted.map((w) => w.uid), { uid: true, source: { maxLength: this.maxMessageBytes + 1 }, internalDate: true }, { uid: true })) {
          got.set(m.uid, { source: m.source ?? Buffer.alloc(0), internalDate: dateMs(m.internalDate) });
        }
      } catch (e) {
        throw imapError(e, `UID FETCH in ${path}`);
      }
    }
    const messages: FetchedMessage[] = [];
    for (const m of wanted) {
      const g = got.get(m.uid);
      // No answer for a UID: expunged between the metadata pass and now. Nothing to ingest.
      if (!g) continue;
      if (g.source.length > this.maxMessageBytes) {
        problems.push({ key: key(m.uid), folder, reason: `message is over the ${this.maxMessageBytes}-byte limit (the server's RFC822.SIZE said ${m.size ?? 'nothing'}); not fetched` });
        continue;
      }
      messages.push({ key: key(m.uid), folder, raw: new Uint8Array(g.source.buffer, g.source.byteOffset, g.source.length), threadId: null, receivedAt: g.internalDate ?? m.internalDate });
    }
    return { messages, problems };
  }

  async watch(changed: () => void, failed: (error: unknown) => void): Promise<WatchHandle> {
    const folders: Array<{ role: SyncRole; path: string }> = [{ role: 'inbox', path: 'INBOX' }];
    if (this.options.watchJunk) {
      const junk = this.options.account.folders?.junk ?? (await this.junkPath());
      if (junk) folders.push({ role: 'junk', path: junk });
    }
    const handles: Array<{ role: SyncRole; watch: ImapFolderWatch }> = [];
    let done = false;
    const handle: WatchHandle = {
      close: async () => {
        done = true;
        this.watches.delete(handle);
        await Promise.all(handles.map((h) => h.watch.close()));
      },
      pull: (cursor, options) => this.pullWatched(handles, cursor, options),
    };
    // One failure ends the whole watch (the worker reconnects it as one).
    const onFailed = (e: unknown) => {
      if (done) return;
      void handle.close();
      failed(e);
    };
    try {
      for (const { role, path } of folders) {
        const watch = await watchImapFolder(this.options.account, path, {
          clock: this.clock,
          random: this.random,
          ...(this.options.logger ? { logger: this.options.logger } : {}),
          flow: this.flow(),
          ...this.options.watch,
        }, changed, onFailed);
        handles.push({ role, watch });
      }
    } catch (e) {
      done = true;
      await Promise.all(handles.map((h) => h.watch.close()));
      throw e;
    }
    this.watches.add(handle);
    return handle;
  }

  /**
   * The pull a push asked for, on the watches' own connections (WatchHandle.pull): each watched
   * folder as `pull` does it (EXAMINE with QRESYNC, UID FETCH n:* CHANGEDSINCE, the bodies), the
   * cursor's other folders untouched. Each step has the account's socket timeout as its deadline
   * (the watch's own socket timeout is minutes long, set past the heartbeat): a server that stalls
   * fails the watch, which closes the connection, so the step throws and the worker falls back to a
   * pull on a new connection. The deadline does not run while a batch waits for its commit.
   */
  private async *pullWatched(watches: ReadonlyArray<{ role: SyncRole; watch: ImapFolderWatch }>, cursor: SyncCursor | null, options: PullOptions = {}): AsyncIterable<SyncBatch> {
    const signal = options.signal;
    const batchSize = Math.max(1, options.batchSize ?? defaultBatchSize);
    const windowMs = options.resyncWindowMs ?? defaultResyncWindowMs;
    throwIfAborted(signal);
    const state = parseImapCursor(cursor);
    const stepMs = this.options.account.timeouts?.socketMs ?? defaultImapTimeouts.socketMs;
    // Stop (the worker's abort) must not wait for a command in flight: the watch is closing anyway.
    const onAbort = () => {
      for (const { watch } of watches) watch.fail(abortError(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (const { role, watch } of watches) {
        throwIfAborted(signal);
        const batches = this.pullFolder(watch.connection(), state, role, watch.path, { batchSize, windowMs, ...(signal ? { signal } : {}) })[Symbol.asyncIterator]();
        for (;;) {
          const deadline = this.clock.setTimer(stepMs, () =>
            watch.fail(cadenzaError('MAILBOX_UNAVAILABLE', `IMAP pull on the watch of ${watch.path}: no answer within ${stepMs} ms`, { doing: 'pull on the watch', folder: watch.path })),
          );
          let next: IteratorResult<SyncBatch>;
          try {
            next = await batches.next();
          } finally {
            deadline.cancel();
          }
          if (next.done) break;
          yield next.value;
        }
      }
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      const err = isCadenzaError(e) ? e : imapError(e, 'sync on the watch connection');
      // A command that failed on a connection still open (a NO, a parse error) leaves the session
      // in a state we did not choose: the watch ends and is rebuilt, as after a broken connection.
      for (const { watch } of watches) watch.fail(err);
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private async junkPath(): Promise<string | null> {
    const client = await connectImap(this.options.account, { flow: this.flow() });
    try {
      return (await findSpecialFolders(client)).junk;
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  async close(): Promise<void> {
    for (const c of this.open) c.close();
    this.open.clear();
    await Promise.all([...this.watches].map((w) => w.close()));
  }
}

/**
 * EXAMINE (read-only) the folder. With QRESYNC enabled and a stored state, the known UIDVALIDITY
 * and HIGHESTMODSEQ go with it (RFC 7162 §3.2.5): the server checks the UIDVALIDITY in the same
 * round trip and skips the QRESYNC part when it changed. Flag changes and VANISHED it reports are
 * not needed here (what matters is new mail); the cursor's HIGHESTMODSEQ is taken from this
 * answer, before any message is fetched.
 */
async function openFolder(client: ImapFlow, path: string, stored: FolderCursor | undefined): Promise<OpenedFolder> {
  const qresync = stored?.highestModseq !== undefined && stored.path === path && client.enabled.has('QRESYNC');
  let mailbox;
  try {
    mailbox = await client.mailboxOpen(path, { readOnly: true, ...(qresync ? { uidValidity: stored!.uidValidity, changedSince: stored!.highestModseq! } : {}) });
  } catch (e) {
    throw imapError(e, `EXAMINE ${path}`);
  }
  const condstore = client.enabled.has('CONDSTORE') && !mailbox.noModseq && mailbox.highestModseq !== undefined;
  return {
    path,
    uidValidity: String(mailbox.uidValidity),
    uidNext: typeof mailbox.uidNext === 'number' && mailbox.uidNext > 0 ? mailbox.uidNext : null,
    highestModseq: condstore ? String(mailbox.highestModseq) : null,
  };
}

/** Messages above afterUid: UID FETCH n:* (+ CHANGEDSINCE), filtered to uid > afterUid (`*` is the largest UID even when it is below n). */
async function newMetas(client: ImapFlow, path: string, afterUid: number, changedSince: string | null): Promise<MessageMeta[]> {
  const out: MessageMeta[] = [];
  try {
    for await (const m of client.fetch(`${afterUid + 1}:*`, { uid: true, size: true, internalDate: true }, { uid: true, ...(changedSince ? { changedSince: BigInt(changedSince) } : {}) })) {
      if (m.uid > afterUid) out.push(meta(m));
    }
  } catch (e) {
    throw imapError(e, `UID FETCH in ${path}`);
  }
  return out.sort((a, b) => a.uid - b.uid);
}

/** Messages received since `since`: UID SEARCH SINCE <the day before> (day granularity, server's zone), then their metadata. */
async function windowMetas(client: ImapFlow, path: string, since: number): Promise<MessageMeta[]> {
  let uids: number[] | false | undefined;
  try {
    uids = await client.search({ since: new Date(since - DAY) }, { uid: true });
  } catch (e) {
    throw imapError(e, `UID SEARCH SINCE in ${path}`);
  }
  if (!Array.isArray(uids)) throw imapError(new Error('the server refused the search'), `UID SEARCH SINCE in ${path}`);
  if (uids.length === 0) return [];
  const out: MessageMeta[] = [];
  try {
    for await (const m of client.fetch(uids, { uid: true, size: true, internalDate: true }, { uid: true })) out.push(meta(m));
  } catch (e) {
    throw imapError(e, `UID FETCH in ${path}`);
  }
  return out;
}

function meta(m: { uid: number; size?: number | undefined; internalDate?: Date | string | undefined }): MessageMeta {
  return { uid: m.uid, size: typeof m.size === 'number' ? m.size : null, internalDate: dateMs(m.internalDate) };
}

function dateMs(d: Date | string | undefined): number | null {
  if (d === undefined) return null;
  const t = new Date(d).getTime();
  return Number.isNaN(t) ? null : t;
}

function sameFolderCursor(a: FolderCursor | undefined, b: FolderCursor): boolean {
  return !!a && a.path === b.path && a.uidValidity === b.uidValidity && a.lastUid === b.lastUid && a.highestModseq === b.highestModseq;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? cadenzaError('MAILBOX_UNAVAILABLE', 'IMAP sync: aborted');
}
