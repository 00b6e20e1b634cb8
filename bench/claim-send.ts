/**
 * The send loop at the speed of the database: the production send path, many mailboxes of one
 * sender process at a fixed concurrency, against graphile-worker's no-op jobs on the same database
 * in the same run.
 *
 *   npm run bench -- claim-send [--n=2000] [--rounds=3] [--concurrency=4] [--backends=postgres,pglite] [--transports=noop,smtp] [--prepared=256]
 *
 * `--prepared=0` sends every statement unnamed (parsed and planned on each call), as before issue 13.
 *
 * What one send is here: MailboxSender.step() as the sender pool calls it (sender-pool.ts), with
 * the pool's settings: paced claims (the request's planned slot, reserveSlot's bucket, window and
 * caps), the lease fence (a real lease per mailbox, checked in the claim), the re-checks (stop,
 * suppression, step), compose, the mailbox last look, the outbox's last look, the transport, and
 * record (sent + message + step_sent, which plans the next step). Each round seeds n mailboxes
 * with one due request each (the pacing gap is at least 10 s, so a mailbox sends once in a
 * round), plans them with the dispatcher, takes their leases, then `concurrency` workers take the
 * mailboxes in turn and step each once; only that part is timed.
 * Transports: 'noop' accepts at once (Cadenza's own cost), 'smtp' hands the message to an SMTP
 * sink on loopback that greets at once (bench/lib/smtp-sink.ts; smtp-server's 100 ms greeting
 * delay is what the old figure measured).
 * Anchor (PostgreSQL): graphile-worker in its default mode, n no-op jobs, same concurrency, same
 * database, its rounds interleaved with Cadenza's.
 * After every round: exactly once, from the store (n requests sent, n outbound rows, one per
 * request, none in flight or unknown) and from the transport (n handed over, n distinct Message-IDs).
 */
import { randomBytes } from 'node:crypto';
import { systemClock } from '../src/common/clock.ts';
import { newId } from '../src/common/ids.ts';
import { seededRandom } from '../src/common/random.ts';
import type { Transport } from '../src/mailbox/connectors/connector.ts';
import type { SendOutcome } from '../src/mailbox/connectors/outcomes.ts';
import { createSmtpTransport } from '../src/mailbox/connectors/smtp-imap/smtp-transport.ts';
import { Leases } from '../src/ops/leases.ts';
import { applyDefinition } from '../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../src/sequence/definition.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { trackingKey } from '../src/sending/compose/tracking.ts';
import { Dispatcher } from '../src/sending/dispatch/index.ts';
import { MailboxSender } from '../src/sending/mailbox-sender.ts';
import { SentRecorder } from '../src/sending/sent-recorder.ts';
import type { Store } from '../src/store/store.ts';
import { graphileRound } from './lib/graphile-anchor.ts';
import { cpuBetween, databaseCpu, processCpuMs } from './lib/cpu.ts';
import { describeLoad, loadFigures, machineLoad, showSpread, spread } from './lib/rounds.ts';
import { startSmtpSink, type SmtpSink } from './lib/smtp-sink.ts';
import { countStatements } from './lib/statement-count.ts';
import { benchStore, flag, preparedFlag } from './support/backends.ts';

type TransportName = 'noop' | 'smtp';

/** A mailbox's working day around now in its zone: 'Etc/GMT-k' is UTC+k (POSIX sign). */
function middayZone(nowMs: number): string {
  const k = (((12 - new Date(nowMs).getUTCHours()) % 24) + 24) % 24;
  const off = k > 12 ? k - 24 : k; // UTC-11 .. UTC+12
  return off === 0 ? 'UTC' : `Etc/GMT${off > 0 ? '-' : '+'}${Math.abs(off)}`;
}

const pacing = { dayStart: '06:00', dayEnd: '18:00', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [1 / 6, 1 / 6], spreadDay: false, hourlyCeiling: [1000, 1000], pickupMinutes: 0 };

interface World {
  mailboxIds: string[];
  leases: Array<{ resource: string; token: number }>;
}

