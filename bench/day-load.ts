/**
 * A working day on one process (issue 15, "Scale-out and isolation"): `--mailboxes` Gmail
 * mailboxes on the emulator, `--sends` emails of three-step sequences over a day compressed on an
 * accelerated clock, replies through the day and a storm at 13:00 (test/ops/day-load.ts: the
 * scheduler, sender pool and sync pool as `cadenza start` runs them, push over loopback, a
 * temporary PostgreSQL database).
 *
 *   npm run bench -- day-load [--mailboxes=10000] [--sends=300000] [--rate=60] [--reply-share=0.05] [--storm=N]
 *                             [--processes=N | --workers=sync,sender,sender+sync] [--pool=10] [--window=7-11]
 *                             [--pg-statements=15]
 *
 * --window=FROM-UNTIL runs only those UTC hours of the simulated day (default 5-19): the morning's
 * peak at a clock this machine can hold, when the whole day at that clock would take hours.
 *
 * --pg-statements=N prints the N statements that took most of PostgreSQL's time from the end of
 * seeding to the end of the day, with their share (bench/lib/pg-statements.ts; the server needs
 * pg_stat_statements preloaded).
 *
 * --processes=N runs N child processes each with the sender and sync roles; --workers lists the
 * children and their roles ('+' joins two). This process then keeps the emulator, the push route
 * and the scheduler; the children share the mailboxes through leases with fencing and the push
 * bus (test/ops/day-load-worker.ts). --pool: PostgreSQL connections per process (default 10).
 *
 * The full day (10,000 mailboxes, 300,000 sends) needs the sends' real rate, sends / (the day's
 * sending hours / rate), to fit one process: at rate 60 that is about 100 sends a real second.
 * Prints the figures and, from this process's CPU and the database's per send, the processes a
 * day of 300,000 sends (and 3 million) needs at 70% of a core each.
 */
import { flag, intFlag } from './lib/args.ts';
import { describeLoad, loadFigures, machineLoad } from './lib/rounds.ts';
import { benchStore } from './support/backends.ts';
import { createLogger } from '../src/common/logger.ts';
import { runDayLoad } from '../test/ops/day-load.ts';
import { statementProfile, type StatementProfile } from './lib/pg-statements.ts';

