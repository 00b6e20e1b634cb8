import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { build as buildHistogram, type Histogram } from 'hdr-histogram-js';
import { newId } from '../../src/common/ids.ts';
import { seededRandom, type Random } from '../../src/common/random.ts';
import { AcceleratedClock } from '../../src/demo/demo-clock.ts';
import { startEmulatedProviders, type EmulatedProviders } from '../../src/demo/emulated-providers.ts';
import { addDemoMailbox } from '../../src/demo/workspace.ts';
import { SyncPool } from '../../src/ingest/worker/sync-pool.ts';
import type { ConnectorSetup } from '../../src/mailbox/connectors/connector.ts';
import { PushRegistry } from '../../src/mailbox/sync/push-registry.ts';
import { RelayedPushRegistry } from '../../src/mailbox/sync/push-relay.ts';
import { postgresPushBus, type PushBus } from '../../src/ops/push-bus.ts';
import { WorkNudges } from '../../src/ops/work-nudge.ts';
import { gmailPushRoutes } from '../../src/mailbox/sync/push-routes.ts';
import { localKeyWrapper, Vault } from '../../src/mailbox/vault.ts';
import { SenderPool } from '../../src/sending/sender-pool.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import { Scheduler } from '../../src/sequence/scheduler.ts';
import { ensureEventPartitions } from '../../src/store/partitions.ts';
import type { Logger } from '../../src/common/logger.ts';
import type { Store } from '../../src/store/store.ts';
import { cpuBetween, databaseCpu } from '../../bench/lib/cpu.ts';
import { replyMail } from '../ingest/seed-sent-sequence.ts';
import { roleDeps, senderTuning, syncTuning } from './day-load-roles.ts';
import type { ToParent, ToWorker, WorkerSettings } from './day-load-worker.ts';

/**
 * A working day of an installation on one process, on the production parts: `mailboxes` Gmail
 * mailboxes (on the Gmail emulator, through the registry's Gmail connector: users.messages.send,
 * users.watch with Pub/Sub push to the push route on loopback, history.list) in workspaces of 100,
 * each workspace one three-email sequence (a follow-up 2 hours after each email) over its
 * mailboxes, enough leads for `sends` emails; the scheduler, the sender pool (day planner, paced
 * claims, leases) and the sync pool (push, pipeline) run on an accelerated clock from 05:00 UTC on
 * a weekday to 19:00 (the sync pool first, the senders once every mailbox is synced), under the
 * default pacing (a working day of 08:40-17:20 with jitter and lunch, gaps of 8-15 minutes
 * stretched over the day, 30 a day per mailbox).
 *
 * The prospects: a share reply to their first email after 10 minutes to 3 hours; at 13:00 a storm
 * of `storm` replies arrives at once. Each reply is timed from its delivery to the emulator to the
 * commit of the batch that stopped its enrollment (real ms).
 *
 * Checked: no Message-ID reached the emulator's Sent twice; no follow-up recorded after its
 * enrollment's reply was stored. Measured: the sends and the day's plan (planned slot to sent, in
 * simulated minutes), reply-to-stop p50/p99/max (HDR), this process's CPU and peak RSS, and the
 * CPU of the PostgreSQL backends on the run's database.
 *
 * Real-time budgets (leases, idle polls, the planner's pass) are given in real seconds through the
 * clock's realMs, as the demo does (src/demo/run-demo.ts).
 */
