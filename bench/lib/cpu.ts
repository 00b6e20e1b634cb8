import { existsSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Store } from '../../src/store/store.ts';

/**
 * CPU time, to say where a benchmark's time goes: this process (process.cpuUsage) and the local
 * PostgreSQL server's backends serving the benchmark's database (Linux /proc). Milliseconds.
 */
export function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU of one process from /proc (utime + stime), in ms; 0 once it has exited. */
function pidCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU of the PostgreSQL backends connected to the store's database only, by pid (pg_stat_activity,
 * a local server): unlike the CPU of every 'postgres' process it does not count other clients of a shared server, so it
 * holds on a busy machine. Take one before and one after a phase, and subtract (cpuBetween); a
 * backend that exits meanwhile takes its count with it. Null where /proc or the view cannot tell.
 */
export async function databaseCpu(store: Store): Promise<Map<number, number> | null> {
  if (store.backend !== 'postgres') return null;
  try {
    const rows = (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(store.db)).rows;
    if (!rows.length || !existsSync(`/proc/${rows[0]!.pid}/stat`)) return null;
    return new Map(rows.map((r) => [r.pid, pidCpuMs(r.pid)]));
  } catch {
    return null;
  }
}

/** Milliseconds of CPU the database's backends used between two databaseCpu readings. */
export function cpuBetween(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (!before || !after) return null;
  let ms = 0;
  for (const [pid, t] of after) ms += t - (before.get(pid) ?? 0);
  return ms;
}
