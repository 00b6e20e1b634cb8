/**
 * Ingestion throughput: how many inbound messages a second one process turns into durable signals,
 * on the production path: the mailbox loop (src/ingest/worker/mailbox-loop.ts) pulling from a
 * connector, the CPU stages in the prepare pool's worker threads, the next batch prepared while the
 * current one commits, the real store, the sync lease as the fence in every batch's transaction,
 * the engine stopping enrollments.
 *
 *   npm run bench -- ingest [--messages=2000] [--single-messages=400] [--rounds=5] [--batch=100]
 *                           [--backends=pglite,postgres] [--threads=N] [--prepared=256]
 *
 * Input: a realistic mix (bench/lib/mail-mix.ts, built from the shared corpora: replies with HTML
 * parts, quoted history and signatures, out-of-office notes and bounces answering our sends, other
 * mail), every answering message against a send recorded beforehand, so each acts on a live
 * enrollment. The connector yields it from memory (bench/lib/memory-sync.ts); the IMAP connector
 * is measured by imap-idle. Per backend, two modes: batches of `--batch` and one message per batch
 * (an IDLE arrival). A warm-up round, then `--rounds` rounds, each on fresh enrollments; reported:
 * median and min-max msg/s, SQL statements per message (BEGIN/COMMIT not counted), the main
 * thread's busy time per message (event-loop utilisation: the rest is waiting for the database and
 * the pool), what acted.
 * In the same run, the anchor: the CPU stages alone through the same prepare pool, no database.
 * The machine's load average is printed before and after.
 *
 * With `--mailboxes=N` (or `--mailboxes N`), also reply-to-stop under load, on PostgreSQL and the
 * mail bed: one SyncPool watching N load mailboxes (load0001..@load.test) over IDLE plus one
 * mailbox with recorded sends (sync14@inbox.test); `--stop-replies` replies (default 30) are
 * injected by SMTP one after the other, each timed from just before the injection to the commit of
 * its enrollment's stop. Memory per watched mailbox is RSS and heap after full collections, minus
 * the same before the pool started, over N + 1.
 */
import { randomBytes } from 'node:crypto';
import { performance as perfHooks } from 'node:perf_hooks';
import { build as buildHistogram } from 'hdr-histogram-js';
import nodemailer from 'nodemailer';
import { systemClock } from '../src/common/clock.ts';
import { newId } from '../src/common/ids.ts';
import { SyncPool } from '../src/ingest/worker/sync-pool.ts';
import { MailboxLoop } from '../src/ingest/worker/mailbox-loop.ts';
import { PreparePool } from '../src/ingest/worker/prepare-pool.ts';
import { localKeyWrapper, Vault } from '../src/mailbox/vault.ts';
import { bedEndpoint, mailBed, resetMailBed, startMailBed } from '../test/mail/mailbed.ts';
import { CORPORA } from '../test/corpora/location.ts';
import { collect } from './lib/memory.ts';
import { cpuBetween, databaseCpu } from './lib/cpu.ts';
import { seededRandom } from '../src/common/random.ts';
import type { IngestReport } from '../src/ingest/pipeline.ts';
import { replyMail, seedSentSequence, type SeededSend } from '../test/ingest/seed-sent-sequence.ts';
import type { FetchedMessage } from '../src/mailbox/sync/source.ts';
import { Leases } from '../src/ops/leases.ts';
import { Metrics } from '../src/ops/metrics.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { flag, intFlag } from './lib/args.ts';
import { bytes, int, round } from './lib/format.ts';
import { describeLoad, loadFigures, machineLoad } from './lib/rounds.ts';
import { buildMix, describeMix, loadMixSources, type MixMessage, type MixSources } from './lib/mail-mix.ts';
import { MemorySync } from './lib/memory-sync.ts';
import { countingStore } from '../test/counting-store.ts';
import { median } from './lib/stats.ts';
import { benchStore, preparedFlag } from './support/backends.ts';

const MAILBOX = 'rep@cadenza.test';


