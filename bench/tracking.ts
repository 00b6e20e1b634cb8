/**
 * Tracking endpoints under load: requests per second of the open pixel and the click redirect,
 * with event recording on (batched inserts into tracking_event), against a bare Fastify route that
 * answers the same GIF with the same headers for the same URLs, measured in the same run on the
 * same server. Target: each tracking route at least 70% of the bare route's throughput.
 *
 *   npm run bench -- tracking [--duration=5] [--rounds=2] [--connections=50] [--backends=pglite,postgres] [--sends=200]
 *                             [--cases=bare,pixel,click] [--cpu-prof=DIR]
 *
 * --cpu-prof writes the server process's V8 CPU profile into DIR (open it in Chrome's DevTools), to
 * see where a tracked request's time goes; --cases narrows the run to the cases being profiled.
 *
 * The server (Fastify with registerTracking, listening on 127.0.0.1, an ephemeral port) runs in a
 * child process, and autocannon drives it from this one. After a 1 s warm-up of each case, --rounds
 * rounds run the three cases in turn, --duration seconds each; each case keeps its best round. The
 * load goes to loopback only and stops by itself.
 *
 * Throughput on a shared machine moves with the neighbours' load, so each case also reports the CPU
 * it cost per request, which does not: the server process's (its event loop, GC, and PGlite when
 * embedded), plus, on PostgreSQL, the database backends serving it (from /proc, Linux only). Each
 * case's CPU includes writing its own events (the recorder is flushed before the reading).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
import { benchStore, flag, seedLeads, type BenchStore } from './support/backends.ts';

type Backend = 'pglite' | 'postgres';
const SERVER_ENV = 'CADENZA_TRACKING_BENCH_SERVER';

interface Ready {
  type: 'ready';
  port: number;
  pixel: string[];
  click: string[];
  bare: string[];
}

interface Sample {
  type: 'sample';
  /** CPU microseconds used so far by the server process. */
  serverUs: number;
  /** CPU microseconds used so far by the database backends of the bench database (PostgreSQL), or null. */
  dbUs: number | null;
  eventsWritten: number;
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
async function serve(backend: Backend, sends: number): Promise<void> {
  const b = await benchStore(backend);
  try {
    await listen(b, sends);
  } catch (e) {
    await b.drop(); // a failed start leaves no database behind
    throw e;
  }
}