/** n mailboxes with one first step each due and planned now, and a lease on each (not timed). */
async function seedRound(store: Store, n: number, round: number): Promise<World> {
  const clock = systemClock;
  const random = seededRandom(`claim-send-${round}`);
  const now = clock.now();
  const ws = newId(now, random);
  const zone = middayZone(now);
  await store.db.insertInto('workspace').values({ id: ws, name: `Bench ${round}`, time_zone: zone }).execute();
  const mailboxes = Array.from({ length: n }, (_, m) => ({ id: newId(now, random), workspace_id: ws, email: `rep${m}@r${round}.bench.test`, provider: 'smtp_imap' as const, time_zone: zone, daily_cap: 1000, ramp: JSON.stringify({ start: 1000, step: 0 }), settings: JSON.stringify({ pacing }) }));
  const leads = Array.from({ length: n }, (_, i) => ({ id: newId(now, random), workspace_id: ws, email: `lead${i}@sink.test`, email_norm: `lead${i}@sink.test`, first_name: `Lead${i}`, company: 'Co', time_zone: 'UTC' }));
  for (let i = 0; i < n; i += 1000) {
    await store.db.insertInto('mailbox').values(mailboxes.slice(i, i + 1000)).execute();
    await store.db.insertInto('lead').values(leads.slice(i, i + 1000)).execute();
  }
  const def = validateDefinition({
    key: 'b', name: 'B', window: 'any', holidays: false, jitter_minutes: 0,
    mailboxes: mailboxes.map((m) => m.email),
    steps: [{ key: 'intro', type: 'email', subject: 'Hello {{first_name}}', body: 'Hi {{first_name}}, a word about {{company}}.\n' }, { key: 'bump', type: 'email', delay: '3 days', body: 'Bump' }],
  });
  const seq = await applyDefinition(store, { clock, random }, ws, def);
  await bulkEnroll(store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads.map((l) => l.id) });
  const service = new EnrollmentService({ store, clock, random });
  while ((await service.fireDue(1000)).length) {
    /* every first step is due now */
  }
  await new Dispatcher({ store, clock }).runOnce();
  const planned = await store.db.selectFrom('send_request').select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('send_at').as('last'), eb.fn.count<string>('mailbox_id').distinct().as('mailboxes')]).where('workspace_id', '=', ws).where('send_at', 'is not', null).executeTakeFirstOrThrow();
  if (Number(planned.n) !== n || Number(planned.mailboxes) !== n) throw new Error(`planned ${planned.n} requests over ${planned.mailboxes} mailboxes, expected ${n} over ${n}`);
  const wait = (planned.last as Date).getTime() - clock.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait + 5));
  const leases = new Leases(store, clock);
  const held: World['leases'] = [];
  for (const m of mailboxes) {
    const l = await leases.acquire(`mailbox:${m.id}`, 'bench', 600_000);
    if (!l) throw new Error('lease refused');
    held.push({ resource: l.resource, token: l.token });
  }
  return { mailboxIds: mailboxes.map((m) => m.id), leases: held };
}

/** Accepts every message at once, and counts what it was handed (the exactly-once check). */
function noopTransport(seen: Map<string, number>): Transport {
  return {
    kind: 'smtp',
    sentProof: 'provider_copy',
    async send(_raw, _env, ctx): Promise<SendOutcome> {
      seen.set(ctx.messageId, (seen.get(ctx.messageId) ?? 0) + 1);
      return { kind: 'accepted', response: '250 ok', providerId: null, bounced: [], sentCopy: 'none' };
    },
    findSent: async () => ({ status: 'unavailable', reason: 'bench' }),
    recentMailFrom: async () => ({ status: 'ok', messages: [] }),
    close: async () => undefined,
  };
}

interface RoundResult {
  sendsPerS: number;
  statementsPerSend: number;
  /** CPU per send: this process, and the PostgreSQL server (null for PGlite, which runs in this process). */
  nodeCpuMs: number;
  pgCpuMs: number | null;
}

