/**
 * Watched mailboxes: the sync role (ingest/worker/sync-pool.ts, the production pool: leases,
 * MailboxLoop per mailbox, the connect gate, the smtp_imap connector from the registry) watching N
 * mailboxes of the bed's Dovecot over IDLE in this one process, on a temporary PostgreSQL database,
 * while mail is injected by SMTP into random ones.
 *
 *   npm run bench -- imap-idle [--mailboxes=2000] [--rounds=3] [--messages=200] [--rate=20] [--gate=32] [--seed=1] [--heap-census]
 *
 * The mailboxes are the bed's idle00001..@idle.test (test/mail/mailbed.sh, MAILBED_IDLE_USERS):
 * no other test or benchmark reads them. Figures:
 *   - time until all N are watched: from the pool's start until every mailbox has its IDLE open
 *     and its first pull committed (its cursor stored; the loop opens the watch before that pull);
 *   - memory per watched mailbox, Cadenza side: JS heap + external (and RSS apart), after full
 *     collections, minus the same after the pool was built (its worker threads up) and before it
 *     started, over N; and Dovecot's side (its imap processes' PSS);
 *   - per message, from just before the SMTP injection (Postfix, then LMTP into Dovecot) to the
 *     IDLE push (changed()), to the pull that yields it, and to the commit of its batch (the
 *     pipeline's transaction: the message is in the inbox, a reply has stopped its enrollment);
 *     HDR histograms per round, p50 / p99 / max, with the median and spread over the rounds.
 *     Dovecot waits 500 ms after a change before it tells an idling session (NOTIFY_DELAY_MSECS,
 *     lib-storage/mailbox-watch.c), and Postfix's queue takes 100-300 ms: the floor of these
 *     figures. A message not committed within 30 s is counted as lost.
 * `--heap-census` adds what each watched mailbox holds in the JS heap, by kind (bench/lib/heap-census.ts:
 * two heap snapshots, before the pool starts and once all are watched); use it with a few hundred
 * mailboxes, a snapshot of a larger heap takes minutes and gigabytes.
 * The timings come from a thin wrapper around each mailbox's real connector (connectorFor,
 * bench/support/observed-sync.ts), which only notes the time when the connector's push and pull
 * pass a message through, and which pull it was (on the watch's connection, or a full one).
 *
 * 10,000 mailboxes need the process's open-file limit above 10,000 (bench/run.ts raises the soft
 * limit to the hard one) and the bed's Dovecot limits (mailbed.sh, "IDLE load"). Everything it
 * opens is closed at the end (the sockets left open are counted). Mail of earlier runs stays in the
 * mailboxes and is skipped: the first pull looks back 1 minute.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { build as buildHistogram, type Histogram } from 'hdr-histogram-js';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { systemClock } from '../src/common/clock.ts';
import { seededRandom } from '../src/common/random.ts';
import type { SyncPool } from '../src/ingest/worker/sync-pool.ts';
import { createConnector } from '../src/mailbox/connectors/registry.ts';
import type { MailboxSync } from '../src/mailbox/sync/source.ts';
import { localKeyWrapper, Vault } from '../src/mailbox/vault.ts';
import { Metrics } from '../src/ops/metrics.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { idleUser, mailBed, startMailBed } from '../test/mail/mailbed.ts';
import { describeLoad, machineLoad } from './lib/rounds.ts';
import { flag, intFlag } from './lib/args.ts';
import { bytes, int, round } from './lib/format.ts';
import { censusGrowth, heapCensus, type Census } from './lib/heap-census.ts';
import { collect, gcAvailable } from './lib/memory.ts';
import { spread, spreadText, type Spread } from './lib/stats.ts';
import { benchStore } from './support/backends.ts';
import { benchSyncPool, connectBedMailboxes, watchedCount } from './support/bed-mailboxes.ts';
import { observedSync, type SyncObserver } from './support/observed-sync.ts';

interface Pending {
  id: string;
  user: string;
  injectedAt: number;
  changedAt: number | null;
  pulledAt: number | null;
  committedAt: number | null;
}

const hist = (): Histogram => buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The load average as every benchmark prints it (bench/lib/rounds.ts).
const load = () => describeLoad(machineLoad());

function memory(): { rss: number; heap: number } {
  collect();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + m.external };
}

/** The soft limit on open files (Linux /proc), or null elsewhere. */
function openFileLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Dovecot's IMAP processes and their proportional memory (PSS, Linux /proc), or null elsewhere. */
function dovecotProcesses(): { imap: number; hibernate: number; login: number; pssBytes: number } | null {
  try {
    const out = { imap: 0, hibernate: 0, login: 0, pssBytes: 0 };
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      let comm: string;
      try {
        comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      if (comm !== 'imap' && comm !== 'imap-hibernate' && comm !== 'imap-login') continue;
      out[comm === 'imap' ? 'imap' : comm === 'imap-login' ? 'login' : 'hibernate']++;
      try {
        const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
        if (pss) out.pssBytes += Number(pss[1]) * 1024;
      } catch {
        // gone meanwhile
      }
    }
    return out;
  } catch {
    return null;
  }
}