async function listen(b: BenchStore, sends: number): Promise<void> {
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
  const recorder = registerTracking(app, { store: b.store, service, clock, key });
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
    bare: links.map((l) => path(l.pixelUrl()).replace('/t/o/', '/bench/bare/')),
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
        await recorder.flush();
        const cpu = process.cpuUsage();
        const dbUs = await dbCpuUs(b.store);
        const n = await sql<{ n: number }>`select count(*)::int as n from tracking_event`.execute(b.store.db);
        const s = recorder.stats();
        process.send!({ type: 'sample', serverUs: cpu.user + cpu.system, dbUs, eventsWritten: n.rows[0]!.n, dropped: s.dropped, failed: s.failed } satisfies Sample);
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

function load(base: string, paths: string[], seconds: number, connections: number): Promise<autocannon.Result> {
  return autocannon({ url: base, connections, duration: seconds, requests: paths.map((p) => ({ method: 'GET' as const, path: p })) });
}

interface CaseResult {
  r: autocannon.Result;
  serverUs: number;
  dbUs: number | null;
}

export default async function trackingBench(args: string[]): Promise<Record<string, unknown>> {
  const seconds = Number(flag(args, 'duration', '5'));
  const rounds = Number(flag(args, 'rounds', '2'));
  const connections = Number(flag(args, 'connections', '50'));
  const sends = Number(flag(args, 'sends', '200'));
  const backends = flag(args, 'backends', 'pglite,postgres').split(',') as Backend[];
  const only = flag(args, 'cases', 'bare,pixel,click').split(',');
  const profileDir = flag(args, 'cpu-prof', '');
  if (!(seconds > 0 && seconds <= 60)) throw new Error('--duration must be in (0, 60] seconds');
  if (!(Number.isInteger(rounds) && rounds >= 1 && rounds <= 10)) throw new Error('--rounds must be an integer in [1, 10]');
  const figures: Record<string, unknown> = { duration_s: seconds, rounds, connections };

  for (const backend of backends) {
    const child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
      env: { ...process.env, [SERVER_ENV]: JSON.stringify({ backend, sends }) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      const ready = await next<Ready>(child, 'ready');
      const base = `http://127.0.0.1:${ready.port}`;
      const cases = ([
        ['bare', ready.bare],
        ['pixel', ready.pixel],
        ['click', ready.click],
      ] as Array<[string, string[]]>).filter(([name]) => only.includes(name));
      let answered = 0; // tracking requests answered (each must have become one event)
      let sent = 0; // and sent (a few may be cut off in flight when a run ends)
      const check = (name: string, r: autocannon.Result) => {
        const ok = name === 'click' ? r['3xx'] : r['2xx'];
        if (r.errors > 0 || r['5xx'] > 0 || ok !== r.requests.total) {
          throw new Error(`${backend} ${name}: ${r.errors} errors, ${r['4xx']} 4xx, ${r['5xx']} 5xx of ${r.requests.total}`);
        }
        if (name !== 'bare') {
          answered += r.requests.total;
          sent += r.requests.sent;
        }
      };
      for (const [name, paths] of cases) check(name, await load(base, paths, 1, connections)); // warm-up (JIT, pools)
      // Rounds interleave the cases, so that a neighbour's load on a shared machine hits them alike;
      // each case keeps its best round.
      const best = new Map<string, CaseResult>();
      let before = await next<Sample>(child, 'sample', { type: 'sample' });
      for (let round = 0; round < rounds; round++) {
        for (const [name, paths] of cases) {
          const r = await load(base, paths, seconds, connections);
          check(name, r);
          const after = await next<Sample>(child, 'sample', { type: 'sample' });
          const res: CaseResult = { r, serverUs: after.serverUs - before.serverUs, dbUs: after.dbUs !== null && before.dbUs !== null ? after.dbUs - before.dbUs : null };
          before = after;
          if (!best.has(name) || r.requests.average > best.get(name)!.r.requests.average) best.set(name, res);
        }
      }
      const stats = await next<Sample>(child, 'sample', { type: 'sample' });
      await next(child, 'closed', { type: 'close' });

      const rps: Record<string, number> = {};
      const cpu: Record<string, number> = {};
      for (const [name] of cases) {
        const { r, serverUs, dbUs } = best.get(name)!;
        const n = r.requests.sent;
        rps[name] = r.requests.average;
        cpu[name] = (serverUs + (dbUs ?? 0)) / n;
        figures[`${backend}_${name}_rps`] = Math.round(r.requests.average);
        figures[`${backend}_${name}_p99_ms`] = r.latency.p99;
        figures[`${backend}_${name}_server_cpu_us_per_req`] = round1(serverUs / n);
        if (dbUs !== null) figures[`${backend}_${name}_db_cpu_us_per_req`] = round1(dbUs / n);
        console.log(
          `${backend.padEnd(8)} ${name.padEnd(6)} ${Math.round(r.requests.average).toLocaleString('en').padStart(8)} req/s   p50 ${r.latency.p50} ms   p99 ${String(r.latency.p99).padStart(3)} ms   ` +
            `CPU/req: server ${round1(serverUs / n)} µs${dbUs !== null ? `, database ${round1(dbUs / n)} µs` : ''}`,
        );
      }
      if (cases.length === 3) {
        const ratio = (x: number) => Math.round(x * 1000) / 1000;
        for (const name of ['pixel', 'click']) {
          figures[`${backend}_${name}_ratio`] = ratio(rps[name]! / rps.bare!);
          // What the same CPU buys: the route's throughput as a share of the bare route's when CPU-bound.
          figures[`${backend}_${name}_cpu_ratio`] = ratio(cpu.bare! / cpu[name]!);
        }
        console.log(
          `${backend.padEnd(8)} throughput: pixel ${pct(rps.pixel! / rps.bare!)} and click ${pct(rps.click! / rps.bare!)} of the bare route; ` +
            `CPU per request: bare ${pct(cpu.bare! / cpu.pixel!)} of pixel's, ${pct(cpu.bare! / cpu.click!)} of click's`,
        );
      }
      console.log(
        `${backend.padEnd(8)} ${stats.eventsWritten.toLocaleString('en')} events written for ${answered.toLocaleString('en')} tracking requests answered (${sent.toLocaleString('en')} sent); dropped ${stats.dropped}, failed ${stats.failed}`,
      );
      if (stats.eventsWritten < answered - stats.dropped) throw new Error(`${backend}: ${answered - stats.eventsWritten} events lost`);
      figures[`${backend}_events_written`] = stats.eventsWritten;
      figures[`${backend}_tracking_requests_answered`] = answered;
      figures[`${backend}_events_dropped`] = stats.dropped;
      if (cases.length === 3) figures[`${backend}_target_met`] = rps.pixel! / rps.bare! >= 0.7 && rps.click! / rps.bare! >= 0.7;
    } finally {
      // On failure, closing the channel makes the server drop its database and exit; wait for it.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        if (child.connected) child.disconnect();
        await exited;
      }
    }
  }
  return figures;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

if (process.env[SERVER_ENV] && process.send) {
  const d = JSON.parse(process.env[SERVER_ENV]) as { backend: Backend; sends: number };
  serve(d.backend, d.sends).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
