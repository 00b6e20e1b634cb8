import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who a process is, in terms another process on the same machine can check: the host name, the
 * pid, and on Linux the three facts that make "that pid is gone" a proof of death rather than a
 * guess: the boot id (/proc/sys/kernel/random/boot_id: a pid means nothing across a reboot), the
 * pid namespace (/proc/self/ns/pid: two containers sharing a host name have separate pid spaces)
 * and the process's start time (field 22 of /proc/<pid>/stat, clock ticks since boot: a pid reused
 * by a later process has a later start).
 */
export interface ProcessIdentity {
  host: string;
  pid: number;
  bootId: string | null;
  pidNs: string | null;
  startTicks: number | null;
}

/** What a process can observe of another pid on its own machine (injected so tests can stage reuse). */
export interface PidProbe {
  /** True when a process with this pid exists (kill 0; EPERM: it exists under another user). */
  exists(pid: number): boolean;
  /** Its start time in clock ticks since boot, when the platform tells (Linux /proc). */
  startTicks(pid: number): number | null;
}

export const systemPidProbe: PidProbe = {
  exists(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  startTicks: procStartTicks,
};

export function thisProcess(): ProcessIdentity {
  return { host: hostname(), pid: process.pid, bootId: readTrimmed('/proc/sys/kernel/random/boot_id'), pidNs: readLink('/proc/self/ns/pid'), startTicks: procStartTicks(process.pid) };
}

/**
 * True only when `holder` is certainly not running: it lives in our pid space (same host, same
 * boot, same pid namespace, each known on both sides where the platform gives it) and either no
 * process has its pid or the process that has it started at another time (the pid was reused).
 * Anything less certain is false: the caller then waits for the holder's heartbeat to go stale.
 */
export function provablyGone(holder: ProcessIdentity, me: ProcessIdentity, probe: PidProbe = systemPidProbe): boolean {
  if (holder.host !== me.host) return false;
  // Known on one side only: the two processes did not see the same platform; no proof.
  if ((holder.bootId === null) !== (me.bootId === null) || holder.bootId !== me.bootId) return false;
  if ((holder.pidNs === null) !== (me.pidNs === null) || holder.pidNs !== me.pidNs) return false;
  if (holder.pid === me.pid) return holder.startTicks !== null && me.startTicks !== null && holder.startTicks !== me.startTicks;
  if (!probe.exists(holder.pid)) return true;
  if (holder.startTicks === null) return false;
  const now = probe.startTicks(holder.pid);
  return now !== null && now !== holder.startTicks;
}

function procStartTicks(pid: number): number | null {
  const stat = readTrimmed(`/proc/${pid}/stat`);
  if (!stat) return null;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const v = Number(fields[19]); // field 22 overall; fields[0] is field 3 (state)
  return Number.isFinite(v) ? v : null;
}

function readTrimmed(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function readLink(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