export default async function ingest(args: string[]): Promise<Record<string, unknown>> {
  const batchN = intFlag(args, 'messages', 2000);
  const singleN = intFlag(args, 'single-messages', 400);
  const rounds = intFlag(args, 'rounds', 5);
  const batchSize = intFlag(args, 'batch', 100);
  const backends = (flag(args, 'backends') ?? 'pglite,postgres').split(',').filter((b): b is 'pglite' | 'postgres' => b === 'pglite' || b === 'postgres');
  const before = machineLoad();
  const figures: Record<string, unknown> = { rounds, batch: batchSize, messages_batched: batchN, messages_single: singleN, prepared: preparedFlag(args).preparedStatements ?? 'default' };
  console.log(`before: ${describeLoad(before)}`);
  const src = loadMixSources(CORPORA);
  if (!src) throw new Error('the corpora are needed for the mix (../shared/corpora, or CADENZA_CORPORA)');
  const pool = new PreparePool(flag(args, 'threads') ? { size: intFlag(args, 'threads', 1) } : {});
  figures.prepare_threads = pool.size;
  try {
    // The anchor, in the same run: the CPU stages alone through the same pool.
    const sample = buildMix(src, batchN, fakeSends(batchN), MAILBOX, seededRandom('mix-sample'));
    const shape = describeMix(sample);
    Object.assign(figures, Object.fromEntries(Object.entries(shape).map(([k, v]) => [`mix_${k}`, v])));
    console.log(`mix: ${JSON.stringify(shape)}`);
    const cpu: number[] = [];
    for (let r = 0; r <= rounds; r++) {
      const t0 = performance.now();
      await Promise.all(sample.map((m) => pool.prepare(m.raw)));
      if (r > 0) cpu.push((sample.length / (performance.now() - t0)) * 1000);
    }
    report(figures, 'cpu_prepare_pool', cpu, `CPU stages alone (parse + new text + classify) in ${pool.size} prepare thread(s)`);

    for (const backend of backends) {
      const b = await benchStore(backend, preparedFlag(args));
      try {
        await runBackend(b.store, backend, src, pool, { batchN, singleN, rounds, batchSize }, figures);
      } finally {
        await b.drop();
      }
    }
  } finally {
    await pool.close();
  }
  const n = mailboxesFlag(args);
  if (n > 0) Object.assign(figures, await underLoad(n, intFlag(args, 'stop-replies', 30)));
  const after = machineLoad();
  console.log(`after: ${describeLoad(after)}`);
  Object.assign(figures, loadFigures(before, after));
  return figures;
}

/** Sends for the CPU sample, which threads nothing. */
function fakeSends(n: number): SeededSend[] {
  return Array.from({ length: n }, (_, i) => ({ enrollmentId: '', leadEmail: `p${i}@acme${i % 50}.test`, sendRequestId: '', messageId: `<s${i}@cadenza.test>`, subject: 'Quick question' }));
}

function report(figures: Record<string, unknown>, key: string, rates: number[], what: string): void {
  const med = median(rates);
  figures[`${key}_msgs_per_s`] = Math.round(med);
  figures[`${key}_min`] = Math.round(Math.min(...rates));
  figures[`${key}_max`] = Math.round(Math.max(...rates));
  console.log(`${what}: median ${int(med)} msg/s (min ${int(Math.min(...rates))}, max ${int(Math.max(...rates))}, ${rates.length} rounds)`);
}

interface Sizes {
  batchN: number;
  singleN: number;
  rounds: number;
  batchSize: number;
}

