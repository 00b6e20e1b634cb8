import { execFile } from 'node:child_process';
import type { Clock, TimerHandle } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';

/**
 * systemd's notification protocol (sd_notify(3)) for `Type=notify` units with `WatchdogSec=`
 * (deploy/systemd/cadenza@.service): READY=1 once the process serves, WATCHDOG=1 every half
 * watchdog period while the event loop turns (a loop stuck for the whole period gets the unit
 * killed and restarted), STOPPING=1 when a drain begins.
 *
 * Node cannot send a unix datagram (node:dgram speaks UDP only, node:net unix stream sockets), so
 * each message goes through systemd's own `systemd-notify`, a child process: the unit needs
 * `NotifyAccess=all`, since the sender is not the main pid. systemd-notify waits for systemd to
 * have read the message before it exits (its BARRIER=1), so systemd can still tell which unit the
 * short-lived sender belonged to. A failed notification is logged, never fatal: without systemd's
 * answer the watchdog restarts the process, which is what it is for.
 */
export interface SystemdNotifier {
  ready(): void;
  stopping(): void;
  /** Stops the watchdog's timer (the process ends anyway; for tests). */
  close(): void;
}

/** Undefined when the process was not started by systemd with a notification socket. */
export function systemdNotifier(env: NodeJS.ProcessEnv, clock: Clock, log: Logger, command = 'systemd-notify'): SystemdNotifier | undefined {
  if (!env.NOTIFY_SOCKET) return undefined;
  const send = (args: string[]) =>
    execFile(command, args, { env: { ...env, NOTIFY_SOCKET: env.NOTIFY_SOCKET }, timeout: 10_000 }, (e) => {
      if (e) log.warn({ err: e, message: args.join(' ') }, 'systemd notification failed');
    });
  // WATCHDOG_PID names the process the watchdog watches; another value is meant for another process.
  const usec = Number(env.WATCHDOG_USEC);
  const watched = !env.WATCHDOG_PID || Number(env.WATCHDOG_PID) === process.pid;
  const everyMs = watched && Number.isFinite(usec) && usec > 0 ? Math.max(100, Math.floor(usec / 2_000)) : 0;
  let timer: TimerHandle | undefined;
  let closed = false;
  const feed = () => {
    if (closed) return;
    send(['WATCHDOG=1']);
    timer = clock.setTimer(everyMs, feed);
  };
  return {
    ready() {
      send(['--ready']);
      if (everyMs && !timer) timer = clock.setTimer(everyMs, feed);
    },
    stopping() {
      send(['STOPPING=1']);
    },
    close() {
      closed = true;
      timer?.cancel();
    },
  };
}
