import type { ImapFlow, ImapFlowOptions } from 'imapflow';
import type { Clock, TimerHandle } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import { defaultImapTimeouts, type ImapAccount } from '../imap/account.ts';
import { connectImap } from '../imap/connect.ts';
import { imapError } from '../imap/errors.ts';
import type { WatchHandle } from './source.ts';

/**
 * Push for one IMAP folder: a connection of its own, the folder EXAMINEd (read-only) and IDLE
 * (RFC 2177) on it; every EXISTS the server pushes calls `changed()` (a trigger to pull, never a
 * message). imapflow runs the IDLE: auto-IDLE with no delay after each command, broken and
 * re-issued every `idleRestartMs` (its maxIdleTime; RFC 2177 asks for less than 29 minutes, and
 * some servers and NAT boxes drop quieter connections sooner).
 *
 * Heartbeat: a silently dead connection (a NAT entry expired, a server gone without a FIN) looks
 * exactly like a quiet mailbox to an idling client. Every `heartbeatMs` (jittered ±25 % so that
 * thousands of watches do not beat together) the watch sends NOOP (which ends IDLE with DONE
 * first); no answer within `heartbeatTimeoutMs` means the connection is dead: it is destroyed and
 * `failed(err)` is called. A close or error from the connection does the same. `failed` is called
 * at most once, and never after close(); reconnecting (with backoff.ts) is the caller's.
 *
 * The pull a push asks for can run on this very connection (`connection()`, imap-sync.ts): it is
 * logged in with the folder examined, so the pull is EXAMINE + UID FETCH with no connect, LOGIN or
 * server process of its own. imapflow ends IDLE with DONE before the first command and resumes it
 * once the connection is free again (auto-IDLE, no delay). A command on it that breaks (`fail`)
 * fails the whole watch, so the caller's reconnect-with-backoff takes over.
 */
export interface ImapWatchOptions {
  heartbeatMs: number;
  heartbeatTimeoutMs: number;
  idleRestartMs: number;
}

/**
 * A NOOP every 4 minutes costs a wake-up of a hibernated Dovecot session, about 8 a second for
 * 2,000 mailboxes; a dead connection is noticed within 4.5 minutes, well inside the worker's
 * reconciliation poll. IDLE restarts every 10 minutes.
 */
export const defaultImapWatchOptions: ImapWatchOptions = { heartbeatMs: 4 * 60_000, heartbeatTimeoutMs: 30_000, idleRestartMs: 10 * 60_000 };

export interface ImapWatchDeps extends Partial<ImapWatchOptions> {
  clock: Clock;
  random: Random;
  logger?: Logger;
  /** imapflow options of the connector (QRESYNC or not). */
  flow?: Partial<ImapFlowOptions>;
}

/** One folder's watch, with its connection lent to the pulls its pushes ask for. */
export interface ImapFolderWatch extends WatchHandle {
  readonly path: string;
  /** The watch's connection while it is healthy; MAILBOX_UNAVAILABLE once it failed or closed. */
  connection(): ImapFlow;
  /** Destroys the connection and reports `error` to `failed` (once): a command on it broke or stalled. */
  fail(error: unknown): void;
}

export async function watchImapFolder(
  account: ImapAccount,
  path: string,
  deps: ImapWatchDeps,
  changed: () => void,
  failed: (error: unknown) => void,
): Promise<ImapFolderWatch> {
  const o: ImapWatchOptions = {
    heartbeatMs: deps.heartbeatMs ?? defaultImapWatchOptions.heartbeatMs,
    heartbeatTimeoutMs: deps.heartbeatTimeoutMs ?? defaultImapWatchOptions.heartbeatTimeoutMs,
    idleRestartMs: deps.idleRestartMs ?? defaultImapWatchOptions.idleRestartMs,
  };
  // imapflow's own inactivity watchdog probes an idling connection too; it is set past our
  // heartbeat (and the server's "* OK Still here" keepalives) so that the heartbeat decides.
  const socketTimeout = Math.max(account.timeouts?.socketMs ?? defaultImapTimeouts.socketMs, 2 * o.heartbeatMs + o.heartbeatTimeoutMs);
  const client: ImapFlow = await connectImap(account, {
    ...(deps.logger ? { logger: deps.logger } : {}),
    flow: { ...deps.flow, disableAutoIdle: false, autoIdleDelay: 0, maxIdleTime: o.idleRestartMs, socketTimeout },
  });

  let closed = false;
  let beat: TimerHandle | null = null;
  let deadline: TimerHandle | null = null;
  const stopTimers = () => {
    beat?.cancel();
    deadline?.cancel();
    beat = deadline = null;
  };
  const fail = (e: unknown) => {
    if (closed) return;
    closed = true;
    stopTimers();
    client.close();
    deps.logger?.info({ folder: path, err: { message: (e as Error)?.message, code: (e as { code?: string })?.code } }, 'imap watch failed');
    failed(e);
  };

  client.on('exists', () => {
    if (!closed) changed();
  });
  client.on('close', () => fail(cadenzaError('MAILBOX_UNAVAILABLE', `IMAP watch on ${path}: the connection closed`, { doing: 'IDLE', folder: path })));
  client.on('error', (e: unknown) => fail(imapError(e, `IDLE on ${path}`)));

  try {
    await client.mailboxOpen(path, { readOnly: true });
  } catch (e) {
    closed = true;
    client.close();
    throw imapError(e, `EXAMINE ${path}`);
  }

  const schedule = () => {
    if (closed) return;
    const delay = Math.round(o.heartbeatMs * (0.75 + 0.5 * deps.random.next()));
    beat = deps.clock.setTimer(delay, heartbeat);
  };
  const heartbeat = () => {
    if (closed) return;
    deadline = deps.clock.setTimer(o.heartbeatTimeoutMs, () =>
      fail(cadenzaError('MAILBOX_UNAVAILABLE', `IMAP watch on ${path}: no answer to NOOP within ${o.heartbeatTimeoutMs} ms, the connection is dead`, { doing: 'NOOP', folder: path })),
    );
    // imapflow's noop() swallows a failed NOOP; a connection that broke meanwhile is not usable.
    client.noop().then(
      () => {
        deadline?.cancel();
        deadline = null;
        if (closed) return;
        if (!client.usable) fail(cadenzaError('MAILBOX_UNAVAILABLE', `IMAP watch on ${path}: NOOP failed`, { doing: 'NOOP', folder: path }));
        else schedule();
      },
      (e: unknown) => fail(imapError(e, `NOOP on ${path}`)),
    );
  };
  schedule();

  return {
    path,
    connection() {
      if (closed || !client.usable) throw cadenzaError('MAILBOX_UNAVAILABLE', `IMAP watch on ${path}: the connection is not usable`, { doing: 'pull on the watch', folder: path });
      return client;
    },
    fail,
    async close() {
      if (closed) return;
      closed = true;
      stopTimers();
      if (client.usable) await client.logout().catch(() => client.close());
      else client.close();
    },
  };
}
