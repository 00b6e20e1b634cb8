/**
 * Tracking endpoints under load, by what a request costs the SERVER: the open pixel and the click
 * redirect, events recorded (tracking_event, batched), against a bare Fastify route that answers
 * the same GIF with the same headers for the same URLs, measured in the same rounds on the same
 * server. Target: each tracking route at least 70% of the bare route, by server CPU per request
 * (bare's CPU per request / the route's).
 *
 *   npm run bench -- tracking [--duration=5] [--rounds=5] [--connections=50] [--backends=pglite,postgres]
 *                             [--sends=50000] [--cases=bare,pixel,click] [--cpu-prof=DIR] [--journal=on|off]
 *
 * Processes: the server (Fastify with registerTracking, on 127.0.0.1, an ephemeral port) runs in a
 * child process; the load generator (autocannon) runs in this one, and its CPU is reported apart.
 * The server's CPU is process.cpuUsage() read just before and just after each measured window
 * (its event loop, GC, its threads, and PGlite when embedded; the recorder is flushed before each
 * reading, so writing a case's own events is in its window). On PostgreSQL the database backends'
 * CPU (from /proc, Linux only) is reported apart too: it is the database server's, not ours.
 *
 * Many distinct sends (--sends, each with its own pixel and click token), requested in a scattered
 * order (a stride through the list, so the 50 connections never ask for the same token together):
 * no token is seen twice within thousands of requests, so nothing per-token can be served from a
 * cache. The recorder keeps each send's time (immutable once sent) in a bounded map; that one is
 * warm after the warm-up, as it is on a live server for the sends being opened today.
 *
 * Rounds (bench/lib/rounds.ts): a warm-up of each case, then --rounds rounds of bare, pixel and
 * click, the starting case rotating; every figure is the median over the rounds with its min–max,
 * and each ratio is taken within a round. After every tracking round the events written are
 * counted against the requests answered: every answered request must be a row (a request sent but
 * cut off when the window closed may be one too), or the run fails. --cpu-prof writes the server's
 * V8 CPU profile into DIR (open it in Chrome's DevTools); --cases narrows the run for profiling.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { buildServer } from '../src/api/server.ts';
import { systemClock } from '../src/common/clock.ts';
import { seededRandom } from '../src/common/random.ts';
import { applyDefinition } from '../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../src/sequence/definition.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import type { Store } from '../src/store/store.ts';
import { trackingKey, trackingLinks } from '../src/sending/compose/tracking.ts';
import { registerTracking } from '../src/tracking/plugin.ts';
import { PIXEL_GIF } from '../src/tracking/routes/pixel.ts';
import { int } from './lib/format.ts';
import { describeLoad, interleavedRounds, loadFigures, machineLoad, showSpread, spreadFigures } from './lib/rounds.ts';
import { benchStore, flag, seedLeads, type BenchStore } from './support/backends.ts';

type Backend = 'pglite' | 'postgres';
const SERVER_ENV = 'CADENZA_TRACKING_BENCH_SERVER';

interface Ready {
  type: 'ready';
  port: number;
  pixel: string[];
  click: string[];
}

interface Sample {
  type: 'sample';
  /** CPU microseconds used so far by the server process. */
  serverUs: number;
  /** CPU microseconds used so far by the database backends of the bench database (PostgreSQL), or null. */
  dbUs: number | null;
  eventsWritten: number;
  /** Batches the recorder has written so far. */
  batches: number;
  /** The click journal's group writes so far, and the clicks they carried (0 without a journal). */
  journalWrites: number;
  journalRecords: number;
  dropped: number;
  failed: number;
}