async function cadenzaRound(store: Store, n: number, concurrency: number, round: number, transport: TransportName, sink: SmtpSink): Promise<RoundResult> {
  const world = await seedRound(store, n, round);
  const clock = systemClock;
  const random = seededRandom(`claim-send-run-${round}`);
  const service = new EnrollmentService({ store, clock, random });
  const key = trackingKey(randomBytes(32));
  const seen = new Map<string, number>();
  // One group commit for the process's accepted sends, as the sender pool has.
  const recorder = new SentRecorder({ store, service, clock, random });
  const receivedBefore = sink.received;
  const transports = world.mailboxIds.map((_, m) =>
    transport === 'noop'
      ? noopTransport(seen)
      : createSmtpTransport({ smtp: { host: '127.0.0.1', port: sink.port, security: 'none', allowSelfSigned: false }, imap: null, username: `rep${m}@bench.test`, auth: { kind: 'password', password: 'x' }, serverSavesSent: true }, { clock }),
  );
  const senders = world.mailboxIds.map((id, m) => new MailboxSender(id, {
    store, service, clock, random,
    fence: world.leases[m]!, paced: true,
    transport: transports[m]!,
    recorder,
    trackingKey: key, publicUrl: 'https://cadenza.bench.test', pauseMailbox: async () => undefined,
  }));
  // This database's backends only (a shared server's other clients are not counted).
  const pg0 = await databaseCpu(store);
  const statements = countStatements();
  let next = 0;
  const s0 = statements.read();
  const cpu0 = processCpuMs();
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < senders.length) {
      const s = senders[next++]!;
      const r = await s.step();
      if (r.kind !== 'sent') throw new Error(`mailbox ${s.mailboxId}: ${r.kind}${'reason' in r ? ` (${r.reason})` : ''}`);
    }
  }));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const stmts = statements.read() - s0;
  const nodeCpuMs = (processCpuMs() - cpu0) / n;
  const pgUsed = cpuBetween(pg0, await databaseCpu(store));
  const pgCpuMs = pgUsed === null ? null : pgUsed / n;
  await Promise.all(transports.map((t) => t.close()));
  await checkExactlyOnce(store, world, n, transport === 'noop' ? { handed: [...seen.values()].reduce((a, x) => a + x, 0), distinct: seen.size, max: Math.max(...seen.values()) } : { handed: sink.received - receivedBefore, distinct: n, max: 1 });
  return { sendsPerS: n / seconds, statementsPerSend: stmts / n, nodeCpuMs, pgCpuMs };
}

/** Each request sent once and recorded once: the store's counts and the transport's. */
async function checkExactlyOnce(store: Store, world: World, n: number, handed: { handed: number; distinct: number; max: number }): Promise<void> {
  const ids = world.mailboxIds;
  const r = await store.db
    .selectFrom('send_request')
    .select((eb) => [eb.fn.countAll<string>().as('all'), eb.fn.count<string>('id').filterWhere('state', '=', 'sent').as('sent')])
    .where('mailbox_id', 'in', ids)
    .executeTakeFirstOrThrow();
  const m = await store.db
    .selectFrom('message')
    .select((eb) => [eb.fn.countAll<string>().as('rows'), eb.fn.count<string>('send_request_id').distinct().as('requests'), eb.fn.count<string>('message_id').distinct().as('ids')])
    .where('mailbox_id', 'in', ids)
    .where('direction', '=', 'outbound')
    .executeTakeFirstOrThrow();
  const problems: string[] = [];
  if (Number(r.sent) !== n) problems.push(`${r.sent} of ${n} requests sent`);
  if (Number(r.all) !== n) problems.push(`${r.all} requests for ${n} mailboxes`);
  if (Number(m.rows) !== n || Number(m.requests) !== n || Number(m.ids) !== n) problems.push(`${m.rows} outbound rows for ${m.requests} requests and ${m.ids} Message-IDs`);
  if (handed.handed !== n || handed.distinct !== n || handed.max !== 1) problems.push(`the transport was handed ${handed.handed} messages, ${handed.distinct} distinct`);
  if (problems.length) throw new Error(`exactly-once broken: ${problems.join('; ')}`);
}

const whole = (x: number) => Math.round(x).toLocaleString('en-US');