async function runBackend(raw: Awaited<ReturnType<typeof benchStore>>['store'], backend: string, src: MixSources, pool: PreparePool, o: Sizes, figures: Record<string, unknown>): Promise<void> {
  const counted = countingStore(raw);
  const store = counted.store;
  const random = seededRandom(`bench-ingest-${backend}`);
  const service = new EnrollmentService({ store, clock: systemClock, random });
  // Every answering message needs a live enrollment of its own: seed for every round (and the warm-up) of both modes.
  const need = Math.ceil((o.batchN + o.singleN) * (o.rounds + 1) * 0.8);
  const seedStart = performance.now();
  const s = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: MAILBOX, leads: Array.from({ length: need }, (_, i) => `p${i}@acme${i % 97}.test`), tag: 'bench' });
  console.log(`${backend}: seeded ${int(s.sends.length)} sent enrollments in ${round((performance.now() - seedStart) / 1000)} s`);
  const lease = await new Leases(store, systemClock).acquire(`sync:${s.mailboxId}`, 'bench', 3_600_000);
  if (!lease) throw new Error('the bench could not take its own sync lease');
  const ingest = { store, service, clock: systemClock, random, steps: pool.steps(), metrics: new Metrics() };
  let used = 0;
  for (const [mode, n, size] of [['batched', o.batchN, o.batchSize], ['single', o.singleN, 1]] as const) {
    const rates: number[] = [];
    let statements = 0;
    let messages = 0;
    // The main thread's busy time (event-loop utilisation): what the pipeline costs there, apart from waiting.
    let mainMs = 0;
    // The CPU of this database's PostgreSQL backends (lib/cpu.ts databaseCpu), null on PGlite.
    let pgMs: number | null = backend === 'postgres' ? 0 : null;
    const acted = new Map<string, number>();
    for (let r = 0; r <= o.rounds; r++) {
      const mix = buildMix(src, n, s.sends.slice(used), MAILBOX, seededRandom(`mix-${backend}-${mode}-${r}`));
      used += mix.filter((m) => m.answers).length;
      const run = `${mode}-${r}`;
      const fetched: FetchedMessage[] = mix.map((m: MixMessage, i) => ({ key: `INBOX:${run}:${i}`, folder: 'inbox', raw: m.raw, threadId: null, receivedAt: Date.now() }));
      const reports: IngestReport[] = [];
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      let seen = 0;
      const loop = new MailboxLoop({
        ingest,
        mailbox: { id: s.mailboxId, workspaceId: s.workspaceId, provider: 'smtp_imap' },
        connector: new MemorySync(fetched, run),
        fence: { resource: lease.resource, token: lease.token },
        clock: systemClock,
        random,
        reconcileMs: 3_600_000,
        batchSize: size,
        onBatch: (report) => {
          reports.push(report);
          seen += report.messages.length + report.quarantined;
          if (seen >= fetched.length) done();
        },
      });
      const pg0 = pgMs === null ? null : await databaseCpu(raw);
      const before = counted.statements();
      const elu0 = perfHooks.eventLoopUtilization();
      const t0 = performance.now();
      const running = loop.run();
      await all;
      const ms = performance.now() - t0;
      const busy = perfHooks.eventLoopUtilization(elu0).active;
      const stmts = counted.statements() - before;
      const pgUsed = pg0 === null ? null : cpuBetween(pg0, await databaseCpu(raw));
      loop.stop();
      await running;
      if (r === 0) continue; // warm-up
      rates.push((fetched.length / ms) * 1000);
      mainMs += busy;
      if (pgMs !== null) pgMs = pgUsed === null ? null : pgMs + pgUsed;
      statements += stmts;
      messages += fetched.length;
      for (const rep of reports) for (const m of rep.messages) if (m.inserted && m.enrollmentId) acted.set(m.action, (acted.get(m.action) ?? 0) + 1);
    }
    const key = `${backend}_${mode}`;
    report(figures, key, rates, `${backend}, ${mode === 'batched' ? `batches of ${o.batchSize}` : 'one message per batch'}, ${int(n)} messages a round`);
    figures[`${key}_statements_per_msg`] = round(statements / messages, 2);
    figures[`${key}_main_thread_ms_per_msg`] = round(mainMs / messages, 3);
    if (pgMs !== null) figures[`${key}_pg_cpu_ms_per_msg`] = round(pgMs / messages, 3);
    figures[`${key}_acted_per_round`] = Object.fromEntries([...acted].map(([k, v]) => [k, Math.round(v / o.rounds)]));
    console.log(`  ${round(statements / messages, 2)} SQL statements a message; main thread busy ${round(mainMs / messages, 3)} ms a message${pgMs === null ? '' : `; PostgreSQL CPU ${round(pgMs / messages, 3)} ms a message`}; acted per round: ${JSON.stringify(figures[`${key}_acted_per_round`])}`);
  }
}

function mailboxesFlag(args: string[]): number {
  const i = args.indexOf('--mailboxes');
  if (i >= 0 && args[i + 1] && !args[i + 1]!.startsWith('--')) return intFlag([`--mailboxes=${args[i + 1]}`], 'mailboxes', 0);
  return flag(args, 'mailboxes') === undefined ? 0 : intFlag(args, 'mailboxes', 0);
}