const definition = validateDefinition({
  key: 'bench',
  name: 'Bench',
  window: 'any',
  holidays: false,
  jitter_minutes: 0,
  mailboxes: ['rep@bench.test'],
  steps: [{ key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hello' }],
});

/** CPU time of this database's backends, from /proc (utime + stime, in clock ticks of 10 ms). */
async function dbCpuUs(store: Store): Promise<number | null> {
  if (store.backend !== 'postgres') return null;
  const pids = await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(store.db);
  let ticks = 0;
  for (const { pid } of pids.rows) {
    try {
      // Fields after the command name (which may hold spaces, so split after its closing paren).
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      return null; // not Linux, or not the same machine
    }
  }
  return ticks * 10_000;
}

/** The child: a store with `sends` sent requests, and the server with the tracking routes and a bare one. */
async function serve(backend: Backend, sends: number, journal: boolean): Promise<void> {
  const b = await benchStore(backend);
  try {
    await listen(b, sends, journal);
  } catch (e) {
    await b.drop(); // a failed start leaves no database behind
    throw e;
  }
}

async function listen(b: BenchStore, sends: number, journal: boolean): Promise<void> {
  const clock = systemClock;
  const random = seededRandom(11);
  const { workspaceId, leadIds } = await seedLeads(b.store, sends, clock.now(), random);
  const seq = await applyDefinition(b.store, { clock, random }, workspaceId, definition);
  await bulkEnroll(b.store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds });
  const service = new EnrollmentService({ store: b.store, clock, random });
  while ((await service.fireDue(1000)).length) {
    /* drain */
  }
  // Sent a minute ago: the recorder looks each send's time up for the delay evidence.
  await sql`update send_request set state = 'sent', updated_at = now() - interval '1 minute'`.execute(b.store.db);
  const requests = await b.store.db.selectFrom('send_request').select('id').execute();

  const key = trackingKey(Buffer.alloc(32, 3));
  const app = buildServer({ store: b.store, clock, version: 'bench' });
  // The click journal on this machine's temporary disk, as `cadenza start` keeps it in its data folder.
  const journalDir = journal ? mkdtempSync(join(tmpdir(), 'cadenza-click-journal-')) : undefined;
  if (journalDir) app.addHook('onClose', async () => rmSync(journalDir, { recursive: true, force: true }));
  const recorder = registerTracking(app, { store: b.store, service, clock, key, ...(journalDir ? { journalDir } : {}) });
  // The baseline: the same 43 bytes and headers for the same URLs (the pixel's, under another
  // prefix), without token, validation or recording.
  app.get('/bench/bare/*', (_req, reply) => {
    reply.headers({ 'content-type': 'image/gif', 'cache-control': 'no-store, no-cache, must-revalidate, private, max-age=0', pragma: 'no-cache', expires: '0', 'x-content-type-options': 'nosniff' }).send(PIXEL_GIF);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const links = requests.map((r) => trackingLinks({ key, baseUrl: 'http://127.0.0.1', workspaceId, sendRequestId: r.id }));
  const path = (url: string) => new URL(url).pathname;
  process.send!({
    type: 'ready',
    port: typeof address === 'object' && address ? address.port : 0,
    pixel: links.map((l) => path(l.pixelUrl())),
    click: links.map((l, i) => path(l.clickUrl(`https://www.example.com/page/${i}?utm_source=cadenza`, i % 5)!)),
  } satisfies Ready);

  // The runner gone (it failed, or was interrupted): stop and leave no database behind.
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await app.close();
    await b.drop();
  };
  process.once('disconnect', () => void shutdown().finally(() => process.exit(0)));

  process.on('message', (m: { type: string }) => {
    void (async () => {
      if (m.type === 'sample') {
        // Requests still in flight when the load generator stopped land within a few milliseconds.
        await recorder.flush();
        await new Promise((resolve) => setTimeout(resolve, 20));
        await recorder.flush();
        const cpu = process.cpuUsage();
        const dbUs = await dbCpuUs(b.store);
        const n = await sql<{ n: number }>`select count(*)::int as n from tracking_event`.execute(b.store.db);
        const s = recorder.stats();
        process.send!({ type: 'sample', serverUs: cpu.user + cpu.system, dbUs, eventsWritten: n.rows[0]!.n, batches: s.batches, journalWrites: s.journalWrites, journalRecords: s.journalRecords, dropped: s.dropped, failed: s.failed } satisfies Sample);
      } else if (m.type === 'close') {
        await shutdown();
        process.send!({ type: 'closed' }, () => process.exit(0));
      }
    })().catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
  });
}

function next<T>(child: ChildProcess, type: string, send?: { type: string }): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { type: string }) => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as T);
    };
    const onExit = (code: number | null) => reject(new Error(`the bench server exited (${code}) before '${type}'`));
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (send) child.send(send);
  });
}

/**
 * One measured window: autocannon for `seconds`, each request's path taken by a stride through
 * `paths` (a prime step, coprime with any length that is not its multiple), so consecutive
 * requests, from whichever connection, name different sends.
 */