export default async function dayLoad(args: string[]): Promise<Record<string, unknown>> {
  const mailboxes = intFlag(args, 'mailboxes', 10_000);
  const sends = intFlag(args, 'sends', 300_000);
  const rate = intFlag(args, 'rate', 60);
  const replyShare = Number(flag(args, 'reply-share') ?? 0.05);
  const stormFlag = flag(args, 'storm');
  const pool = intFlag(args, 'pool', 10);
  const windowFlag = flag(args, 'window');
  const windowMatch = windowFlag === undefined ? null : /^(\d{1,2})-(\d{1,2})$/.exec(windowFlag);
  if (windowFlag !== undefined && !windowMatch) throw new Error(`--window: UTC hours FROM-UNTIL of the simulated day, e.g. 7-11; got ${windowFlag}`);
  const window = windowMatch ? { fromHour: Number(windowMatch[1]), untilHour: Number(windowMatch[2]) } : undefined;
  const processesFlag = flag(args, 'processes');
  const workersFlag = flag(args, 'workers');
  const workers: Array<Array<'sender' | 'sync'>> | undefined = workersFlag
    ? workersFlag.split(',').map((w) =>
        w.split('+').map((r) => {
          if (r !== 'sender' && r !== 'sync') throw new Error(`--workers: a process's roles are sender, sync or sender+sync, got ${r}`);
          return r;
        }),
      )
    : processesFlag
      ? Array.from({ length: Number(processesFlag) }, () => ['sender', 'sync'] as Array<'sender' | 'sync'>)
      : undefined;
  const before = machineLoad();
  const layout = workers ? `${workers.length} role processes (${workers.map((w) => w.join('+')).join(', ')}) beside this one (emulator, push route, scheduler)` : 'one process';
  console.log(`day load: ${mailboxes} mailboxes, ${sends} sends${window ? ` (the day's plan; run ${window.fromHour}:00 to ${window.untilHour}:00 UTC)` : ''}, clock x${rate}, ${layout}, ${pool} PostgreSQL connections a process; ${describeLoad(before)}`);
  const s = await benchStore('postgres', { poolSize: pool });
  const statementsFlag = flag(args, 'pg-statements');
  let profile: StatementProfile | undefined;
  try {
    if (statementsFlag !== undefined) {
      profile = await statementProfile(s.url!);
      if (!profile.available) console.log('pg statements: pg_stat_statements is not preloaded in this server; no statement profile (docs/operations.md, "Profiling PostgreSQL")');
    }
    let last = 0;
    const r = await runDayLoad({
      store: s.store,
      mailboxes,
      sends,
      rate,
      replyShare,
      ...(window ? { window } : {}),
      // The roles' warnings and errors (a sync that cannot keep up says so here).
      log: createLogger({ level: flag(args, 'log-level') ?? 'warn', name: 'day-load' }),
      ...(stormFlag ? { storm: Number(stormFlag) } : {}),
      ...(profile ? { onSeeded: () => profile!.reset() } : {}),
      ...(workers ? { workers, databaseUrl: s.url!, workerPoolSize: pool, workerLogLevel: flag(args, 'log-level') ?? 'warn' } : {}),
      onProgress: (line) => {
        if (performance.now() - last < 10_000 && !line.startsWith('seeded')) return;
        last = performance.now();
        console.log(`  ${line}`);
      },
    });
    const after = machineLoad();
    // Every process of the run (the children too when the roles are split).
    const allCpuSeconds = r.processes.reduce((a, p) => a + p.cpuSeconds, 0);
    const cpuPerSendMs = (allCpuSeconds * 1000) / Math.max(1, r.sent);
    const dbPerSendMs = r.databaseCpuSeconds === null ? null : (r.databaseCpuSeconds * 1000) / Math.max(1, r.sent);
    // 300,000 sends over a working day of about 8.7 hours, with a morning peak twice the average.
    const peakPerS = (n: number) => (2 * n) / (8.7 * 3600);
    const processes = (n: number) => Math.max(1, Math.ceil((peakPerS(n) * cpuPerSendMs) / 1000 / 0.7));
    console.log(`sent ${r.sent} of ${r.sendsPlanned} planned (${r.leads} leads; replied leads get only their first email), ${r.unsettled} unsettled, ${r.duplicates} Message-IDs twice, ${r.followUpsAfterReply} follow-ups recorded after a reply was stored, ${r.sentAfterReplyMs.length} emails reached Sent after the reply was in the mailbox (${r.sentAfterReplyMs.filter((x) => x >= 1000).length} of them 1 s or more after; the latest ${Math.max(0, ...r.sentAfterReplyMs)} ms after)`);
    for (const x of r.suspects) console.log(`  ${x.copies > 1 ? `twice (${x.gapMs} ms apart)` : 'unsettled'}: ${x.messageId} ${x.state}, ${x.attempts} attempts, proof ${x.proof ?? '-'}, last error: ${x.lastError ?? '-'}`);
    console.log(`replies ${r.replies}, stopped ${r.repliesStopped}: reply-to-stop p50 ${r.replyToStop.p50} ms, p99 ${r.replyToStop.p99} ms, max ${r.replyToStop.max} ms; storm of ${r.stormReplies}: p50 ${r.stormReplyToStop.p50} ms, p99 ${r.stormReplyToStop.p99} ms, max ${r.stormReplyToStop.max} ms`);
    console.log(`slowest replies: ${r.slowestReplies.map((x) => `${x.ms} ms (delivered ${x.at}, ${x.atRealS} s in)`).join('; ')}`);
    console.log(`planned slot -> sent (simulated minutes): p50 ${r.slotToSentMin.p50}, p99 ${r.slotToSentMin.p99}, max ${r.slotToSentMin.max}`);
    console.log(`every mailbox's first sync: ${r.syncedMailboxes} of ${mailboxes} after ${r.syncAllSeconds.toFixed(0)} s`);
    console.log(`real ${r.realSeconds.toFixed(0)} s (seeding ${r.seedSeconds.toFixed(0)} s before); processes ${allCpuSeconds.toFixed(0)} s CPU (${cpuPerSendMs.toFixed(1)} ms a send, emulator and push route included), database ${r.databaseCpuSeconds?.toFixed(0) ?? '?'} s CPU (${dbPerSendMs?.toFixed(1) ?? '?'} ms a send); peak RSS ${r.peakRssMiB} MiB; ${r.peakSendsPerRealSecond} sends a real second at the 95th percentile`);
    for (const p of r.processes) console.log(`  process ${p.name} (${p.roles.join(', ')}): ${p.cpuSeconds.toFixed(0)} s CPU (${((p.cpuSeconds * 1000) / Math.max(1, r.sent)).toFixed(1)} ms a send, ${((100 * p.cpuSeconds) / r.realSeconds).toFixed(0)}% of a core), peak RSS ${p.peakRssMiB} MiB`);
    console.log(`processes at 70% of a core: ${processes(300_000)} for 300,000 sends a day, ${processes(3_000_000)} for 3,000,000 (CPU per send as measured, the morning peak twice the average)`);
    const statements = profile?.available ? await profile.top(Number(statementsFlag) || 15) : undefined;
    if (statements) {
      console.log(`PostgreSQL executor time after seeding: ${(statements.totalMs / 1000).toFixed(0)} s over ${statements.calls.toLocaleString('en')} statements (${(statements.totalMs / Math.max(1, r.sent)).toFixed(2)} ms a send); the top ${statements.rows.length}:`);
      for (const x of statements.rows) {
        console.log(`  ${(100 * x.share).toFixed(1).padStart(5)}%  ${(x.totalMs / Math.max(1, r.sent)).toFixed(2).padStart(6)} ms/send  ${x.calls.toLocaleString('en').padStart(10)} calls  mean ${x.meanMs.toFixed(2)} ms  ${x.query}`);
      }
    }
    console.log(describeLoad(after));
    return {
      mailboxes,
      sends_planned: r.sendsPlanned,
      sent: r.sent,
      unsettled: r.unsettled,
      duplicates: r.duplicates,
      follow_ups_after_reply: r.followUpsAfterReply,
      sent_after_reply_in_mailbox: r.sentAfterReplyMs.length,
      sent_1s_after_reply_in_mailbox: r.sentAfterReplyMs.filter((x) => x >= 1000).length,
      replies: r.replies,
      replies_stopped: r.repliesStopped,
      reply_to_stop_p50_ms: r.replyToStop.p50,
      reply_to_stop_p99_ms: r.replyToStop.p99,
      reply_to_stop_max_ms: r.replyToStop.max,
      storm_replies: r.stormReplies,
      storm_p50_ms: r.stormReplyToStop.p50,
      storm_p99_ms: r.stormReplyToStop.p99,
      slot_to_sent_p50_min: r.slotToSentMin.p50,
      slot_to_sent_p99_min: r.slotToSentMin.p99,
      real_s: Math.round(r.realSeconds),
      sync_all_s: Math.round(r.syncAllSeconds),
      synced_mailboxes: r.syncedMailboxes,
      cpu_ms_per_send: Math.round(cpuPerSendMs * 10) / 10,
      db_cpu_ms_per_send: dbPerSendMs === null ? null : Math.round(dbPerSendMs * 10) / 10,
      peak_rss_mib: r.peakRssMiB,
      role_processes: workers?.length ?? 0,
      processes: r.processes.map((p) => ({ name: p.name, cpu_s: Math.round(p.cpuSeconds), rss_mib: p.peakRssMiB })),
      pool,
      processes_300k: processes(300_000),
      processes_3m: processes(3_000_000),
      rate,
      ...(statements ? { pg_exec_ms_per_send: Math.round((statements.totalMs / Math.max(1, r.sent)) * 100) / 100, pg_top: statements.rows.slice(0, 5).map((x) => ({ share: Math.round(x.share * 1000) / 1000, calls: x.calls, query: x.query.slice(0, 80) })) } : {}),
      ...loadFigures(before, after),
    };
  } finally {
    await profile?.close();
    await s.drop();
  }
}
