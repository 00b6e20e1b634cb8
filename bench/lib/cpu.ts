import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time, to say where a benchmark's time goes: this process (process.cpuUsage) and the local
 * PostgreSQL server's processes (Linux /proc: every process named 'postgres', so on a shared
 * server it counts the other clients too; measure on a quiet machine). Milliseconds.
 */
export function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Total CPU of the processes named 'postgres', or null where /proc cannot tell. */
export function postgresCpuMs(): number | null {
  let ticks = 0;
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      } catch {
        continue; // gone meanwhile
      }
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const f = stat.slice(close + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
    }
  } catch {
    return null;
  }
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}