export default async function imapIdle(args: string[]): Promise<Record<string, unknown>> {
  const n = intFlag(args, 'mailboxes', 2000);
  const rounds = intFlag(args, 'rounds', 3);
  const perRound = intFlag(args, 'messages', 200);
  const rate = intFlag(args, 'rate', 20);
  const gate = intFlag(args, 'gate', 32);
  const census = args.includes('--heap-census');
  const random = seededRandom(flag(args, 'seed') ?? '1');
  if (n > mailBed.idleUsers) throw new Error(`--mailboxes: the bed has ${mailBed.idleUsers} idle mailboxes (MAILBED_IDLE_USERS)`);
  const fds = openFileLimit();
  if (fds !== null && fds < n + 1000) throw new Error(`open-file limit ${fds} is too low for ${n} watched mailboxes (one socket each, plus pulls): raise the hard limit (ulimit -Hn) to ${n + 1000} or more`);
  if (!gcAvailable()) console.log('(no global.gc: memory figures are rough)');
  const loadBefore = machineLoad().one;
  console.log(`load average before: ${load()}; ${n} mailboxes, ${rounds} rounds of ${perRound} messages at ${rate}/s, connect gate ${gate}`);
  await startMailBed();

  const b = await benchStore('postgres');
  const users = Array.from({ length: n }, (_, i) => idleUser(i + 1));
  const pending = new Map<string, Pending>();
  /** Mailboxes whose IDLE watch is open now. */
  const watching = new Set<string>();
  /** Messages injected into a mailbox whose IDLE push has not come yet. */
  const awaitingPush = new Map<string, Pending[]>();
  let pool: SyncPool | null = null;
  try {
    const store = b.store;
    const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    const service = new EnrollmentService({ store, clock: systemClock, random });
    const t00 = performance.now();
    const { mailboxIds } = await connectBedMailboxes(store, vault, random, users);
    console.log(`${int(n)} mailboxes connected (rows + sealed credentials) in ${round((performance.now() - t00) / 1000, 1)} s`);

    const metrics = new Metrics();
    // What the loops' failures were (each is followed by a reconnect after backoff): counted by message.
    const failures = new Map<string, number>();
    const log = pino({ level: 'warn' }, {
      write(line: string) {
        const e = JSON.parse(line) as { msg?: string; err?: unknown };
        const why = `${e.msg ?? ''}: ${typeof e.err === 'string' ? e.err : ((e.err as { message?: string })?.message ?? '')}`.replace(/\d+/g, 'N').slice(0, 140);
        failures.set(why, (failures.get(why) ?? 0) + 1);
      },
    });
    pool = benchSyncPool({
      log,
      store,
      service,
      random,
      vault,
      metrics,
      mailboxIds,
      connectConcurrency: gate,
      connectorFor: (m, deps) => observed(m.email, createConnector(m, deps, ['sync'])),
      onBatch: (_mailboxId, r) => {
        const now = performance.now();
        for (const m of r.messages) {
          const p = pending.get(m.messageId ?? '');
          if (p && p.committedAt === null) p.committedAt = now;
        }
      },
    });
    let pulledOnWatch = 0;
    const observer: SyncObserver = {
      pushed(user, at) {
        for (const p of awaitingPush.get(user) ?? []) if (p.changedAt === null) p.changedAt = at;
        awaitingPush.delete(user);
      },
      pulled(messageId, at, via) {
        const p = pending.get(messageId);
        if (p && p.pulledAt === null) {
          p.pulledAt = at;
          if (via === 'watch') pulledOnWatch++;
        }
      },
      watching(user, open) {
        if (open) watching.add(user);
        else watching.delete(user);
      },
    };
    const observed = (user: string, c: MailboxSync): MailboxSync => observedSync(user, c, observer);

    // The pool's fixed part (its worker threads loading the pipeline) is not per mailbox.
    await sleep(3_000);
    const before = memory();
    const censusBefore: Census | null = census ? await heapCensus() : null;
    const synced = () => watchedCount(store);
    const t0 = performance.now();
    await pool.start();
    let lastReport = t0;
    let ready = await synced();
    let allWatchedS: number | null = null;
    while ((ready < n || watching.size < n) && performance.now() - t0 < 1_800_000) {
      await sleep(500);
      ready = await synced();
      if (allWatchedS === null && watching.size >= n) allWatchedS = (performance.now() - t0) / 1000;
      if (performance.now() - lastReport >= 10_000) {
        lastReport = performance.now();
        console.log(`  ${round((lastReport - t0) / 1000, 0)} s: ${int(pool.mailboxes.length)} loops, ${int(watching.size)} watching, ${int(ready)} pulled once; load ${load()}`);
      }
    }
    const readyS = (performance.now() - t0) / 1000;
    const errorsAtReady = (await metrics.syncErrors.get()).values.reduce((a, v) => a + v.value, 0);
    console.log(`all ${int(n)} watching (IDLE open) after ${allWatchedS === null ? 'never' : `${round(allWatchedS, 1)} s`}, and pulled once after ${round(readyS, 1)} s (${int(ready)} with a cursor; ${errorsAtReady} sync errors on the way)`);
    if (ready < n || allWatchedS === null) throw new Error(`only ${watching.size} watching and ${ready} pulled of ${n} mailboxes after 30 minutes`);

    await sleep(5_000);
    const after = memory();
    const procs = dovecotProcesses();
    const heapPer = (after.heap - before.heap) / n;
    const rssPer = (after.rss - before.rss) / n;
    console.log(`memory per watched mailbox: JS heap + external ${bytes(heapPer)}, RSS ${bytes(rssPer)} (process RSS ${bytes(after.rss)}, heap + external ${bytes(after.heap)})`);
    if (censusBefore) {
      console.log('JS heap per watched mailbox, by kind (count, shallow bytes):');
      for (const [kind, count, size] of censusGrowth(censusBefore, await heapCensus(), n)) console.log(`  ${kind.slice(0, 60).padEnd(60)} ${count.toFixed(1).padStart(7)} ${bytes(size).padStart(10)}`);
    }
    if (procs) console.log(`Dovecot: ${procs.imap} imap processes, ${procs.hibernate} imap-hibernate, ${procs.login} imap-login; their memory (PSS) ${bytes(procs.pssBytes)}, ${bytes(procs.pssBytes / n)} per watched mailbox`);

    // The main thread's delay while the rounds run: a late timer or socket read is late mail.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 4 });
    const perRoundFigures: Array<{ push: Histogram; pull: Histogram; commit: Histogram; lost: number }> = [];
    try {
      for (let r = 0; r < rounds; r++) {
        const mine: Pending[] = [];
        const start = performance.now();
        const sends: Promise<void>[] = [];
        for (let i = 0; i < perRound; i++) {
          const wait = start + (i * 1000) / rate - performance.now();
          if (wait > 0) await sleep(wait);
          const user = users[random.int(0, n - 1)]!;
          const id = `<${randomUUID()}@idle-bench.test>`;
          const p: Pending = { id, user, injectedAt: performance.now(), changedAt: null, pulledAt: null, committedAt: null };
          pending.set(id, p);
          mine.push(p);
          awaitingPush.set(user, [...(awaitingPush.get(user) ?? []), p]);
          const raw = `From: prospect@example.test\r\nTo: ${user}\r\nSubject: re: bench\r\nMessage-ID: ${id}\r\n\r\nhello\r\n`;
          sends.push(
            smtp.sendMail({ envelope: { from: 'prospect@example.test', to: [user] }, raw }).then(
              () => undefined,
              (e: Error) => {
                pending.delete(id);
                mine.splice(mine.indexOf(p), 1);
                console.log(`injection to ${user} failed: ${e.message}`);
              },
            ),
          );
        }
        await Promise.all(sends);
        const deadline = performance.now() + 30_000;
        while (mine.some((p) => p.committedAt === null) && performance.now() < deadline) await sleep(50);
        const f = { push: hist(), pull: hist(), commit: hist(), lost: 0 };
        for (const p of mine) {
          if (p.committedAt === null) {
            f.lost++;
            console.log(`  not committed within 30 s: to ${p.user} (push: ${p.changedAt !== null}, pulled: ${p.pulledAt !== null})`);
            continue;
          }
          f.commit.recordValue(Math.max(1, Math.round(p.committedAt - p.injectedAt)));
          if (p.pulledAt !== null) f.pull.recordValue(Math.max(1, Math.round(p.pulledAt - p.injectedAt)));
          if (p.changedAt !== null) f.push.recordValue(Math.max(1, Math.round(p.changedAt - p.injectedAt)));
        }
        perRoundFigures.push(f);
        console.log(`round ${r + 1}: ${mine.length} injected, ${f.lost} lost; injection -> push ${pcts(f.push)}; -> pull ${pcts(f.pull)}; -> commit ${pcts(f.commit)}; load ${load()}`);
        for (const p of mine) pending.delete(p.id);
      }
    } finally {
      smtp.close();
      loopDelay.disable();
    }
    const loopP99 = loopDelay.percentile(99) / 1e6;
    const loopMax = loopDelay.max / 1e6;

    const errors = (await metrics.syncErrors.get()).values.reduce((a, v) => a + v.value, 0);
    const stopStart = performance.now();
    await pool.stop();
    pool = null;
    const stopMs = performance.now() - stopStart;
    for (let i = 0; i < 100 && process.getActiveResourcesInfo().includes('TCPSocketWrap'); i++) await sleep(50);
    // The store's own connections are still open until drop(): count IMAP sockets only by what stays past the pool.
    const leftSockets = process.getActiveResourcesInfo().filter((x) => x === 'TCPSocketWrap').length;

    const over = (pick: (f: (typeof perRoundFigures)[number]) => Histogram, p: number | 'max'): Spread =>
      spread(perRoundFigures.map((f) => (pick(f).totalCount === 0 ? NaN : p === 'max' ? pick(f).maxValue : pick(f).getValueAtPercentile(p))));
    const lines: Array<[string, (f: (typeof perRoundFigures)[number]) => Histogram]> = [
      ['injection -> IDLE push', (f) => f.push],
      ['injection -> pull yields it', (f) => f.pull],
      ['injection -> batch committed', (f) => f.commit],
    ];
    console.log(`\n${int(n)} watched mailboxes, ${rounds} rounds (median (min–max) over rounds):`);
    for (const [label, pick] of lines) console.log(`  ${label.padEnd(30)} p50 ${spreadText(over(pick, 50))} ms, p99 ${spreadText(over(pick, 99))} ms, max ${spreadText(over(pick, 'max'))} ms`);
    const lost = perRoundFigures.reduce((a, f) => a + f.lost, 0);
    const loadAfter = machineLoad().one;
    console.log(`  event-loop delay during the rounds: p99 ${round(loopP99)} ms, max ${round(loopMax)} ms`);
    console.log(`  pulled on the watch connection: ${int(pulledOnWatch)} of ${int(perRoundFigures.reduce((a, f) => a + f.pull.totalCount, 0))} messages (the rest by a full pull on a new connection)`);
    console.log(`  lost ${lost}; sync errors ${errors}; pool stopped in ${round(stopMs)} ms; sockets left open ${leftSockets} (the store's own included)`);
    for (const [why, count] of [...failures].sort((a, b) => b[1] - a[1]).slice(0, 5)) console.log(`  warnings: ${count} x ${why}`);
    console.log(`load average after: ${load()}`);

    const fig = (key: string, s: Spread) => ({ [`${key}_ms`]: s.median, [`${key}_min_ms`]: s.min, [`${key}_max_ms`]: s.max });
    return {
      mailboxes: n,
      rounds,
      messages_per_round: perRound,
      rate_per_s: rate,
      gate,
      load_before: round(loadBefore, 2),
      load_after: round(loadAfter, 2),
      watch_all_s: round(allWatchedS, 1),
      pulled_all_s: round(readyS, 1),
      pulled_on_watch: pulledOnWatch,
      heap_bytes_per_mailbox: Math.round(heapPer),
      rss_bytes_per_mailbox: Math.round(rssPer),
      dovecot_imap_processes: procs?.imap ?? null,
      dovecot_pss_bytes_per_mailbox: procs ? Math.round(procs.pssBytes / n) : null,
      ...fig('push_p50', over((f) => f.push, 50)),
      ...fig('push_p99', over((f) => f.push, 99)),
      ...fig('pull_p50', over((f) => f.pull, 50)),
      ...fig('pull_p99', over((f) => f.pull, 99)),
      ...fig('pull_max', over((f) => f.pull, 'max')),
      ...fig('commit_p50', over((f) => f.commit, 50)),
      ...fig('commit_p99', over((f) => f.commit, 99)),
      ...fig('commit_max', over((f) => f.commit, 'max')),
      event_loop_p99_ms: round(loopP99),
      event_loop_max_ms: round(loopMax),
      lost,
      sync_errors: errors,
      stop_ms: round(stopMs),
      sockets_left: leftSockets,
    };
  } finally {
    await pool?.stop().catch(() => undefined);
    await b.drop();
  }
}

function pcts(h: Histogram): string {
  return h.totalCount ? `p50 ${h.getValueAtPercentile(50)} / p99 ${h.getValueAtPercentile(99)} / max ${h.maxValue} ms` : 'none';
}