async function underLoad(n: number, replies: number): Promise<Record<string, unknown>> {
  await startMailBed();
  const HOT = 'sync14@inbox.test';
  await resetMailBed([HOT]);
  const b = await benchStore('postgres');
  const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
  try {
    const store = b.store;
    const random = seededRandom('bench-ingest-load');
    const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    const service = new EnrollmentService({ store, clock: systemClock, random });
    const tag = randomBytes(3).toString('hex');
    const s = await seedSentSequence(store, { clock: systemClock, random, service }, {
      mailboxEmail: HOT,
      leads: Array.from({ length: replies }, (_, i) => `l${i}.${tag}@prospects.test`),
      tag,
      settings: { imap: bedEndpoint('imap') },
      credential: { vault, username: HOT, password: 'pass' },
    });
    const ws = newId(Date.now(), random);
    await store.db.insertInto('workspace').values({ id: ws, name: 'load' }).execute();
    const ids = [s.mailboxId];
    for (let i = 1; i <= n; i++) {
      const id = newId(Date.now(), random);
      const user = `load${String(i).padStart(4, '0')}@load.test`;
      await store.db.insertInto('mailbox').values({ id, workspace_id: ws, email: user, provider: 'smtp_imap', settings: JSON.stringify({ imap: bedEndpoint('imap') }) }).execute();
      await vault.put(ws, id, { kind: 'password', username: user, password: 'pass' });
      ids.push(id);
    }
    collect();
    const before = process.memoryUsage();
    const stops = new Map<string, (at: number) => void>();
    const metrics = new Metrics();
    const pool = new SyncPool({
      metrics,
      store,
      service,
      clock: systemClock,
      random,
      vault,
      mailboxIds: ids,
      // Earlier runs' mail in the load mailboxes is not this run's business.
      resyncWindowMs: 60_000,
      leaseTtlMs: 120_000,
      onBatch: (_mb, r) => {
        const at = Date.now();
        for (const m of r.messages) stops.get(m.messageId)?.(at);
      },
    });
    const t0 = Date.now();
    await pool.start();
    const synced = async () => Number((await store.db.selectFrom('mailbox_sync').select((eb) => eb.fn.countAll<number>().as('c')).where('cursor', 'is not', null).executeTakeFirstOrThrow()).c);
    while ((await synced()) < ids.length && Date.now() - t0 < 600_000) await new Promise((r) => setTimeout(r, 500));
    const readyS = (Date.now() - t0) / 1000;
    console.log(`load: ${int(pool.mailboxes.length)} mailboxes owned, ${int(await synced())} with a cursor after ${round(readyS)} s`);
    await new Promise((r) => setTimeout(r, 5_000));
    collect();
    const after = process.memoryUsage();
    const perRss = (after.rss - before.rss) / ids.length;
    const perHeap = (after.heapUsed + after.external - before.heapUsed - before.external) / ids.length;
    console.log(`load: memory per watched mailbox: rss ${bytes(perRss)}, heap+external ${bytes(perHeap)}`);
    const h = buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
    let missed = 0;
    const slow: string[] = [];
    for (let i = 0; i < s.sends.length; i++) {
      const x = s.sends[i]!;
      const messageId = `<load-${i}-${tag}@prospects.test>`;
      const seen = new Promise<number | null>((resolve) => {
        const t = setTimeout(() => resolve(null), 30_000);
        stops.set(messageId, (at) => {
          clearTimeout(t);
          resolve(at);
        });
      });
      const start = Date.now();
      await smtp.sendMail({ envelope: { from: x.leadEmail, to: [HOT] }, raw: replyMail({ from: x.leadEmail, to: HOT, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Thanks, call me.', messageId }) });
      const at = await seen;
      if (at === null) missed++;
      else h.recordValue(Math.max(1, at - start));
      if (at === null || at - start > 2_000) slow.push(`#${i} ${at === null ? 'missed' : `${at - start} ms`}`);
    }
    const errors = (await metrics.syncErrors.get()).values.reduce((a, v) => a + v.value, 0);
    const hot = await store.db.selectFrom('mailbox_sync').select(['last_error', 'last_error_at']).where('mailbox_id', '=', s.mailboxId).executeTakeFirst();
    console.log(`load: sync errors during the run ${errors}; the measured mailbox's last error: ${hot?.last_error ?? 'none'}${slow.length ? `; slow: ${slow.join(', ')}` : ''}`);
    await pool.stop();
    const fig = { p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99), max: h.maxValue };
    console.log(`load: reply-to-stop with ${int(n)} watched load mailboxes, n=${h.totalCount} (missed ${missed}): p50 ${fig.p50} ms, p99 ${fig.p99} ms, max ${fig.max} ms`);
    return {
      load_mailboxes: n,
      load_ready_s: round(readyS),
      load_rss_bytes_per_mailbox: Math.round(perRss),
      load_heap_bytes_per_mailbox: Math.round(perHeap),
      load_replies: h.totalCount,
      load_missed: missed,
      load_sync_errors: errors,
      load_stop_p50_ms: fig.p50,
      load_stop_p99_ms: fig.p99,
      load_stop_max_ms: fig.max,
    };
  } finally {
    smtp.close();
    await b.drop();
  }
}
