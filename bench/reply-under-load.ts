/**
 * Reply to stop under load: in one process on a temporary PostgreSQL database, the sender role
 * (sending/sender-pool.ts: the day planner, paced claims, lease fences, compose, record) sends as
 * fast as its mailboxes' pacing lets it to an SMTP sink, the sync role (ingest/worker/sync-pool.ts)
 * watches mailboxes of the bed over IDLE and ingests a stream of mail injected into them, and
 * replies to recorded sends are injected on the bed; each reply is timed from just before its SMTP
 * injection to the commit of the batch that stopped its enrollment (promise 3's figure).
 *
 *   npm run bench -- reply-under-load [--senders=500] [--watched=500] [--ingest-rate=50] [--replies=20] [--round-s=60] [--rounds=3] [--watch-pull=0]
 *
 * - Sending: `--senders` mailboxes (SMTP to the sink, bench/lib/smtp-sink.ts, which greets at once;
 *   the server files the Sent copy), each with a pacing of one send per 10 s (the smallest gap
 *   pacing allows), a working day of the whole UTC day and caps of 1,000, and enough enrollments
 *   due now to keep sending through every round: the pool sends up to senders / 10 a second.
 * - Ingestion: `--ingest-rate` messages a second injected by SMTP (Postfix, LMTP, Dovecot) into
 *   random ones of `--watched` mailboxes (the bed's idle00001..), pulled on each IDLE push and
 *   ingested (parse, classify, thread, store) by the pool.
 * - Replies: `--replies` per round, evenly spread over the round, each to one send recorded in the
 *   bed mailbox idle10000@idle.test (watched too), from the lead, threaded by In-Reply-To.
 * Each round reports the sends/s the pool reached, the ingested messages/s, and reply-to-stop
 * p50 / p99 / max, and each reply's stages (injection -> IDLE push -> the pull yields it -> the
 * stop committed, from a wrapper around the hot mailbox's connector, bench/support/observed-sync.ts);
 * then the median and spread over rounds. `--watch-pull=0` pulls every push on a new connection,
 * as before issue 13 (pushes pulled on the watch's own connection is the default). After the run, exactly once: every
 * request recorded sent reached the sink once, no Message-ID twice. The load average is printed
 * before and after. (The machine's two cores also carry PostgreSQL, Postfix and Dovecot.)
 *
 * The day is the whole UTC day (00:05-23:55): a run across midnight UTC pauses sending for 10 minutes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { build as buildHistogram, type Histogram } from 'hdr-histogram-js';
import nodemailer from 'nodemailer';
import { systemClock } from '../src/common/clock.ts';
import { newId } from '../src/common/ids.ts';
import { seededRandom } from '../src/common/random.ts';
import type { IngestReport } from '../src/ingest/pipeline.ts';
import type { SyncPool } from '../src/ingest/worker/sync-pool.ts';
import { localKeyWrapper, Vault } from '../src/mailbox/vault.ts';
import { Metrics } from '../src/ops/metrics.ts';
import { applyDefinition } from '../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../src/sequence/definition.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { trackingKey } from '../src/sending/compose/tracking.ts';
import { SenderPool } from '../src/sending/sender-pool.ts';
import { replyMail, seedSentSequence } from '../test/ingest/seed-sent-sequence.ts';
import { bedEndpoint, idleUser, mailBed, startMailBed } from '../test/mail/mailbed.ts';
import { describeLoad, machineLoad } from './lib/rounds.ts';
import { flag, intFlag } from './lib/args.ts';
import { int, round } from './lib/format.ts';
import { startSmtpSink } from './lib/smtp-sink.ts';
import { spread, spreadText } from './lib/stats.ts';
import { benchStore } from './support/backends.ts';
import { benchSyncPool, connectBedMailboxes, watchedCount } from './support/bed-mailboxes.ts';
import { observedSync, quietObserver, type PullKind } from './support/observed-sync.ts';
import { createConnector } from '../src/mailbox/connectors/registry.ts';

const pacing = { dayStart: '00:05', dayEnd: '23:55', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [1 / 6, 1 / 6], spreadDay: false, hourlyCeiling: [1000, 1000], pickupMinutes: 0 };
const GAP_S = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The load average as every benchmark prints it (bench/lib/rounds.ts).
const load = () => describeLoad(machineLoad());
const hist = (): Histogram => buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });

export default async function replyUnderLoad(args: string[]): Promise<Record<string, unknown>> {
  const senders = intFlag(args, 'senders', 500);
  const watched = intFlag(args, 'watched', 500);
  const ingestRate = intFlag(args, 'ingest-rate', 50);
  const repliesPerRound = intFlag(args, 'replies', 20);
  const roundS = intFlag(args, 'round-s', 60);
  const rounds = intFlag(args, 'rounds', 3);
  // 0: every push pulled on a new connection, as before issue 13 (the comparison, same machine).
  const watchPullFlag = flag(args, 'watch-pull') ?? '1';
  if (watchPullFlag !== '0' && watchPullFlag !== '1') throw new Error(`--watch-pull must be 0 or 1, got ${watchPullFlag}`);
  const watchPull = watchPullFlag === '1';
  // PostgreSQL connections shared by the sender loops and the sync role: the production default.
  const poolSize = intFlag(args, 'pool', 10);
  const HOT = idleUser(mailBed.idleUsers);
  if (watched >= mailBed.idleUsers) throw new Error(`--watched: at most ${mailBed.idleUsers - 1} (the last idle mailbox takes the replies)`);
  const loadBefore = machineLoad().one;
  console.log(`load average before: ${load()}; pushes pulled ${watchPull ? 'on the watch connection' : 'on a new connection (--watch-pull=0)'}; ${senders} senders (up to ${senders / GAP_S} sends/s), ${watched} watched mailboxes with ${ingestRate} msg/s injected, ${repliesPerRound} replies a round, ${rounds} rounds of ${roundS} s, ${poolSize} PostgreSQL connections`);
  await startMailBed();
  const b = await benchStore('postgres', { poolSize });
  const sink = await startSmtpSink();
  const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 4 });
  let senderPool: SenderPool | null = null;
  let syncPool: SyncPool | null = null;
  try {
    const store = b.store;
    const random = seededRandom('reply-under-load');
    const master = randomBytes(32);
    const vault = new Vault(store, localKeyWrapper(master));
    const service = new EnrollmentService({ store, clock: systemClock, random });
    const tag = randomBytes(3).toString('hex');

    // Sending side: mailboxes, leads and one sequence over all of them, every first step due now.
    const t0 = performance.now();
    const ws = newId(Date.now(), random);
    await store.db.insertInto('workspace').values({ id: ws, name: 'senders', time_zone: 'UTC' }).execute();
    const smtpSettings = JSON.stringify({ smtp: { host: '127.0.0.1', port: sink.port, security: 'none' }, serverSavesSent: true, pacing });
    const senderIds = Array.from({ length: senders }, () => newId(Date.now(), random));
    const senderEmail = (i: number) => `rep${i}.${tag}@senders.test`;
    for (let i = 0; i < senders; i += 1000) {
      const rows = senderIds.slice(i, i + 1000).map((id, j) => ({ id, workspace_id: ws, email: senderEmail(i + j), provider: 'smtp_imap' as const, time_zone: 'UTC', daily_cap: 1000, ramp: JSON.stringify({ start: 1000, step: 0 }), settings: smtpSettings }));
      await store.db.insertInto('mailbox').values(rows).execute();
    }
    for (let i = 0; i < senders; i++) await vault.put(ws, senderIds[i]!, { kind: 'password', username: senderEmail(i), password: 'x' });
    const perSender = Math.ceil((rounds * roundS) / GAP_S) + 3;
    const leadIds = Array.from({ length: senders * perSender }, () => newId(Date.now(), random));
    for (let i = 0; i < leadIds.length; i += 5000) {
      const ids = leadIds.slice(i, i + 5000);
      const emails = ids.map((_, j) => `lead${i + j}.${tag}@sink.test`);
      await sql`insert into lead (id, workspace_id, email, email_norm, first_name, time_zone)
        select u.id, ${ws}, u.email, u.email, 'Pat', 'UTC' from unnest(${ids}::uuid[], ${emails}::text[]) as u(id, email)`.execute(store.db);
    }
    const def = validateDefinition({
      key: 'load',
      name: 'Load',
      window: 'any',
      holidays: false,
      jitter_minutes: 0,
      mailboxes: senderIds.map((_, i) => senderEmail(i)),
      steps: [
        { key: 'intro', type: 'email', subject: 'Hello {{first_name}}', body: 'Hi {{first_name}}, a word about your week.\n' },
        { key: 'bump', type: 'email', delay: '3 days', body: 'Bump' },
      ],
    });
    const seq = await applyDefinition(store, { clock: systemClock, random }, ws, def);
    for (let i = 0; i < leadIds.length; i += 10_000) await bulkEnroll(store, { clock: systemClock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leadIds.slice(i, i + 10_000) });
    while ((await service.fireDue(5_000)).length) {
      // every first step is due now
    }

    // Receiving side: the watched mailboxes, and the one whose recorded sends get the replies.
    const users = Array.from({ length: watched }, (_, i) => idleUser(i + 1));
    const { mailboxIds: watchedIds } = await connectBedMailboxes(store, vault, random, users);
    const replyLeads = Array.from({ length: rounds * repliesPerRound }, (_, i) => `r${i}.${tag}@prospects.test`);
    const hot = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: HOT, leads: replyLeads, tag, settings: { imap: bedEndpoint('imap') }, credential: { vault, username: HOT, password: 'pass' } });
    console.log(`seeded ${int(leadIds.length)} enrollments on ${senders} senders, ${watched} + 1 watched mailboxes, ${replyLeads.length} sends to reply to, in ${round((performance.now() - t0) / 1000, 1)} s`);

    const committed = new Map<string, (at: number, action: string, r: IngestReport) => void>();
    // Each reply's stages (performance.now()): the hot mailbox's IDLE push after its injection,
    // the pull that yielded it (and which pull), the commit.
    interface Stages { injectedAt: number; pushedAt: number | null; pulledAt: number | null; via: PullKind | null }
    const stages = new Map<string, Stages>();
    let awaitingPush: Stages[] = [];
    let ingested = 0;
    const metrics = new Metrics();
    syncPool = benchSyncPool({
      store,
      service,
      random,
      vault,
      metrics,
      mailboxIds: [...watchedIds, hot.mailboxId],
      connectorFor: (m, deps) => {
        const c = createConnector(m, deps, ['sync']);
        if (m.id !== hot.mailboxId) return watchPull ? c : observedSync(m.email, c, quietObserver, { watchPull });
        return observedSync(HOT, c, {
          pushed(_user, at) {
            for (const st of awaitingPush) st.pushedAt = at;
            awaitingPush = [];
          },
          pulled(messageId, at, via) {
            const st = stages.get(messageId);
            if (st && st.pulledAt === null) Object.assign(st, { pulledAt: at, via });
          },
          watching() {},
        }, { watchPull });
      },
      onBatch: (_id, r) => {
        const at = performance.now();
        for (const m of r.messages) {
          ingested++;
          committed.get(m.messageId)?.(at, m.action, r);
        }
      },
    });
    let sent = 0;
    senderPool = new SenderPool({
      store,
      service,
      clock: systemClock,
      random,
      vault,
      trackingKey: trackingKey(master),
      publicUrl: 'https://cadenza.bench.test',
      mailboxIds: senderIds,
      onStep: (_id, r) => {
        if (r.kind === 'sent') sent++;
      },
    });
    const ready = performance.now();
    await syncPool.start();
    while ((await watchedCount(store)) < watched + 1 && performance.now() - ready < 600_000) await sleep(500);
    console.log(`sync role: ${watched + 1} mailboxes watched in ${round((performance.now() - ready) / 1000, 1)} s`);
    await senderPool.start();

    const perRound: Array<{ sendsPerS: number; ingestedPerS: number; stop: Histogram; toPush: Histogram; toPull: Histogram; toCommit: Histogram; toPrepared: Histogram; toStarted: Histogram; inTx: Histogram; onWatch: number; missed: number }> = [];
    let replyNo = 0;
    for (let r = 0; r < rounds; r++) {
      const start = performance.now();
      const sent0 = sent;
      const ingested0 = ingested;
      const stop = hist();
      const toPush = hist();
      const toPull = hist();
      const toCommit = hist();
      const toPrepared = hist();
      const toStarted = hist();
      const inTx = hist();
      let onWatch = 0;
      let missed = 0;
      const waits: Promise<void>[] = [];
      let streamed = 0;
      let nextReply = 0;
      // One clock for both streams: the ingestion stream at its rate, the replies spread over the round.
      while (performance.now() - start < roundS * 1000) {
        const elapsed = performance.now() - start;
        while (streamed < (elapsed / 1000) * ingestRate) {
          const user = users[random.int(0, watched - 1)]!;
          const id = `<${randomUUID()}@stream.bench.test>`;
          streamed++;
          void smtp.sendMail({ envelope: { from: 'someone@example.test', to: [user] }, raw: `From: someone@example.test\r\nTo: ${user}\r\nSubject: news\r\nMessage-ID: ${id}\r\n\r\nhello\r\n` }).catch((e: Error) => console.log(`stream injection failed: ${e.message}`));
        }
        if (nextReply < repliesPerRound && elapsed >= (nextReply * roundS * 1000) / repliesPerRound) {
          nextReply++;
          const x = hot.sends[replyNo++]!;
          const messageId = `<reply-${replyNo}-${tag}@prospects.test>`;
          const injectedAt = performance.now();
          const st: Stages = { injectedAt, pushedAt: null, pulledAt: null, via: null };
          stages.set(messageId, st);
          awaitingPush.push(st);
          waits.push(
            new Promise<void>((resolve) => {
              const timer = setTimeout(() => {
                committed.delete(messageId);
                missed++;
                console.log(`  reply ${messageId} not committed within 30 s`);
                resolve();
              }, 30_000);
              committed.set(messageId, (at, action, report) => {
                clearTimeout(timer);
                committed.delete(messageId);
                if (action === 'reply') {
                  stop.recordValue(Math.max(1, Math.round(at - injectedAt)));
                  // Per stage: injection -> push (Postfix, LMTP, Dovecot's notify delay), push ->
                  // the pull yields it (the pull's wait and round trips), -> the commit (prepare
                  // pool, then the batch's transaction). A reply pulled by a pull it did not push
                  // (another push or a reconciliation) counts its push stage as absent.
                  if (st.pushedAt !== null && st.pulledAt !== null && st.pushedAt <= st.pulledAt) {
                    toPush.recordValue(Math.max(1, Math.round(st.pushedAt - injectedAt)));
                    toPull.recordValue(Math.max(1, Math.round(st.pulledAt - st.pushedAt)));
                  }
                  if (st.pulledAt !== null) {
                    toCommit.recordValue(Math.max(1, Math.round(at - st.pulledAt)));
                    // The batch's own timeline (wall clock ms, to this clock): CPU stages in the
                    // prepare pool, waiting for the loop's previous commit, the transaction.
                    const perf = (wallMs: number) => wallMs - performance.timeOrigin;
                    toPrepared.recordValue(Math.max(1, Math.round(perf(report.preparedAt) - st.pulledAt)));
                    toStarted.recordValue(Math.max(1, Math.round(report.startedAt - report.preparedAt)));
                    inTx.recordValue(Math.max(1, Math.round(report.committedAt - report.startedAt)));
                  }
                  if (st.via === 'watch') onWatch++;
                } else {
                  missed++;
                  console.log(`  reply ${messageId} was ingested as ${action}, not a reply`);
                }
                resolve();
              });
            }),
          );
          void smtp.sendMail({ envelope: { from: x.leadEmail, to: [HOT] }, raw: replyMail({ from: x.leadEmail, to: HOT, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Thanks, call me tomorrow.', messageId }) }).catch((e: Error) => console.log(`reply injection failed: ${e.message}`));
        }
        await sleep(10);
      }
      const seconds = (performance.now() - start) / 1000;
      const f = { sendsPerS: (sent - sent0) / seconds, ingestedPerS: (ingested - ingested0) / seconds, stop, toPush, toPull, toCommit, toPrepared, toStarted, inTx, onWatch: 0, missed: 0 };
      await Promise.all(waits);
      f.missed = missed;
      f.onWatch = onWatch;
      perRound.push(f);
      const pp = (h: Histogram) => (h.totalCount ? `${h.getValueAtPercentile(50)} / ${h.getValueAtPercentile(99)}` : '-');
      console.log(`round ${r + 1}: ${round(f.sendsPerS, 1)} sends/s, ${round(f.ingestedPerS, 1)} messages ingested/s; reply -> stop p50 ${stop.getValueAtPercentile(50)} / p99 ${stop.getValueAtPercentile(99)} / max ${stop.maxValue} ms (${stop.totalCount}, missed ${missed}); load ${load()}`);
      console.log(`  stages p50 / p99 ms: injection -> push ${pp(toPush)}, push -> pulled ${pp(toPull)}, pulled -> committed ${pp(toCommit)} (prepared ${pp(toPrepared)}, waiting for the previous commit ${pp(toStarted)}, transaction ${pp(inTx)}); ${onWatch} of ${stop.totalCount} pulled on the watch connection`);
    }

    await senderPool.stop();
    senderPool = null;
    await syncPool.stop();
    syncPool = null;
    // Exactly once: each request recorded sent reached the sink once.
    const recorded = Number((await store.db.selectFrom('send_request').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', ws).where('state', '=', 'sent').executeTakeFirstOrThrow()).n);
    const twice = [...sink.messageIds.values()].filter((c) => c > 1).length;
    const stopped = Number((await store.db.selectFrom('enrollment').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', hot.workspaceId).where('state', '=', 'replied').executeTakeFirstOrThrow()).n);
    console.log(`exactly once: ${int(recorded)} recorded sent, ${int(sink.received)} received by the sink, ${twice} Message-IDs twice; ${stopped} of ${replyNo} replied enrollments stopped (state replied)`);
    if (recorded !== sink.received || twice > 0) throw new Error(`exactly-once broken: ${recorded} recorded, ${sink.received} received, ${twice} twice`);

    const sp = (pick: (f: (typeof perRound)[number]) => number) => spread(perRound.map(pick));
    const p50 = sp((f) => (f.stop.totalCount ? f.stop.getValueAtPercentile(50) : NaN));
    const p99 = sp((f) => (f.stop.totalCount ? f.stop.getValueAtPercentile(99) : NaN));
    const max = sp((f) => (f.stop.totalCount ? f.stop.maxValue : NaN));
    const sends = sp((f) => f.sendsPerS);
    const ing = sp((f) => f.ingestedPerS);
    const missed = perRound.reduce((a, f) => a + f.missed, 0);
    const stage = (pick: (f: (typeof perRound)[number]) => Histogram, p: number) => sp((f) => (pick(f).totalCount ? pick(f).getValueAtPercentile(p) : NaN));
    const stageLines: Array<[string, string, (f: (typeof perRound)[number]) => Histogram]> = [
      ['injection -> IDLE push', 'push', (f) => f.toPush],
      ['push -> the pull yields it', 'pull', (f) => f.toPull],
      ['pulled -> stop committed', 'commit', (f) => f.toCommit],
      ['  pulled -> prepared', 'prepare', (f) => f.toPrepared],
      ['  prepared -> tx begins', 'queue', (f) => f.toStarted],
      ['  the transaction', 'tx', (f) => f.inTx],
    ];
    const onWatch = perRound.reduce((a, f) => a + f.onWatch, 0);
    console.log(`\nreply stages, median (min–max) over rounds; ${onWatch} of ${perRound.reduce((a, f) => a + f.stop.totalCount, 0)} replies pulled on the watch connection:`);
    for (const [label, , pick] of stageLines) console.log(`  ${label.padEnd(28)} p50 ${spreadText(stage(pick, 50))} ms, p99 ${spreadText(stage(pick, 99))} ms`);
    console.log(`\nmedian (min–max) over ${rounds} rounds: sends/s ${spreadText(sends, 1)}, ingested/s ${spreadText(ing, 1)}; reply -> stop p50 ${spreadText(p50)} ms, p99 ${spreadText(p99)} ms, max ${spreadText(max)} ms; missed ${missed}`);
    console.log(`load average after: ${load()}`);
    return {
      senders,
      watched,
      watch_pull: watchPull,
      pool_size: poolSize,
      ingest_rate_per_s: ingestRate,
      replies: replyNo,
      rounds,
      round_s: roundS,
      load_before: round(loadBefore, 2),
      load_after: round(machineLoad().one, 2),
      sends_per_s: round(sends.median, 1),
      sends_per_s_min: round(sends.min, 1),
      sends_per_s_max: round(sends.max, 1),
      ingested_per_s: round(ing.median, 1),
      ingested_per_s_min: round(ing.min, 1),
      ingested_per_s_max: round(ing.max, 1),
      stop_p50_ms: p50.median,
      stop_p50_min_ms: p50.min,
      stop_p50_max_ms: p50.max,
      stop_p99_ms: p99.median,
      stop_p99_min_ms: p99.min,
      stop_p99_max_ms: p99.max,
      stop_max_ms: max.median,
      ...Object.fromEntries(stageLines.flatMap(([, key, pick]) => [[`${key}_p50_ms`, stage(pick, 50).median], [`${key}_p99_ms`, stage(pick, 99).median]])),
      pulled_on_watch: onWatch,
      missed,
      replied_enrollments: stopped,
      recorded_sent: recorded,
      sink_received: sink.received,
      duplicates: twice,
      sync_errors: (await metrics.syncErrors.get()).values.reduce((a, v) => a + v.value, 0),
    };
  } finally {
    await senderPool?.stop().catch(() => undefined);
    await syncPool?.stop().catch(() => undefined);
    smtp.close();
    await sink.close();
    await b.drop();
  }
}