export interface DayLoadOptions {
  store: Store;
  mailboxes: number;
  sends: number;
  /** Simulated ms per real ms (default 60: the 12-hour day in 12 real minutes). */
  rate?: number;
  /**
   * The part of the day run (UTC hours on the simulated clock; default 5 to 19: the sync's start
   * three hours before the mailboxes' 08:00, and the whole sending day). A window of the morning
   * measures the peak hours at a clock slow enough for this machine; sends planned after its end
   * are left queued (sendsPlanned counts the whole day's).
   */
  window?: { fromHour: number; untilHour: number };
  /** Share of leads that reply to their first email (default 0.05). */
  replyShare?: number;
  /** Replies delivered at once at 13:00 (default 1% of the leads). */
  storm?: number;
  seed?: string;
  /** Called every real second with a line of progress. */
  onProgress?: (line: string) => void;
  /** Awaited once seeding is done, before the day starts (the benchmark resets its statement profile there). */
  onSeeded?: () => Promise<void>;
  /** The pools' logger (warnings and errors of the sender and sync roles). */
  log?: Logger;
  /**
   * The roles split over child processes (day-load-worker.ts), one entry per process with its
   * roles: this process then keeps the emulator, the push route and the scheduler, and the
   * children share the mailboxes through leases and the push bus. Needs `databaseUrl`.
   */
  workers?: Array<Array<'sender' | 'sync'>>;
  /** The store's database, for the children (PostgreSQL only). */
  databaseUrl?: string;
  /** PostgreSQL connections of each child (default 10, as `cadenza start`). */
  workerPoolSize?: number;
  /** The children's log level (default 'warn'). */
  workerLogLevel?: string;
}

/** One process of the run: CPU and peak RSS; the parent is the emulator, push route and scheduler. */
export interface ProcessFigures {
  name: string;
  roles: string[];
  cpuSeconds: number;
  peakRssMiB: number;
}

export interface DayLoadResult {
  mailboxes: number;
  leads: number;
  sendsPlanned: number;
  sent: number;
  /** Requests left in flight or unknown after the pools stopped (each should be settled). */
  unsettled: number;
  duplicates: number;
  /**
   * The requests behind Message-IDs that reached Sent twice, and those left unsettled (20 at most
   * each): their state, attempts, last error and the real ms between the two copies, so that a
   * duplicate says which path sent it again.
   */
  suspects: Array<{ messageId: string; copies: number; gapMs: number | null; state: string; attempts: number; lastError: string | null; proof: string | null }>;
  followUpsAfterReply: number;
  /**
   * For each email of ours that reached Sent after the prospect's reply was delivered to the
   * mailbox (before Cadenza read it, too), how long after (real ms). One already handed to the
   * provider when the reply landed is the race no sender can close; one sent seconds later is a
   * follow-up after a reply.
   */
  sentAfterReplyMs: number[];
  replies: number;
  repliesStopped: number;
  stormReplies: number;
  replyToStop: { p50: number; p99: number; max: number };
  /** The three slowest replies: real ms, when they were delivered (real s from the start, simulated time). */
  slowestReplies: Array<{ ms: number; atRealS: number; at: string }>;
  stormReplyToStop: { p50: number; p99: number; max: number };
  /** Planned slot to recorded sent, simulated minutes. */
  slotToSentMin: { p50: number; p99: number; max: number };
  realSeconds: number;
  seedSeconds: number;
  /** From the sync pool's start to every mailbox's first sync (real s; 600 when not all were done). */
  syncAllSeconds: number;
  syncedMailboxes: number;
  processCpuSeconds: number;
  databaseCpuSeconds: number | null;
  peakRssMiB: number;
  /** Sends a real second at the busiest simulated hour. */
  peakSendsPerRealSecond: number;
  /** With `workers`: each child, and this process ('parent'); without: this process alone. */
  processes: ProcessFigures[];
}

const HOUR = 3_600_000;
const WORKSPACE_SIZE = 100;

/** The next weekday (Monday to Friday) at `hour` UTC from `now`. */
function nextWorkdayMorning(now: number, hour: number): number {
  let t = Math.floor(now / 86_400_000) * 86_400_000 + hour * HOUR;
  if (t <= now) t += 86_400_000;
  while ([0, 6].includes(new Date(t).getUTCDay())) t += 86_400_000;
  return t;
}

const histogram = () => buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000, numberOfSignificantValueDigits: 3 });
const figures = (h: Histogram) => ({ p50: h.totalCount ? h.getValueAtPercentile(50) : Number.NaN, p99: h.totalCount ? h.getValueAtPercentile(99) : Number.NaN, max: h.totalCount ? h.maxValue : Number.NaN });