function load(base: string, paths: string[], seconds: number, connections: number): Promise<autocannon.Result> {
  let i = 0;
  const step = paths.length % 7919 === 0 ? 1 : 7919;
  return autocannon({
    url: base,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'GET' as const,
        setupRequest: (req) => {
          i = (i + step) % paths.length;
          return { ...req, path: paths[i]! };
        },
      },
    ],
  });
}

const CASES = ['bare', 'pixel', 'click'] as const;
type Case = (typeof CASES)[number];

export default async function trackingBench(args: string[]): Promise<Record<string, unknown>> {
  const seconds = Number(flag(args, 'duration', '5'));
  const rounds = Number(flag(args, 'rounds', '5'));
  const connections = Number(flag(args, 'connections', '50'));
  const sends = Number(flag(args, 'sends', '50000'));
  const backends = flag(args, 'backends', 'pglite,postgres').split(',') as Backend[];
  const cases = CASES.filter((c) => flag(args, 'cases', CASES.join(',')).split(',').includes(c));
  const profileDir = flag(args, 'cpu-prof', '');
  const journal = flag(args, 'journal', 'on') !== 'off';
  if (!(seconds > 0 && seconds <= 60)) throw new Error('--duration must be in (0, 60] seconds');
  if (!(Number.isInteger(rounds) && rounds >= 1 && rounds <= 20)) throw new Error('--rounds must be an integer in [1, 20]');
  if (!(Number.isInteger(sends) && sends >= 1)) throw new Error('--sends must be a positive integer');
  const loadBefore = machineLoad();
  console.log(`tracking: ${backends.join(', ')}; ${rounds} rounds of ${cases.join(', ')}, ${seconds} s each, ${connections} connections, ${int(sends)} sends, clicks ${journal ? 'journaled (answered once on local disk)' : 'committed to the database before the answer'}\n${describeLoad(loadBefore)} before`);
  const figures: Record<string, unknown> = { duration_s: seconds, rounds, connections, sends, click_journal: journal };
  const met: boolean[] = [];

  for (const backend of backends) {
    const child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
      env: { ...process.env, [SERVER_ENV]: JSON.stringify({ backend, sends, journal }) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      const ready = await next<Ready>(child, 'ready');
      const base = `http://127.0.0.1:${ready.port}`;
      const paths: Record<Case, string[]> = { pixel: ready.pixel, click: ready.click, bare: ready.pixel.map((p) => p.replace('/t/o/', '/bench/bare/')) };
      let answered = 0; // tracking requests answered: each must have become one event
      let written = 0;
      const run = async (c: Case, round: number) => {
        const before = await next<Sample>(child, 'sample', { type: 'sample' });
        const gen0 = process.cpuUsage();
        const r = await load(base, paths[c], round < 0 ? Math.min(1, seconds) : seconds, connections);
        const gen = process.cpuUsage(gen0);
        const after = await next<Sample>(child, 'sample', { type: 'sample' });
        const ok = c === 'click' ? r['3xx'] : r['2xx'];
        if (r.errors > 0 || r['5xx'] > 0 || ok !== r.requests.total) {
          throw new Error(`${backend} ${c}: ${r.errors} errors, ${r['4xx']} 4xx, ${r['5xx']} 5xx of ${r.requests.total}`);
        }
        const events = after.eventsWritten - before.eventsWritten;
        // Every answered tracking request is a row; one sent but cut off as the window closed may be one too.
        const lost = c === 'bare' ? events : Math.max(0, r.requests.total - events) + Math.max(0, events - r.requests.sent);
        if (lost > 0 || after.dropped > before.dropped || after.failed > before.failed) {
          throw new Error(`${backend} ${c}: ${int(events)} events written for ${int(r.requests.total)} answered (${int(r.requests.sent)} sent); dropped ${after.dropped - before.dropped}, failed ${after.failed - before.failed}`);
        }
        if (c !== 'bare') {
          answered += r.requests.total;
          written += events;
        }
        const n = r.requests.total;
        return {
          rps: r.requests.average,
          p99_ms: r.latency.p99,
          server_us_per_req: (after.serverUs - before.serverUs) / n,
          db_us_per_req: after.dbUs !== null && before.dbUs !== null ? (after.dbUs - before.dbUs) / n : 0,
          server_db_us_per_req: (after.serverUs - before.serverUs + (after.dbUs !== null && before.dbUs !== null ? after.dbUs - before.dbUs : 0)) / n,
          loadgen_us_per_req: (gen.user + gen.system) / n,
          events_per_batch: after.batches > before.batches ? events / (after.batches - before.batches) : 0,
          clicks_per_journal_write: after.journalWrites > before.journalWrites ? (after.journalRecords - before.journalRecords) / (after.journalWrites - before.journalWrites) : 0,
        };
      };
      const res = await interleavedRounds({
        rounds,
        cases,
        run,
        onRound: (i, f) =>
          console.log(
            `${backend} round ${i + 1}: ` +
              cases.map((c) => `${c} ${int(f[c].rps!)} req/s, server ${round1(f[c].server_us_per_req!)} µs/req`).join('; '),
          ),
      });
      await next(child, 'closed', { type: 'close' });

      for (const c of cases) {
        const sp = (k: string) => res.spread(c, k);
        const us = (x: number) => `${x.toFixed(1)} µs`;
        console.log(
          `${backend.padEnd(8)} ${c.padEnd(6)} CPU/req: server ${showSpread(sp('server_us_per_req'), us)}` +
            `${backend === 'postgres' ? `, database ${showSpread(sp('db_us_per_req'), us)}` : ''}, load generator ${us(sp('loadgen_us_per_req').median)}; ` +
            `${showSpread(sp('rps'), int)} req/s, p99 ${sp('p99_ms').median} ms` +
            `${c === 'bare' ? '' : `, ${int(sp('events_per_batch').median)} events per batch`}` +
            `${c === 'click' && journal ? `, ${round1(sp('clicks_per_journal_write').median)} clicks per journal write` : ''}`,
        );
        Object.assign(figures, spreadFigures(`${backend}_${c}_server_us_per_req`, sp('server_us_per_req')));
        if (backend === 'postgres') Object.assign(figures, spreadFigures(`${backend}_${c}_db_us_per_req`, sp('db_us_per_req')));
        figures[`${backend}_${c}_loadgen_us_per_req`] = round1(sp('loadgen_us_per_req').median);
        figures[`${backend}_${c}_rps`] = Math.round(sp('rps').median);
        figures[`${backend}_${c}_p99_ms`] = sp('p99_ms').median;
        if (c !== 'bare') figures[`${backend}_${c}_events_per_batch`] = Math.round(sp('events_per_batch').median);
        if (c === 'click' && journal) figures[`${backend}_click_clicks_per_journal_write`] = round1(sp('clicks_per_journal_write').median);
      }
      if (cases.includes('bare')) {
        const shares: number[] = [];
        for (const c of cases.filter((x) => x !== 'bare')) {
          const cpu = res.ratio('bare', c, 'server_us_per_req');
          shares.push(cpu.median);
          const withDb = res.ratio('bare', c, 'server_db_us_per_req');
          const rps = res.ratio(c, 'bare', 'rps');
          console.log(
            `${backend.padEnd(8)} ${c}: ${showSpread(cpu, pct)} of the bare route by server CPU per request (target >= 70%)` +
              `${backend === 'postgres' ? `; ${showSpread(withDb, pct)} counting the database's CPU too` : ''}; throughput ${showSpread(rps, pct)}`,
          );
          Object.assign(figures, spreadFigures(`${backend}_${c}_cpu_share`, cpu, 3));
          if (backend === 'postgres') Object.assign(figures, spreadFigures(`${backend}_${c}_cpu_share_with_db`, withDb, 3));
          Object.assign(figures, spreadFigures(`${backend}_${c}_rps_share`, rps, 3));
        }
        const ok = shares.length > 0 && shares.every((x) => x >= 0.7);
        figures[`${backend}_target_met`] = ok;
        met.push(ok);
      }
      console.log(`${backend.padEnd(8)} ${int(written)} events written for ${int(answered)} tracking requests answered, none lost`);
      figures[`${backend}_events_written`] = written;
      figures[`${backend}_tracking_requests_answered`] = answered;
    } finally {
      // On failure, closing the channel makes the server drop its database and exit; wait for it.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        if (child.connected) child.disconnect();
        await exited;
      }
    }
  }
  const loadAfter = machineLoad();
  console.log(`${describeLoad(loadAfter)} after`);
  Object.assign(figures, loadFigures(loadBefore, loadAfter));
  if (met.length > 0) figures.target_met = met.every(Boolean);
  return figures;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

if (process.env[SERVER_ENV] && process.send) {
  const d = JSON.parse(process.env[SERVER_ENV]) as { backend: Backend; sends: number; journal: boolean };
  serve(d.backend, d.sends, d.journal).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