export default async function claimSendBench(args: string[]): Promise<Record<string, unknown>> {
  const n = Number(flag(args, 'n', '2000'));
  const rounds = Number(flag(args, 'rounds', '3'));
  const concurrency = Number(flag(args, 'concurrency', '4'));
  const backends = flag(args, 'backends', 'postgres,pglite').split(',') as Array<'pglite' | 'postgres'>;
  const transports = flag(args, 'transports', 'noop,smtp').split(',') as TransportName[];
  const before = machineLoad();
  const figures: Record<string, unknown> = { sends_per_round: n, rounds, concurrency, prepared: preparedFlag(args).preparedStatements ?? 'default' };
  console.log(`before: ${describeLoad(before)}; ${n} sends a round, ${rounds} rounds, concurrency ${concurrency}`);
  const sink = await startSmtpSink();
  try {
    for (const backend of backends) {
      const b = await benchStore(backend, preparedFlag(args));
      const results = new Map<string, RoundResult[]>();
      const anchor: number[] = [];
      try {
        for (let round = 0; round < rounds; round++) {
          for (const t of transports) {
            const r = await cadenzaRound(b.store, n, concurrency, round * 10 + transports.indexOf(t), t, sink);
            results.set(t, [...(results.get(t) ?? []), r]);
            console.log(`  ${backend} round ${round + 1} ${t.padEnd(4)}: ${Math.round(r.sendsPerS)} sends/s, ${r.statementsPerSend.toFixed(1)} statements a send, CPU a send: ${r.nodeCpuMs.toFixed(2)} ms Node${r.pgCpuMs === null ? '' : `, ${r.pgCpuMs.toFixed(2)} ms PostgreSQL`}`);
          }
          if (backend === 'postgres' && b.url) {
            const a = await graphileRound(b.url, n, concurrency);
            anchor.push(a.jobsPerS);
            console.log(`  ${backend} round ${round + 1} graphile-worker: ${Math.round(a.jobsPerS)} no-op jobs/s`);
          }
        }
      } finally {
        await b.drop();
      }
      for (const [t, rs] of results) {
        const s = spread(rs.map((r) => r.sendsPerS));
        const st = spread(rs.map((r) => r.statementsPerSend));
        console.log(`${backend} ${t}: ${showSpread(s, whole)} sends/s (median, min–max), ${st.median.toFixed(1)} statements a send`);
        figures[`${backend}_${t}_sends_per_s`] = Math.round(s.median);
        figures[`${backend}_${t}_sends_per_s_min`] = Math.round(s.min);
        figures[`${backend}_${t}_sends_per_s_max`] = Math.round(s.max);
        figures[`${backend}_${t}_statements_per_send`] = Math.round(st.median * 10) / 10;
        figures[`${backend}_${t}_node_cpu_ms_per_send`] = Math.round(spread(rs.map((r) => r.nodeCpuMs)).median * 100) / 100;
        const pgCpu = rs.map((r) => r.pgCpuMs).filter((x): x is number => x !== null);
        if (pgCpu.length) figures[`${backend}_${t}_pg_cpu_ms_per_send`] = Math.round(spread(pgCpu).median * 100) / 100;
      }
      if (anchor.length) {
        const a = spread(anchor);
        console.log(`${backend} graphile-worker 0.17 (default mode, concurrency ${concurrency}): ${showSpread(a, whole)} jobs/s`);
        figures[`${backend}_graphile_jobs_per_s`] = Math.round(a.median);
        figures[`${backend}_graphile_jobs_per_s_min`] = Math.round(a.min);
        figures[`${backend}_graphile_jobs_per_s_max`] = Math.round(a.max);
        const noop = results.get('noop');
        if (noop) {
          const ratio = spread(noop.map((r, i) => r.sendsPerS / anchor[i]!));
          console.log(`${backend} no-op sends against graphile-worker jobs, round by round: ${showSpread(ratio, (x) => x.toFixed(2))}`);
          figures[`${backend}_noop_vs_graphile`] = Math.round(ratio.median * 100) / 100;
        }
      }
    }
  } finally {
    await sink.close();
  }
  const after = machineLoad();
  console.log(`after: ${describeLoad(after)}`);
  return { ...figures, ...loadFigures(before, after) };
}