/** Our mail as it reaches the Sent folder: its recipient, Message-ID and whether it is a first email. */
function header(raw: Buffer, name: string): string | null {
  const head = raw.subarray(0, Math.min(raw.length, 8192)).toString('latin1');
  const m = new RegExp(`^${name}:[ \\t]*([^\\r\\n]*)`, 'im').exec(head);
  return m ? m[1]!.trim() : null;
}

export async function runDayLoad(o: DayLoadOptions): Promise<DayLoadResult> {
  const { store } = o;
  const rate = o.rate ?? 60;
  const seed = o.seed ?? 'day-load';
  const random: Random = seededRandom(seed);
  const fromHour = o.window?.fromHour ?? 5;
  const untilHour = o.window?.untilHour ?? 19;
  if (!(fromHour >= 0 && fromHour < untilHour && untilHour <= 24)) throw new Error(`day load: the window must run forwards within the day, got ${fromHour}:00 to ${untilHour}:00`);
  const start = nextWorkdayMorning(Date.now(), fromHour);
  const clock = new AcceleratedClock(start, rate);
  const real = (ms: number) => clock.realMs(ms);
  const leadsPerMailbox = Math.max(1, Math.round(o.sends / 3 / o.mailboxes));
  const replyShare = o.replyShare ?? 0.05;
  const tag = randomBytes(3).toString('hex');
  const seedStarted = performance.now();
  await ensureEventPartitions(store, clock.now());

  const sentIds = new Map<string, number>();
  /** Real ms of each Message-ID's first copy in Sent, for the gap to a second one. */
  const firstSentAt = new Map<string, number>();
  const secondGap = new Map<string, number>();
  let duplicates = 0;
  const firstTo: Array<{ lead: string; mailbox: string; messageId: string; subject: string }> = [];
  const replyAt = new Map<string, number>();
  /** Lead → when their reply was delivered to the mailbox (real ms): any of our mail to them after it is a follow-up after a reply. */
  const repliedLeads = new Map<string, number>();
  const sentAfterReplyMs: number[] = [];
  const storm = new Set<string>();
  const h = histogram();
  const hs = histogram();
  let stopping = false;
  let pendingReplies = 0;
  const slowest: Array<{ ms: number; atRealS: number; at: string }> = [];
  const sentPerRealSecond: number[] = [];
  let sentThisSecond = 0;

  const replyTo = (x: (typeof firstTo)[number]): Buffer =>
    Buffer.from(replyMail({ from: x.lead, to: x.mailbox, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Thanks, this looks interesting. Can we talk on Thursday?', messageId: `<r-${x.messageId.slice(1, -1).replace('@', '.')}@prospects.test>` }));
  let providers: EmulatedProviders | undefined;
  const timers: Array<{ cancel(): void }> = [];
  const deliverReply = async (x: (typeof firstTo)[number], inStorm: boolean) => {
    if (stopping || !providers) return;
    const raw = replyTo(x);
    const id = header(raw, 'Message-ID')!;
    if (replyAt.has(id)) return;
    if (inStorm) storm.add(id);
    // Wall time: the stop is committed in another process when the roles are split.
    replyAt.set(id, Date.now());
    await providers.deliver('gmail', x.mailbox, raw);
    repliedLeads.set(x.lead, performance.now());
  };

  providers = await startEmulatedProviders(clock, (m) => {
    const id = header(m.raw, 'Message-ID');
    if (!id) return;
    const n = (sentIds.get(id) ?? 0) + 1;
    sentIds.set(id, n);
    if (n === 1) firstSentAt.set(id, performance.now());
    else if (n === 2) secondGap.set(id, Math.round(performance.now() - firstSentAt.get(id)!));
    if (n > 1) duplicates++;
    sentThisSecond++;
    const subject = header(m.raw, 'Subject') ?? '';
    const to = /<([^>]+)>|([^\s,]+@[^\s,]+)/.exec(header(m.raw, 'To') ?? '');
    const lead = (to?.[1] ?? to?.[2] ?? '').toLowerCase();
    // Reached Sent after the prospect's reply was in the mailbox (the promise users fear most).
    const repliedAt = repliedLeads.get(lead);
    if (repliedAt !== undefined) sentAfterReplyMs.push(Math.round(performance.now() - repliedAt));
    if (/^re:/i.test(subject)) return;
    const x = { lead, mailbox: m.mailbox, messageId: id, subject };
    firstTo.push(x);
    if (random.next() < replyShare) {
      pendingReplies++;
      const t = clock.setTimer(10 * 60_000 + random.next() * (3 * HOUR - 10 * 60_000), () => {
        pendingReplies--;
        void deliverReply(x, false).catch(() => undefined);
      });
      timers.push(t);
    }
  });
  // Split over processes, as app.ts wires it: the push route relays to the mailbox's sync owner,
  // the scheduler's fired steps wake every dispatcher, over LISTEN/NOTIFY.
  if (o.workers && !o.databaseUrl) throw new Error('day load: workers need the database URL');
  const bus: PushBus | undefined = o.workers ? await postgresPushBus({ databaseUrl: o.databaseUrl!, store, clock, random: random.fork('bus') }) : undefined;
  const nudges = bus ? new WorkNudges({ origin: 'day-load-parent', bus }) : undefined;
  const pushSecret = `s${tag}`;
  const registry = bus ? new RelayedPushRegistry(bus, { origin: 'day-load-parent:push', secret: pushSecret }) : new PushRegistry();
  const children: Array<{ child: ChildProcess; ready: Promise<void>; stats: Promise<ProcessFigures | null> }> = [];
  /** Records a reply's stop, committed at wall time `at`. */
  const stopped = (messageId: string, at: number) => {
    const t = replyAt.get(messageId);
    if (t === undefined) return false;
    const ms = Math.max(1, Math.round(at - t));
    (storm.has(messageId) ? hs : h).recordValue(ms);
    slowest.push({ ms, atRealS: Math.round((t - runStartedWall) / 100) / 10, at: new Date(clock.now()).toISOString().slice(11, 16) });
    slowest.sort((a, b) => b.ms - a.ms).splice(3);
    return true;
  };
  let runStartedWall = Date.now();
  const api: FastifyInstance = Fastify();
  let senders: SenderPool | undefined;
  let syncs: SyncPool | undefined;
  let scheduler: Scheduler | undefined;
  let synced = 0;
  const rssTimer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    sentPerRealSecond.push(sentThisSecond);
    sentThisSecond = 0;
    void store.db
      .selectFrom('mailbox_sync')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('cursor', 'is not', null)
      .executeTakeFirst()
      .then((r) => void (synced = Number(r?.n ?? 0)), () => undefined);
    o.onProgress?.(`${new Date(clock.now()).toISOString().slice(11, 16)} UTC  sent ${sentIds.size}  synced mailboxes ${synced}  replies ${replyAt.size} (stopped ${h.totalCount + hs.totalCount})  rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB`);
  }, 1000);
  let peakRss = process.memoryUsage().rss;
  try {
    const verification = `v${tag}`;
    await api.register(gmailPushRoutes, { registry, verificationToken: verification });
    await api.listen({ host: '127.0.0.1', port: 0 });
    const origin = `http://127.0.0.1:${(api.server.address() as { port: number }).port}`;
    providers.gmail.pubsub.createPushSubscription({ topic: 'projects/load/topics/gmail', name: 'projects/load/subscriptions/cadenza', pushEndpoint: `${origin}/push/gmail?token=${verification}` });

    // Workspaces of 100 mailboxes, each with one sequence over its mailboxes and its leads.
    const master = randomBytes(32);
    const vault = new Vault(store, localKeyWrapper(master));
    const service = new EnrollmentService({ store, clock, random: random.fork('engine') });
    const ids = () => newId(clock.now(), random);
    const workspaces = Math.ceil(o.mailboxes / WORKSPACE_SIZE);
    let leadCount = 0;
    for (let w = 0; w < workspaces; w++) {
      const workspaceId = ids();
      await store.db.insertInto('workspace').values({ id: workspaceId, name: `load ${w}`, time_zone: 'UTC' }).execute();
      const emails: string[] = [];
      for (let i = w * WORKSPACE_SIZE; i < Math.min(o.mailboxes, (w + 1) * WORKSPACE_SIZE); i++) {
        const email = `rep${i}@load${w}.test`;
        providers.addMailbox('gmail', email);
        await addDemoMailbox(store, vault, ids(), workspaceId, { name: `Rep ${i}`, email, provider: 'gmail', zone: 'UTC' }, 30, providers.issueToken('gmail', email));
        emails.push(email);
      }
      const leads = Array.from({ length: emails.length * leadsPerMailbox }, (_, k) => ({ id: ids(), email: `p${k}.w${w}.${tag}@prospects.test` }));
      await store.db
        .insertInto('lead')
        .values(leads.map((l) => ({ id: l.id, workspace_id: workspaceId, email: l.email, email_norm: l.email, first_name: 'Pat', time_zone: 'UTC' })))
        .execute();
      leadCount += leads.length;
      const def = validateDefinition({
        key: `load-${w}`,
        name: `Load ${w}`,
        window: 'any',
        holidays: false,
        jitter_minutes: 0,
        mailboxes: emails,
        steps: [
          { key: 'intro', type: 'email', subject: 'A question about your outbound, {{first_name}}', body: 'Hi {{first_name}},\n\nHow do you handle follow-ups today?\n\n{{sender.first_name}}' },
          { key: 'bump', type: 'email', delay: '2 hours', body: 'Hi {{first_name}}, bumping this up.' },
          { key: 'last', type: 'email', delay: '2 hours', body: 'Last note from me, {{first_name}}.' },
        ],
      });
      const seq = await applyDefinition(store, { clock, random }, workspaceId, def);
      await bulkEnroll(store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds: leads.map((l) => l.id) });
      o.onProgress?.(`seeded workspace ${w + 1}/${workspaces}`);
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    await o.onSeeded?.();

    const connectors: ConnectorSetup = {
      tokens: (mailbox, credential) => providers!.tokenProvider('gmail', mailbox.email, credential.accessToken),
      baseUrls: { gmail: providers.gmail.baseUrl, graph: providers.graph.baseUrl },
      httpTimeoutMs: real(30_000),
      push: { registry, secret: pushSecret, gmailTopic: 'projects/load/topics/gmail' },
    };
    for (const [i, roles] of (o.workers ?? []).entries()) {
      const settings: WorkerSettings = {
        name: `w${i}-${roles.join('+')}`,
        roles,
        databaseUrl: o.databaseUrl!,
        poolSize: o.workerPoolSize ?? 10,
        masterHex: master.toString('hex'),
        pushSecret,
        gmailTopic: 'projects/load/topics/gmail',
        baseUrls: { gmail: providers.gmail.baseUrl, graph: providers.graph.baseUrl },
        simAt: clock.now(),
        wallAt: Date.now(),
        rate,
        seed,
        logLevel: o.workerLogLevel ?? 'warn',
      };
      const child = fork(fileURLToPath(new URL('./day-load-worker.ts', import.meta.url)), [], {
        env: { ...process.env, CADENZA_DAY_LOAD_WORKER: JSON.stringify(settings) },
        execArgv: process.execArgv.filter((a) => !a.startsWith('--cpu-prof') || process.env.CADENZA_DAY_LOAD_PROFILE_WORKERS === '1'),
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      let readyFn!: () => void;
      let statsFn!: (f: ProcessFigures | null) => void;
      const ready = new Promise<void>((r) => (readyFn = r));
      const stats = new Promise<ProcessFigures | null>((r) => (statsFn = r));
      child.on('message', (m: ToParent) => {
        if (m.t === 'ready') readyFn();
        else if (m.t === 'token') child.send({ t: 'token', id: m.id, token: providers!.issueToken('gmail', m.address) } satisfies ToWorker);
        else if (m.t === 'replies') for (const id of m.ids) stopped(id, m.at);
        else if (m.t === 'stats') statsFn({ name: m.name, roles: m.roles, cpuSeconds: m.cpuSeconds, peakRssMiB: m.peakRssMiB });
      });
      child.once('exit', (code) => {
        readyFn();
        statsFn(null);
        if (code) o.onProgress?.(`worker ${settings.name} exited with ${code}`);
      });
      children.push({ child, ready, stats });
    }
    await Promise.all(children.map((c) => c.ready));
    const cpu0 = process.cpuUsage();
    const db0 = await databaseCpu(store);
    const runStarted = performance.now();
    runStartedWall = Date.now();
    // As app.ts wires it: steps the scheduler fired are planned at once (a nudge), not at the planner's next pass.
    scheduler = new Scheduler({ store, service, clock, horizonMs: real(10_000), refillEveryMs: real(2_000), tickMs: real(20), onFired: () => (nudges ? nudges.nudge('requests') : void senders?.nudge()) });
    await scheduler.start();
    // In this process, or (workers) in the children.
    if (!o.workers) {
    syncs = new SyncPool({
      ...roleDeps({ store, service, clock, vault, master, connectors }),
      random: random.fork('sync'),
      ...syncTuning(clock),
      ...(o.log ? { log: o.log } : {}),
      onBatch: (_mailboxId, report) => {
        const now = Date.now();
        for (const m of report.messages) if (m.action === 'reply' && m.inserted) stopped(m.messageId, now);
      },
    });
    senders = new SenderPool({
      ...roleDeps({ store, service, clock, vault, master, connectors }),
      random: random.fork('senders'),
      ...senderTuning(clock),
      ...(o.log ? { log: o.log } : {}),
    });
    }
    // The sync role first, as a process that has run for a while has its watches and cursors: the
    // day starts once every mailbox is synced (or after 10 real minutes, the time it took being a
    // figure of its own), three simulated hours before the working day.
    await syncs?.start();
    const syncStarted = performance.now();
    while (synced < o.mailboxes && performance.now() - syncStarted < 600_000) await new Promise((r) => setTimeout(r, 1000));
    const syncAllSeconds = (performance.now() - syncStarted) / 1000;
    if (o.workers) for (const c of children) c.child.send({ t: 'senders' } satisfies ToWorker);
    else await senders?.start();

    // The storm at 13:00 (or, in a window that ends sooner, halfway through its sending hours),
    // then the day runs out at 19:00 (or the window's end).
    const day = start - fromHour * HOUR;
    const stormHour = untilHour > 13 ? 13 : (Math.max(fromHour, 8) + untilHour) / 2;
    const stormAt = day + stormHour * HOUR;
    const endAt = day + untilHour * HOUR;
    let stormed = false;
    while (clock.now() < endAt) {
      if (!stormed && clock.now() >= stormAt) {
        stormed = true;
        const pool = firstTo.filter((x) => !replyAt.has(header(replyTo(x), 'Message-ID')!));
        const n = Math.min(pool.length, o.storm ?? Math.round(leadCount / 100));
        const chosen = Array.from({ length: n }, (_, i) => pool[Math.floor((i * pool.length) / n)]!);
        await Promise.all(chosen.map((x) => deliverReply(x, true)));
      }
      await new Promise((r) => setTimeout(r, 200));
      // The day's work is done early when nothing is left to send before its end, no reply is
      // still to come, and every reply delivered was taken.
      if (stormed && pendingReplies === 0 && h.totalCount + hs.totalCount >= replyAt.size) {
        const left = await store.db
          .selectFrom('send_request')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where((eb) => eb.or([eb('state', 'in', ['in_flight', 'unknown']), eb.and([eb('state', '=', 'queued'), eb.or([eb('send_at', 'is', null), eb('send_at', '<', new Date(endAt))])])]))
          .executeTakeFirstOrThrow();
        if (Number(left.n) === 0) break;
      }
    }
    stopping = true;
    for (const t of timers) t.cancel();
    // Replies delivered last get a few real seconds to be taken.
    for (let i = 0; i < 50 && h.totalCount + hs.totalCount < replyAt.size; i++) await new Promise((r) => setTimeout(r, 200));
    // The children's backends are counted before they exit (a backend takes its count with it).
    const dbAfter = o.workers ? await databaseCpu(store) : null;
    for (const c of children) c.child.send({ t: 'stop' } satisfies ToWorker);
    const childFigures = (await Promise.all(children.map((c) => c.stats))).filter((f): f is ProcessFigures => f !== null);
    await senders?.stop();
    await syncs?.stop();
    await scheduler.stop();
    const realSeconds = (performance.now() - runStarted) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const dbCpu = cpuBetween(db0, dbAfter ?? (await databaseCpu(store)));

    const slot = (
      await sql<{ late_ms: number }>`
        select extract(epoch from (m.at - r.send_at)) * 1000 as late_ms
        from send_request r join message m on m.send_request_id = r.id and m.direction = 'outbound'
        where r.state = 'sent' and r.send_at is not null`.execute(store.db)
    ).rows;
    const hl = histogram();
    for (const r of slot) hl.recordValue(Math.max(1, Math.round(Number(r.late_ms) / 60_000) || 1));
    const after = await sql<{ n: number }>`
      select count(*)::int as n
      from message m
      join event e on e.enrollment_id = m.enrollment_id and e.type = 'reply'
      where m.direction = 'outbound' and m.at > e.at`.execute(store.db);
    const sent = await store.db.selectFrom('send_request').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'sent').executeTakeFirstOrThrow();
    const unsettled = await store.db.selectFrom('send_request').select((eb) => eb.fn.countAll<number>().as('n')).where('state', 'in', ['in_flight', 'unknown']).executeTakeFirstOrThrow();
    const twice = [...secondGap.keys()].slice(0, 20);
    const suspectRows = await store.db
      .selectFrom('send_request')
      .select(['message_id', 'state', 'attempts', 'last_error', 'proof'])
      .where((eb) => eb.or([eb('message_id', 'in', twice.length ? twice : ['<none>']), eb('state', 'in', ['in_flight', 'unknown'])]))
      .limit(40)
      .execute();
    const suspects = suspectRows.map((r) => ({ messageId: r.message_id ?? '', copies: sentIds.get(r.message_id ?? '') ?? 0, gapMs: secondGap.get(r.message_id ?? '') ?? null, state: r.state, attempts: r.attempts, lastError: r.last_error, proof: r.proof }));
    const busiest = [...sentPerRealSecond].sort((a, b) => b - a);
    return {
      mailboxes: o.mailboxes,
      leads: leadCount,
      sendsPlanned: leadCount * 3,
      sent: Number(sent.n),
      unsettled: Number(unsettled.n),
      duplicates,
      suspects,
      followUpsAfterReply: after.rows[0]!.n,
      sentAfterReplyMs,
      replies: replyAt.size,
      repliesStopped: h.totalCount + hs.totalCount,
      stormReplies: storm.size,
      replyToStop: figures(h),
      slowestReplies: slowest,
      stormReplyToStop: figures(hs),
      slotToSentMin: figures(hl),
      realSeconds,
      seedSeconds,
      syncAllSeconds,
      syncedMailboxes: synced,
      processCpuSeconds: (cpu.user + cpu.system) / 1e6,
      databaseCpuSeconds: dbCpu === null ? null : dbCpu / 1000,
      peakRssMiB: Math.round(peakRss / 2 ** 20),
      // The 95th percentile of the real seconds: a peak that one burst does not make.
      peakSendsPerRealSecond: busiest.length ? busiest[Math.floor(busiest.length / 20)]! : 0,
      processes: [{ name: 'parent', roles: o.workers ? ['emulator', 'push route', 'scheduler'] : ['emulator', 'push route', 'scheduler', 'sender', 'sync'], cpuSeconds: (cpu.user + cpu.system) / 1e6, peakRssMiB: Math.round(peakRss / 2 ** 20) }, ...childFigures],
    };
  } finally {
    clearInterval(rssTimer);
    stopping = true;
    for (const t of timers) t.cancel();
    await senders?.stop().catch(() => undefined);
    await syncs?.stop().catch(() => undefined);
    await scheduler?.stop().catch(() => undefined);
    for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGTERM');
    await providers.close();
    await api.close();
    await bus?.close();
  }
}
