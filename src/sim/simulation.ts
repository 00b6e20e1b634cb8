import { createHash, type Hash } from 'node:crypto';
import { sql } from 'kysely';
import type { Random } from '../common/random.ts';
import { seededRandom } from '../common/random.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { EnrollmentService, type Applied } from '../sequence/enrollment-service.ts';
import { isAllowed, parseWindow } from '../calendar/index.ts';
import { armWindow } from '../sequence/definition-experiments.ts';
import type { SequenceSettings } from '../sequence/sequence-repo.ts';
import { armHoursOf } from './experiments.ts';
import { NO_ARM, type CallOutcome, type EngineEvent, type TransitionResult } from '../sequence/model.ts';
import { recordTaskOutcome, type TaskOutcome, type TaskOutcomeResult } from '../sequence/task-outcome.ts';
import { newId } from '../common/ids.ts';
import { moveEnrollment } from '../sequence/move.ts';
import { insertSuppressions } from '../sequence/sql/suppression.ts';
import { Scheduler } from '../sequence/scheduler.ts';
import {
  claimNext,
  lastLook,
  listUnknown,
  markUnknown,
  recordBounce,
  recordFailure,
  recordSent,
  recordSentBatch,
  recoverInFlight,
  resolveUnknown,
  type Claim,
  type OutboxDeps,
  type RetryPolicy,
} from '../sending/outbox.ts';
import type { Store } from '../store/store.ts';
import { mailboxesToPlan, planMailboxes } from '../sending/dispatch/index.ts';
import { Agenda } from './agenda.ts';
import { CrashPlugin, crashingStore, isSimCrash } from './faults.ts';
import { InvariantChecker, InvariantViolation, type StoreView } from './invariants.ts';
import { proofOf, sentModes, SimMailServer, type Landed } from './mail-server.ts';
import { defaultLastLookPolicy, MailboxLastLook } from '../sending/mailbox-last-look.ts';
import { defaultRates, reactToEmail, type ProspectRates, type Signal } from './prospects.ts';
import { SimClock } from './sim-clock.ts';
import { openSimStore } from './sim-store.ts';
import { checkWarmupBatch, FAR, joinWarmupPool, pullWarmupBatch, runPlacementPass } from './warmup.ts';
import { PLACEMENT_EVERY_MS } from '../warmup/placement/placement-role.ts';
import { SimCrm } from './crm.ts';
import type { CrmWriter } from '../crm/writer.ts';
import { WorldLog, type WorldSeries } from './world-log.ts';
import { declareArmWinner } from '../experiments/sql/winners.ts';
import { applied, buildWorld, editDefinition, pickStart, removedSteps, toDefinition, type RawDefinition, type SimWorld } from './world.ts';

/**
 * The deterministic simulation (ARCHITECTURE, `sim/`): one seed is one run. A world is built on a
 * real store; leads are enrolled; then an agenda of timed actions drives the real engine, the real
 * scheduler, the real dispatcher and the real outbox under a simulated clock: timers fire (on time,
 * a little late, or hours late), the dispatcher plans each mailbox's send instants (caps, ramp,
 * gaps, working day), senders claim paced and send through a simulated mail server whose Sent folders can be
 * searched, prospects reply, bounce, send out-of-office notes, unsubscribe and book meetings at
 * random times (some exactly when a step comes due, some between the claim and the send), reps
 * pause, resume, stop and move enrollments to other sequences and complete tasks, sequences are edited mid-run, and the
 * process crashes at random points: inside a transaction (rolled back), between claim and send,
 * after the Sent copy is written and before the server's answer, after the server accepted and
 * before the send is recorded, inside the one transaction that records a bounce at RCPT. Each
 * mailbox sends through one of the four Sent-copy modes (mail-server.ts SentMode: SMTP whose
 * server files the copy, SMTP with Cadenza's pending copy, Gmail, Graph). After every step the
 * promises are checked (invariants.ts).
 *
 * Every random choice comes from a fork of seededRandom(seed) and every time from the SimClock,
 * so a run, its ids and its failures replay exactly from the seed: replay(seed) is runSeed(seed).
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** A fault planted on purpose, to prove that the checker catches it. */
export type Injection =
  /** A call task's count of tries is lost before each outcome: a step's retry rule never runs out. */
  | 'uncounted-calls'
  /** A reply rule's move leaves the old enrollment without moved_to (as before issue 18 part 1): the lead's page and later answers lose the way. */
  | 'lost-moved-to'
  /** The transport hands the first message over twice. */
  | 'duplicate-delivery'
  /** A rogue sender delivers for an enrollment right after its reply is recorded. */
  | 'send-after-stop'
  /** An enrollment is set to wait for a send that was never queued. */
  | 'lost-enrollment'
  /** A timed step planned on the sequence's window, its experiment arm's send hours ignored (the arm-hours check must catch it). */
  | 'arm-hours-ignored'
  /** The sender skips the re-check before the transport: a stop between claim and send goes unseen. */
  | 'no-last-look'
  /** The sender skips the mailbox last look: a reply already in the mailbox but not yet read by the sync goes unseen. */
  | 'no-mailbox-look'
  /** The senders claim by due time, without the dispatcher's instants or the mailbox's bucket. */
  | 'unpaced'
  /** The sync pipeline runs without the warmup receiving side: warmup mail reaches the inbox. */
  | 'no-warmup-recogniser'
  /**
   * A prospect's opt-out (an unsubscribe, a hard bounce) written straight into the suppression
   * table, bypassing suppress() (sequence/suppress.ts): the address is suppressed and none of its
   * enrollments is stopped.
   */
  | 'bypass-suppress'
  /**
   * The design before issue 10: a Cadenza-written Sent copy (smtp_cadenza) is appended only after
   * the server's 250, yet its absence is read as proof: a crash between the two sends twice.
   */
  | 'copy-after-answer'
  /**
   * The CRM connector answers "written" when its request failed (an outage, a lost answer): an
   * unknown outcome taken for done, so an activity the CRM never got is never written.
   */
  | 'crm-swallow-errors';

export interface SimOptions {
  seed: number;
  /** Leads in the world (each is enrolled in one or more sequences). Default 12. */
  enrollments?: number;
  /** Simulated days of activity before the run drains. Default 21. */
  days?: number;
  /** A migrated store to run on; it is truncated first. Default: a fresh PGlite in memory. */
  store?: Store;
  /** PostgreSQL server to run on when no store is given (in a scratch database of its own). */
  databaseUrl?: string;
  /** Scales every fault probability (0 = no crashes or transport failures). Default 1. */
  faultRate?: number;
  rates?: Partial<ProspectRates>;
  inject?: Injection;
  /** Called after each step with a one-line description (tracing a replay). */
  onStep?: (line: string) => void;
  /**
   * The run's first instant, instead of the one drawn from the seed (the draw is still made, so
   * every other draw of the seed is as it was): the accuracy runs start a few days before a change
   * of the clocks.
   */
  start?: number;
  /** Awaited after each step, at the simulated instant (the accuracy runs fold the analytics' rollup at random moments). */
  between?: (now: number) => Promise<void>;
}

export interface SimStats {
  steps: number;
  enrollments: number;
  /** Signals or rep actions timed between a claim and its send. */
  interleaved: number;
  /** Replies timed to land exactly when the next step came due. */
  repliesAtDue: number;
  /** Replies that landed in the mailbox just before the next step came due, read by the sync only later. */
  repliesLandedBeforeDue: number;
  /** Sends the mailbox last look deferred (unread mail from the lead, or a failed look). */
  deferredAtMailboxLook: number;
  deliveries: number;
  claims: number;
  refusedAtClaim: number;
  refusedAtLastLook: number;
  /** Claims the mailbox's bucket refused (cap, hourly ceiling, gap, working day, window): the request was planned again. */
  pacedRefusals: number;
  /** Dispatcher passes that planned at least one mailbox. */
  dispatchPasses: number;
  replies: number;
  /** Warmup mails the receiving side took aside, and mails people wrote in the same batches. */
  warmupReceived: number;
  warmupPeopleMail: number;
  /** Warmup mail from a federation peer's member, and peerings ended (sim/warmup.ts). */
  warmupFromPeer: number;
  peerLeaves: number;
  /** The scheduler's warmup placement passes, and the members' health or cap factors they changed (sim/warmup.ts). */
  placementPasses: number;
  placementChanges: number;
  bounces: number;
  outOfOffice: number;
  unsubscribes: number;
  meetings: number;
  pauses: number;
  resumes: number;
  stops: number;
  /** Enrollments moved to another sequence by a rep (some between a claim and its send). */
  moves: number;
  /** Issue 18: prospects' replies by the intent the classifier gave them (none: not sure). */
  intents: Record<string, number>;
  /** Reply rules carried out: owner notices made, and leads moved to the nurture sequence (refused moves apart). */
  replyNotices: number;
  replyMoves: number;
  replyMovesRefused: number;
  tasksCompleted: number;
  edits: number;
  /** Enrollments given an arm of a sequence experiment (sim/experiments.ts), and the steps they ran. */
  armEnrollments: number;
  armSteps: number;
  timersFired: number;
  transientFailures: number;
  permanentFailures: number;
  unknownOutcomes: number;
  unknownFound: number;
  unknownRequeued: number;
  /** Unknown sends settled as possibly sent (a pending copy, a Graph draft): never retried. */
  unknownPossiblySent: number;
  /** Every recipient refused at RCPT: the bounce recorded in one transaction. */
  bouncesAtRcpt: number;
  /** Records of two or more accepted sends in one transaction (the sender's group commit), and the sends in them. */
  groupRecords: number;
  groupRecordedSends: number;
  crashes: {
    total: number;
    inTransaction: number;
    claimToSend: number;
    /** After the pending Sent copy was written (smtp_cadenza) or the message handed over, before the server's answer. */
    copyToAnswer: number;
    /** After the server accepted (250, 200, 202), before the send was recorded (before the copy was settled, for smtp_cadenza). */
    sendToRecord: number;
    anywhere: number;
  };
  /** CRM sync (sim/crm.ts): activities queued and written, answers the CRM lost after acting, its outages. */
  crmActivities: number;
  crmWritten: number;
  crmLostAnswers: number;
  crmOutages: number;
  checks: number;
}

export interface SimResult {
  seed: number;
  stats: SimStats;
  /** sha256 of every step and of the final store: equal digests mean identical runs. */
  digest: string;
  startMs: number;
  endMs: number;
  /** What truly happened in the world (sim/world-log.ts). */
  log: WorldLog;
}

export class SimulationFailure extends Error {
  readonly code = 'SIM_FAILURE';
  constructor(
    readonly seed: number,
    readonly step: number,
    readonly atMs: number,
    readonly invariant: string,
    readonly detail: string,
    readonly replay: string,
  ) {
    super(`simulation seed ${seed} failed at step ${step} (${new Date(atMs).toISOString()}): ${invariant}: ${detail}\n  replay: ${replay}`);
    this.name = 'SimulationFailure';
  }
}

/** The probabilities of the faults, before faultRate scales them. */
const faults = {
  crashInSchedulerBatch: 0.04,
  crashInClaim: 0.02,
  crashInDispatch: 0.03,
  crashInRecord: 0.04,
  crashInSignal: 0.02,
  crashInEdit: 0.15,
  crashInEnroll: 0.1,
  crashBetweenClaimAndSend: 0.03,
  crashBetweenSendAndRecord: 0.04,
  crashBetweenCopyAndAnswer: 0.03,
  crashBeforeSettlingCopy: 0.03,
  bounceAtRcpt: 0.01,
  transient: 0.05,
  permanent: 0.01,
  timeoutBeforeHandover: 0.02,
  timeoutAfterHandover: 0.03,
  randomCrashesPerWeek: 1.5,
  /** A crash in the CRM writer's statements (its lease, claim, settle), maybe after the CRM wrote. */
  crashInCrm: 0.03,
};

/** How often the CRM sync looks while its outbox is empty (the real loop looks every 2 s; hours suffice here: the outbox waits, and a batch is bigger). */
const CRM_IDLE_MS = [6 * HOUR, 12 * HOUR] as const;

const policy: Partial<RetryPolicy> = { baseMs: 2 * MIN, maxMs: 4 * HOUR, maxAttempts: 5, unknownGraceMs: 15 * MIN };
/** How often the dispatcher looks for queues to plan (dispatch/dispatcher.ts everyMs). */
const DISPATCH_EVERY_MS = 30_000;
/** The Sent folder shows a message at most this long after it was accepted (below the grace period). */
const SENT_INDEX_LAG_MS = 3 * MIN;

type Action =
  | { t: 'scheduler' }
  /** The dispatcher plans the send instants of the mailboxes whose queues need it (pacing). */
  | { t: 'dispatch' }
  | { t: 'sender'; mailboxId: string }
  /** The sender hands a claimed request to the transport (lost if the process crashes first). */
  | { t: 'send'; claim: Claim }
  /** The sender records a delivered request (lost if the process crashes first). */
  | { t: 'record'; claim: Claim; sentAt: number }
  | { t: 'signal'; enrollmentId: string; signal: Signal; replyTo: string; attempt: number; landed?: Landed }
  /** A reply lands in the rep's mailbox (searchable at once); the sync reads it `syncMs` later. */
  | { t: 'land'; enrollmentId: string; replyTo: string; syncMs: number }
  /** A rep's action; with a target and an event, that one (interleaved between a claim and its send). */
  | { t: 'rep'; target?: string; event?: EngineEvent }
  /** A rep moves the enrollment to another sequence (sequence/move.ts). */
  | { t: 'move'; enrollmentId: string }
  | { t: 'tasks' }
  | { t: 'edit'; seq: number; raw?: RawDefinition; ops?: string[] }
  | { t: 'enroll'; seq: number; share: number }
  /** A mailbox's sync pulls warmup mail beside mail people wrote (sim/warmup.ts). */
  | { t: 'inbound'; mailboxId: string }
  /** The scheduler's warmup placement pass (warmup/placement/placement-role.ts; sim/warmup.ts). */
  | { t: 'placement' }
  /** The CRM sync drains the outbox (sim/crm.ts). */
  | { t: 'crm' }
  /** The automatic winner of a sequence experiment is declared (sequence/auto-winner.ts's write). */
  | { t: 'winner'; seq: number }
  | { t: 'crash' };

/** What a process holds in memory; a crash loses all of it. */
class Process {
  readonly store: Store;
  readonly service: EnrollmentService;
  readonly scheduler: Scheduler;
  readonly outbox: OutboxDeps;
  /** Each mailbox sender's last look over its simulated mailbox (the deferral counts die with the process). */
  private readonly looks = new Map<string, MailboxLastLook>();
  /** Mailboxes whose in-flight requests this process has not yet taken over (recoverInFlight). */
  readonly recovering: Set<string>;
  /** The CRM writer of this process (its request window and lease owner die with it). */
  crmWriter!: CrmWriter;

  constructor(
    readonly epoch: number,
    base: Store,
    plugin: CrashPlugin,
    clock: SimClock,
    random: Random,
    mailboxIds: string[],
    unpaced = false,
  ) {
    this.store = crashingStore(base, plugin);
    this.service = new EnrollmentService({ store: this.store, clock, random: random.fork('service') });
    this.scheduler = new Scheduler({ store: this.store, service: this.service, clock, batchSize: random.int(1, 25), tickMs: 100 });
    // Paced, as the sender role claims: only planned requests whose instant has come, through reserveSlot.
    this.outbox = { store: this.store, service: this.service, clock, random: random.fork('outbox'), policy, paced: !unpaced };
    this.recovering = new Set(mailboxIds);
  }

  mailboxLook(mailboxId: string, server: SimMailServer, clock: SimClock): MailboxLastLook {
    let look = this.looks.get(mailboxId);
    if (!look) {
      const recentMailFrom = async (q: { from: string; since: number }) => ({
        status: 'ok' as const,
        messages: server.recentMail(mailboxId, q.from, q.since, clock.now()).map((m) => ({ key: m.key, messageId: m.messageId, receivedAt: m.at })),
      });
      this.looks.set(mailboxId, (look = new MailboxLastLook({ ...this.outbox, transport: { recentMailFrom } })));
    }
    return look;
  }
}

/** Runs one seed; throws SimulationFailure (with the seed and the step) when a promise is broken. */
export async function runSeed(opts: SimOptions): Promise<SimResult> {
  if (opts.store) return new Run(opts.store, opts).run();
  const own = await openSimStore({ databaseUrl: opts.databaseUrl });
  try {
    return await new Run(own.store, opts).run();
  } finally {
    await own.close();
  }
}

/** Replays a seed: the same options give the same steps, ids, times, and failure. */
export const replay = runSeed;

export function replayCommand(o: SimOptions): string {
  const parts = [`npm run sim -- --seed ${o.seed}`];
  if (o.enrollments !== undefined) parts.push(`--enrollments ${o.enrollments}`);
  if (o.days !== undefined) parts.push(`--days ${o.days}`);
  if (o.faultRate !== undefined && o.faultRate !== 1) parts.push(`--fault-rate ${o.faultRate}`);
  if (o.inject) parts.push(`--inject ${o.inject}`);
  if (o.databaseUrl || o.store?.backend === 'postgres') parts.push('--backend postgres');
  return parts.join(' ');
}

class Run {
  private readonly clock: SimClock;
  private readonly root: Random;
  private readonly ops: Random;
  private readonly prospects: Random;
  private readonly faultRandom: Random;
  private readonly plugin = new CrashPlugin();
  private readonly server = new SimMailServer();
  private readonly log = new WorldLog();
  private checker!: InvariantChecker;
  private readonly agenda: Agenda<Action>;
  private readonly hash: Hash = createHash('sha256');
  private readonly rates: ProspectRates;
  private readonly faultRate: number;
  private readonly start: number;
  private readonly end: number;
  private world!: SimWorld;
  private proc!: Process;
  private step = 0;
  private injected = false;
  private replyCount = 0;
  /** Its own stream, so that the warmup batches leave every other draw of a seed as it was. */
  private readonly warmupRandom: Random;
  private warmupCount = 0;
  /** Its own stream too: the CRM's contacts, faults and timing. */
  private readonly crmRandom: Random;
  /** When the placement passes come, a stream of its own (like the warmup batches'). */
  private readonly placementRandom: Random;
  /** Which arm a declared winner is (declareWinner), from a stream of its own. */
  private readonly winnerRandom: Random;
  /** Declared winners by sequence id: the experiment, the arm, when, and every enrollment's arms then. */
  private readonly winners = new Map<string, { key: string; arm: string; at: number; kept: Map<string, string> }>();
  /** Issue 18, their own streams too: the sequences' reply rules and the nurture sequence, and the intent of each reply. */
  private readonly replyRulesRandom: Random;
  private readonly intentRandom: Random;
  private crm!: SimCrm;
  private editKeys = 0;
  private lastWrites = -1;
  private readonly stats: SimStats = {
    steps: 0, enrollments: 0, interleaved: 0, repliesAtDue: 0, repliesLandedBeforeDue: 0, deferredAtMailboxLook: 0, deliveries: 0, claims: 0, refusedAtClaim: 0, refusedAtLastLook: 0, pacedRefusals: 0, dispatchPasses: 0, replies: 0, warmupReceived: 0, warmupPeopleMail: 0, warmupFromPeer: 0, peerLeaves: 0, placementPasses: 0, placementChanges: 0, bounces: 0,
    outOfOffice: 0, unsubscribes: 0, meetings: 0, pauses: 0, resumes: 0, stops: 0, moves: 0, intents: {}, replyNotices: 0, replyMoves: 0, replyMovesRefused: 0, tasksCompleted: 0, edits: 0, armEnrollments: 0, armSteps: 0, timersFired: 0,
    transientFailures: 0, permanentFailures: 0, unknownOutcomes: 0, unknownFound: 0, unknownRequeued: 0, unknownPossiblySent: 0, bouncesAtRcpt: 0, groupRecords: 0, groupRecordedSends: 0,
    crashes: { total: 0, inTransaction: 0, claimToSend: 0, copyToAnswer: 0, sendToRecord: 0, anywhere: 0 }, crmActivities: 0, crmWritten: 0, crmLostAnswers: 0, crmOutages: 0, checks: 0,
  };

  constructor(
    private readonly store: Store,
    private readonly opts: SimOptions,
  ) {
    this.root = seededRandom(opts.seed);
    this.ops = this.root.fork('ops');
    this.prospects = this.root.fork('prospects');
    this.faultRandom = this.root.fork('faults');
    const tie = this.root.fork('ties');
    this.agenda = new Agenda<Action>(() => tie.next());
    const drawn = pickStart(this.root.fork('start'));
    this.start = opts.start ?? drawn;
    this.end = this.start + (opts.days ?? 21) * DAY;
    this.clock = new SimClock(this.start);
    this.rates = { ...defaultRates, ...opts.rates };
    this.faultRate = opts.faultRate ?? 1;
    this.warmupRandom = this.root.fork('warmup');
    this.crmRandom = this.root.fork('crm');
    this.placementRandom = this.root.fork('placement');
    this.winnerRandom = this.root.fork('winner-arm');
    this.replyRulesRandom = this.root.fork('reply-rules');
    this.intentRandom = this.root.fork('intents');
  }

  async run(): Promise<SimResult> {
    await sql`truncate table workspace, event restart identity cascade`.execute(this.store.db);
    // The analytics' rollup starts again with the journal's ids (its buckets went with the workspace).
    await sql`update figure_fold set folded_through = 0`.execute(this.store.db);
    const worldRandom = this.root.fork('world');
    this.world = await buildWorld(this.store, { clock: this.clock, random: worldRandom }, { leads: this.opts.enrollments ?? 12, replyRules: this.replyRulesRandom });
    await joinWarmupPool(this.store, this.clock, this.warmupRandom, this.world.mailboxes.map((m) => ({ id: m.id, workspaceId: this.world.workspaceId, email: m.email })));
    // Each mailbox's transport and Sent-copy setting, rotating with the seed so every mode is run.
    this.world.mailboxes.forEach((m, i) => this.server.setMode(m.id, sentModes[(i + this.opts.seed) % sentModes.length]!));
    // The world's mailboxes belong to no member (world.ts makes none).
    for (const m of this.world.mailboxes) this.log.owners.set(m.id, null);
    this.crm = await SimCrm.start(this.store, this.clock, this.crmRandom, this.world.workspaceId, this.world.leads.map((l) => l.email), this.opts.inject === 'crm-swallow-errors');
    this.checker = new InvariantChecker(this.store, this.server, this.world.mailboxes.map((m) => m.pacing));
    this.trace(`world ${this.world.mailboxes.length} mailboxes, ${this.world.leads.length} leads, ${this.world.sequences.length} sequences, start ${iso(this.start)}`);
    this.restart('start', false);
    this.schedulePlan();
    try {
      await this.loop();
      await this.drain();
    } catch (e) {
      throw this.failure(e);
    } finally {
      await this.crm.close();
    }
    this.stats.crmActivities = await this.crm.queued(this.store);
    this.stats.crmLostAnswers = this.crm.lostAnswers;
    this.stats.crmOutages = this.crm.outages;
    this.stats.checks = this.checker.checks;
    this.stats.steps = this.step;
    const arms = await sql<{ n: number; steps: number }>`
      select count(*)::int as n, coalesce(sum(cardinality(done_step_ids)), 0)::int as steps from enrollment
      where exists (select 1 from jsonb_each_text(experiment_arms) a where a.value <> ${NO_ARM})`.execute(this.store.db);
    this.stats.armEnrollments = arms.rows[0]!.n;
    this.stats.armSteps = arms.rows[0]!.steps;
    for (const id of this.winners.keys()) await this.checkWinner(id);
    await this.learnMoves();
    await this.digestStore();
    return { seed: this.opts.seed, stats: this.stats, digest: this.hash.digest('hex'), startMs: this.start, endMs: this.clock.now(), log: this.log };
  }

  private failure(e: unknown): SimulationFailure {
    if (e instanceof SimulationFailure) return e;
    const cmd = replayCommand(this.opts);
    if (e instanceof InvariantViolation) return new SimulationFailure(this.opts.seed, this.step, this.clock.now(), e.invariant, e.detail, cmd);
    const err = e as Error;
    return new SimulationFailure(this.opts.seed, this.step, this.clock.now(), 'unexpected error', `${err?.stack ?? String(e)}`, cmd);
  }

  /** The activity of the run: first enrollments now, more later, reps, tasks, edits, random crashes. */
  private schedulePlan(): void {
    const r = this.ops;
    this.world.sequences.forEach((_, i) => this.agenda.add(this.start + r.int(0, 2 * HOUR), { t: 'enroll', seq: i, share: 0.4 + r.next() * 0.6 }));
    for (let i = r.int(0, 3); i > 0; i--) {
      this.agenda.add(this.start + r.int(1, 14) * DAY + r.int(0, DAY), { t: 'enroll', seq: r.int(0, this.world.sequences.length - 1), share: r.next() * 0.5 });
    }
    this.agenda.add(this.start + r.int(HOUR, 12 * HOUR), { t: 'rep' });
    this.agenda.add(this.start + r.int(HOUR, 10 * HOUR), { t: 'tasks' });
    this.agenda.add(this.start + r.int(DAY, 6 * DAY), { t: 'edit', seq: r.int(0, this.world.sequences.length - 1) });
    const weeks = (this.end - this.start) / (7 * DAY);
    // Warmup mail: about two batches a week into each mailbox.
    const w = this.warmupRandom;
    for (const m of this.world.mailboxes) for (let i = Math.max(1, Math.round(2 * weeks)); i > 0; i--) this.agenda.add(this.start + w.int(0, this.end - this.start), { t: 'inbound', mailboxId: m.id });
    // The scheduler's placement pass: its first within the hour, then the next hour after each warmup receipt.
    this.agenda.wake('placement', this.start + this.placementRandom.int(0, PLACEMENT_EVERY_MS), { t: 'placement' });
    // A sequence experiment's winner, in half the runs, from a stream of its own (the rest of the run is unchanged).
    const wr = r.fork('winner');
    if (wr.next() < 0.5) this.agenda.add(this.start + wr.int(DAY, 10 * DAY), { t: 'winner', seq: wr.int(0, this.world.sequences.length - 1) });
    const crashes = Math.round(faults.randomCrashesPerWeek * weeks * this.faultRate * (0.5 + r.next()));
    for (let i = 0; i < crashes; i++) this.agenda.add(this.start + r.int(0, this.end - this.start), { t: 'crash' });
  }

  private async loop(): Promise<void> {
    for (;;) {
      const next = this.agenda.peekAt();
      if (next === undefined || next > this.end) return;
      const item = this.agenda.pop()!;
      this.clock.advanceTo(item.at);
      this.step++;
      let line: string;
      try {
        line = await this.perform(item.action);
      } catch (e) {
        if (!isSimCrash(e)) throw e;
        line = `${describe(item.action)} -> crash (${e.where})`;
        this.stats.crashes.inTransaction++;
        this.onCrash(item.action);
        this.restart(e.where);
      }
      this.plugin.disarm();
      await this.afterStep(line);
    }
  }

  private async afterStep(line: string): Promise<void> {
    const dirty = this.plugin.writes !== this.lastWrites;
    this.lastWrites = this.plugin.writes;
    this.trace(`${this.step} ${iso(this.clock.now())} ${line}`);
    const view = await this.checker.afterStep(this.clock.now(), dirty);
    if (view) this.planWakeups(view);
    await this.opts.between?.(this.clock.now());
  }

  /** A prospect's or rep's message as the world saw it, once Cadenza's side has read it without a crash. */
  private logSignal(ev: EngineEvent, enrollmentId: string, at: number, how: string, taken: boolean): void {
    const series: WorldSeries | null = ev.type === 'reply' ? 'replies' : ev.type === 'bounce' ? 'bounces' : ev.type === 'unsubscribe' ? 'unsubscribes' : ev.type === 'meeting_booked' ? 'meetings' : null;
    if (!series) return;
    this.log.add({ series, enrollmentId, at, readAt: this.clock.now(), how, taken: series === 'replies' || series === 'bounces' ? taken : true, ...(ev.type === 'bounce' ? { hard: ev.hard } : {}) });
  }

  /** The rep's screen after enrolling or moving: which enrollment is whose, in which sequence, from which mailbox. */
  private async learnEnrollments(sequenceId: string, leadIds: string[]): Promise<void> {
    if (leadIds.length === 0) return;
    const rows = await this.store.db.selectFrom('enrollment').select(['id', 'mailbox_id']).where('sequence_id', '=', sequenceId).where('lead_id', 'in', leadIds).execute();
    for (const e of rows) if (!this.log.enrollments.has(e.id)) this.log.enrolled(e.id, { sequenceId, mailboxId: e.mailbox_id });
  }

  /**
   * The rep's screen at the end of the run: every enrollment a move made (a branch arm's and a reply
   * rule's as well as the rep's own, learnt as they happened), in its sequence, and the enrollment
   * it was moved from (`movedTo` on the old one). Reads only: the run's digest is unchanged.
   */
  private async learnMoves(): Promise<void> {
    const rows = await this.store.db.selectFrom('enrollment as o').innerJoin('enrollment as n', 'n.id', 'o.moved_to').select(['o.id as from', 'n.id', 'n.sequence_id', 'n.mailbox_id']).orderBy('n.id').execute();
    for (const r of rows) {
      if (!this.log.enrollments.has(r.id)) this.log.enrolled(r.id, { sequenceId: r.sequence_id, mailboxId: r.mailbox_id });
      this.log.movedFrom.set(r.id, r.from);
    }
  }

  private trace(line: string): void {
    this.hash.update(line).update('\n');
    this.opts.onStep?.(line);
  }

  /** A crash inside a transaction: what the outside world does about the lost work. */
  private onCrash(a: Action): void {
    const r = this.ops;
    // The mailbox sync did not advance its cursor: the message is read and signalled again.
    if (a.t === 'signal') this.agenda.add(this.clock.now() + r.int(1000, 5 * MIN), { ...a, attempt: a.attempt + 1 });
    // The user sees an error and tries again.
    if (a.t === 'edit' && a.raw) this.agenda.add(this.clock.now() + r.int(MIN, HOUR), a);
    if (a.t === 'enroll') this.agenda.add(this.clock.now() + r.int(MIN, HOUR), a);
  }

  /** A new process: every in-memory object is new, claims in hand are lost, and it takes over the mailboxes. */
  private restart(where: string, crashed = true): void {
    const epoch = this.proc ? this.proc.epoch + 1 : 0;
    if (crashed) this.stats.crashes.total++;
    this.plugin.disarm();
    this.agenda.dropWhere((a) => a.t === 'send' || a.t === 'record' || a.t === 'scheduler' || a.t === 'sender' || a.t === 'dispatch' || a.t === 'crm');
    this.proc = new Process(epoch, this.store, this.plugin, this.clock, this.root.fork(`process:${epoch}`), this.world.mailboxes.map((m) => m.id), this.opts.inject === 'unpaced');
    this.proc.crmWriter = this.crm.writer(this.proc.store, epoch);
    const now = this.clock.now();
    this.agenda.wake('crm', now + this.crmRandom.int(0, MIN), { t: 'crm' });
    this.agenda.wake('scheduler', now + this.ops.int(0, MIN), { t: 'scheduler' });
    this.agenda.wake('dispatch', now + this.ops.int(0, DISPATCH_EVERY_MS), { t: 'dispatch' });
    for (const m of this.world.mailboxes) this.agenda.wake(`sender:${m.id}`, now + this.ops.int(0, 2 * MIN), { t: 'sender', mailboxId: m.id });
    // The new scheduler's placement pass within the hour (a crashed one's lease runs out first).
    if (crashed) this.agenda.wake('placement', now + this.placementRandom.int(0, PLACEMENT_EVERY_MS), { t: 'placement' });
    if (crashed) this.trace(`restart #${epoch} after a crash (${where})`);
  }

  private roll(p: number): boolean {
    return this.faultRandom.next() < p * this.faultRate;
  }

  private armMaybe(p: number, maxStatements: number, where: string): void {
    if (this.roll(p)) this.plugin.armAfter(this.faultRandom.int(1, maxStatements), where);
  }

  /** When the scheduler and each sender next wake: at the next due time, on time or late. */
  private planWakeups(view: StoreView): void {
    const now = this.clock.now();
    const wake = (due: number, key: string, action: Action) => {
      const at = Math.max(now, due) + this.lateness();
      if (at <= this.end) this.agenda.wake(key, at, action);
    };
    if (view.nextTimer !== null) wake(view.nextTimer, 'scheduler', { t: 'scheduler' });
    // The dispatcher runs every DISPATCH_EVERY_MS: a request that needs a slot gets one within that.
    if (view.planNeeded) wake(now + this.ops.int(0, DISPATCH_EVERY_MS), 'dispatch', { t: 'dispatch' });
    if (view.replanAt !== null) wake(view.replanAt, 'dispatch', { t: 'dispatch' });
    // In id order: the random lateness drawn for each must not depend on the order rows came back in.
    for (const [mailboxId, due] of [...view.queues].sort(([a], [b]) => (a < b ? -1 : 1))) wake(due, `sender:${mailboxId}`, { t: 'sender', mailboxId });
  }

  /** On time (half the time: a reply and a timer then meet at the same millisecond), late, or very late. */
  private lateness(): number {
    const x = this.ops.next();
    if (x < 0.5) return 0;
    if (x < 0.85) return this.ops.int(1, 90_000);
    return this.ops.int(1, 3 * HOUR);
  }

  private async perform(a: Action): Promise<string> {
    switch (a.t) {
      case 'scheduler':
        return this.runScheduler();
      case 'dispatch':
        return this.runDispatch();
      case 'sender':
        return this.runSender(a.mailboxId);
      case 'send':
        return this.send(a.claim);
      case 'record': {
        // The sender's group commit (sending/sent-recorder.ts): the other accepted sends waiting for
        // their record go in the same transaction, and a crash in it leaves all of them in flight.
        const batch = [a, ...this.agenda.takeWhere((x): x is Extract<Action, { t: 'record' }> => x.t === 'record')];
        this.armMaybe(faults.crashInRecord, 8, batch.length > 1 ? `recording a batch of ${batch.length} sends` : 'recording a send');
        const ok = await recordSentBatch(this.proc.outbox, batch.map((b) => ({ claim: b.claim, sentAt: b.sentAt })));
        for (const b of batch) this.log.recorded(b.claim.requestId, this.clock.now());
        if (batch.length > 1) {
          this.stats.groupRecords++;
          this.stats.groupRecordedSends += batch.length;
        }
        return `record ${batch.map((b, i) => `${b.claim.messageId} -> ${ok[i] ? 'recorded' : 'already recorded'}`).join(', ')}`;
      }
      case 'signal':
        return this.signal(a);
      case 'land':
        return this.land(a);
      case 'rep':
        return this.rep(a);
      case 'move':
        return this.move(a.enrollmentId);
      case 'tasks':
        return this.tasks();
      case 'edit':
        return this.edit(a);
      case 'enroll':
        return this.enroll(a);
      case 'inbound':
        return this.inbound(a.mailboxId);
      case 'placement':
        return this.placementPass();
      case 'crm':
        return this.crmStep();
      case 'winner':
        return this.declareWinner(a.seq);
      case 'crash':
        this.stats.crashes.anywhere++;
        this.restart('anywhere');
        return 'crash';
    }
  }

  /** The scheduler's warmup placement pass, then placement-judged (sim/warmup.ts); crashes as any scheduler work may. */
  private async placementPass(): Promise<string> {
    this.armMaybe(faults.crashInSchedulerBatch, 12, 'placement pass');
    const r = await runPlacementPass(this.proc.store, this.clock, `scheduler:${this.proc.epoch}`);
    if (!r) return 'placement pass: the lease is held by a process that crashed';
    this.stats.placementPasses++;
    this.stats.placementChanges += r.changed;
    return `placement pass: ${r.members} warmup members judged, ${r.changed} changed`;
  }

  private async crmStep(): Promise<string> {
    const r = this.crmRandom;
    if (r.next() < faults.crashInCrm * this.faultRate) this.plugin.armAfter(r.int(1, 6), 'CRM writer');
    const res = await this.crm.step(this.proc.crmWriter, this.faultRate);
    this.stats.crmWritten += res.written;
    this.crm.check();
    const now = this.clock.now();
    // The real loop looks every 2 s and drains once the writer's time has come.
    const at = res.nextAt === null ? now + r.int(...CRM_IDLE_MS) : Math.max(res.nextAt, now + 2000);
    if (at <= this.end) this.agenda.wake('crm', at, { t: 'crm' });
    return res.line;
  }

  private async runScheduler(): Promise<string> {
    this.armMaybe(faults.crashInSchedulerBatch, 14, 'scheduler batch');
    const fired = await this.proc.scheduler.runOnce();
    this.stats.timersFired += fired;
    if (this.opts.inject === 'lost-enrollment' && !this.injected && fired > 0) {
      // Plant the fault: an enrollment told to wait for a send that was never queued.
      const victim = await this.store.db.selectFrom('enrollment').select('id').where('state', '=', 'active').where('waiting_for', '=', 'timer').orderBy('id').executeTakeFirst();
      if (victim) {
        await this.proc.store.db.updateTable('enrollment').set({ waiting_for: 'send', due_at: null, updated_at: new Date(this.clock.now()) }).where('id', '=', victim.id).execute();
        this.injected = true;
      }
    }
    if (this.opts.inject === 'arm-hours-ignored' && !this.injected && fired > 0) await this.plantArmHoursIgnored();
    return `scheduler fired ${fired}`;
  }

  /**
   * Plants the fault 'arm-hours-ignored': an enrollment waiting for a step whose arm sets send hours
   * is moved to the first quarter hour inside the sequence's window but outside those hours, as a
   * planner that forgot the arm would have placed it.
   */
  private async plantArmHoursIgnored(): Promise<void> {
    const rows = await sql<{ id: string; due_at: Date; zone: string; country: string | null; region: string | null; window: unknown; settings: SequenceSettings; arms: Record<string, string>; step: string }>`
      select e.id, e.due_at, e.time_zone as zone, l.country, l.region, s.send_window as window, s.settings, e.experiment_arms as arms, st.key as step
      from enrollment e join lead l on l.id = e.lead_id join sequence s on s.id = e.sequence_id join step st on st.id = e.next_step_id
      where e.state = 'active' and e.waiting_for = 'timer' and e.due_at is not null order by e.id`.execute(this.store.db);
    for (const r of rows.rows) {
      const hours = armHoursOf(r.settings, r.arms, r.step);
      const window = parseWindow(r.window as Parameters<typeof parseWindow>[0]);
      const armWin = hours ? armWindow(hours, window) : undefined;
      if (!armWin) continue;
      const spec = { zone: r.zone, window, skipHolidays: r.settings.skipHolidays ?? true, jitterMinutes: 0, ...(r.country ? { country: r.country } : {}), ...(r.region ? { region: r.region } : {}) };
      for (let t = r.due_at.getTime(), n = 0; n < 7 * 96; t += 15 * 60_000, n++) {
        if (!isAllowed(t, spec) || isAllowed(t, { ...spec, window: armWin })) continue;
        await this.proc.store.db.updateTable('enrollment').set({ due_at: new Date(t), updated_at: new Date(this.clock.now()) }).where('id', '=', r.id).execute();
        this.injected = true;
        return;
      }
    }
  }

  private async runDispatch(): Promise<string> {
    this.armMaybe(faults.crashInDispatch, 12, 'dispatch pass');
    const deps = { store: this.proc.store, clock: this.clock };
    const ids = await mailboxesToPlan(this.proc.store.db, this.clock.now());
    if (ids.length === 0) return 'dispatch: nothing to plan';
    const r = await planMailboxes(deps, ids);
    this.stats.dispatchPasses++;
    return `dispatch ${ids.length} mailboxes: ${r.planned} planned, ${r.unplaced} unplaced`;
  }

  private async runSender(mailboxId: string): Promise<string> {
    const p = this.proc;
    const r = this.ops;
    const notes: string[] = [];
    if (p.recovering.has(mailboxId)) {
      const n = await recoverInFlight(p.outbox, mailboxId);
      p.recovering.delete(mailboxId);
      if (n) notes.push(`recovered ${n} in flight as unknown`);
    }
    for (const u of await listUnknown(p.outbox, mailboxId)) {
      const res = await this.settleUnknown(u);
      notes.push(`unknown ${u.messageId} -> ${res}`);
      if (res === 'waiting') this.agenda.wake(`sender:${mailboxId}`, u.since + (policy.unknownGraceMs ?? 0) + 1, { t: 'sender', mailboxId });
    }
    const pace = r.int(1, 3);
    let claimed = 0;
    for (let i = 0; i < pace + 5 && claimed < pace; i++) {
      this.armMaybe(faults.crashInClaim, 5, 'claiming');
      const res = await claimNext(this.outboxOf(mailboxId), mailboxId);
      this.plugin.disarm();
      if (res.kind === 'paced') {
        // The bucket said no: the request goes back to the dispatcher. A refusal for a budget must
        // be one that sends which count have used up (deferred or cancelled ones use none).
        this.stats.pacedRefusals++;
        await this.checker.checkRefusal(mailboxId, res.reason, this.clock.now());
        notes.push(`paced ${res.requestId}: ${res.reason}`);
        break;
      }
      if (res.kind === 'empty' || res.kind === 'fenced') break;
      if (res.kind === 'refused') {
        this.stats.refusedAtClaim++;
        notes.push(`refused ${res.requestId}: ${res.reason}`);
        continue;
      }
      claimed++;
      this.stats.claims++;
      this.checker.checkClaim(res.claim, this.clock.now());
      notes.push(`claimed ${res.claim.messageId}#${res.claim.attempts}`);
      // The sender renders and paces: the handover comes at once or after a pause in which
      // anything may happen (a reply, a pause, a crash).
      const gap = r.next() < 0.5 ? 0 : r.int(1, 30_000);
      this.agenda.add(this.clock.now() + gap, { t: 'send', claim: res.claim });
      if (gap > 0 && r.next() < 0.3) this.interfere(res.claim, gap);
    }
    if (claimed === pace) this.agenda.wake(`sender:${mailboxId}`, this.clock.now() + r.int(5000, 3 * MIN), { t: 'sender', mailboxId });
    return `sender ${mailboxId.slice(-4)}: ${notes.join('; ') || 'idle'}`;
  }

  /** Something happens to the enrollment between the claim and the handover: the last look must see it. */
  private interfere(claim: Claim, gap: number): void {
    const r = this.ops;
    const at = this.clock.now() + r.int(0, gap);
    const x = r.next();
    const signal = (s: Signal) => this.agenda.add(at, { t: 'signal', enrollmentId: claim.enrollmentId, signal: s, replyTo: claim.messageId, attempt: 0 });
    if (x < 0.1) signal({ type: 'reply' });
    // The reply is in the mailbox before the handover, and the sync reads it only after the
    // handover time: the sender's mailbox last look is what must see it (issue 10's race).
    else if (x < 0.45) this.agenda.add(at, { t: 'land', enrollmentId: claim.enrollmentId, replyTo: claim.messageId, syncMs: this.clock.now() + gap - at + r.int(100, 8_000) });
    else if (x < 0.57) signal({ type: 'out_of_office', returnIn: r.next() < 0.5 ? null : r.int(HOUR, 5 * DAY) });
    else if (x < 0.65) signal({ type: 'unsubscribe' });
    else if (x < 0.75) signal({ type: 'bounce', hard: true });
    else if (x < 0.85) this.agenda.add(at, { t: 'rep', target: claim.enrollmentId, event: { type: 'pause', reason: 'rep paused it' } });
    else if (x < 0.92) this.agenda.add(at, { t: 'rep', target: claim.enrollmentId, event: { type: 'stop', reason: 'rep stopped it' } });
    else this.agenda.add(at, { t: 'move', enrollmentId: claim.enrollmentId });
    this.stats.interleaved++;
  }

  /** The outbox as the mailbox's sender sees it: claims record its transport's proof (transport.ts SentProof). */
  private outboxOf(mailboxId: string): OutboxDeps {
    return { ...this.proc.outbox, proof: proofOf(this.server.modeOf(mailboxId)) };
  }

  /** An unknown request settled from its mailbox's Sent folder (outbox.resolveUnknown). */
  private async settleUnknown(u: Awaited<ReturnType<typeof listUnknown>>[number]): Promise<string> {
    const hit = this.server.findInSent(u.mailboxId, u.messageId, this.clock.now());
    const res = await resolveUnknown(this.proc.outbox, u, hit ? { sentAt: hit.at, pending: hit.pending } : null);
    if (res === 'sent' || res === 'possibly_sent') {
      // A pending copy whose message never left (a crash or a timeout between the copy and the
      // handover): no prospect got it, yet Cadenza cannot tell and counts it as possibly sent.
      if (!this.server.deliveries.some((d) => d.messageId === u.messageId)) this.log.sent({ enrollmentId: u.enrollmentId, requestId: u.requestId, stepId: u.stepId, mailboxId: u.mailboxId, variantId: u.variantId }, hit?.at ?? u.since, 'copy only');
      this.log.recorded(u.requestId, this.clock.now());
    }
    if (res === 'sent') this.stats.unknownFound++;
    if (res === 'requeued') this.stats.unknownRequeued++;
    if (res === 'possibly_sent') {
      this.stats.unknownPossiblySent++;
      this.checker.possiblySent(u.requestId);
    }
    return res;
  }

  /**
   * The transport, as each mode behaves (mail-server.ts SentMode), with the crash points around
   * the handover: before it, after the pending copy (smtp_cadenza) or the handover and before the
   * answer, after the acceptance and before the copy is settled or the send recorded.
   */
  private async send(claim: Claim): Promise<string> {
    if (this.roll(faults.crashBetweenClaimAndSend)) {
      this.stats.crashes.claimToSend++;
      this.restart('between claim and send');
      return `send ${claim.messageId} -> crash before the handover`;
    }
    // The mailbox last look first (src/sending/mailbox-last-look.ts), as MailboxSender does.
    let boundReached = false;
    if (this.opts.inject !== 'no-mailbox-look') {
      const glance = await this.proc.mailboxLook(claim.mailboxId, this.server, this.clock).check(claim);
      if (glance.kind === 'defer') {
        this.stats.deferredAtMailboxLook++;
        return `send ${claim.messageId} -> deferred by the mailbox last look until ${iso(glance.retryAt)}`;
      }
      boundReached = glance.boundReached;
    }
    const look = this.opts.inject === 'no-last-look' ? ({ ok: true } as const) : await lastLook(this.proc.outbox, claim);
    if (!look.ok) {
      this.stats.refusedAtLastLook++;
      return `send ${claim.messageId} -> refused at the last look: ${look.reason}`;
    }
    const mode = this.server.modeOf(claim.mailboxId);
    const copyFirst = mode === 'smtp_cadenza' && this.opts.inject !== 'copy-after-answer';
    const now = this.clock.now();
    if (copyFirst) {
      this.server.appendPending(claim.mailboxId, claim.messageId, now);
      if (this.roll(faults.crashBetweenCopyAndAnswer)) {
        this.stats.crashes.copyToAnswer++;
        this.restart('after the pending Sent copy, before the handover');
        return `send ${claim.messageId} -> pending copy written, crash before the handover`;
      }
    }
    // A certain refusal: the pending copy is removed again (a crash first leaves it pending).
    const refused = (): string => {
      if (!copyFirst) return '';
      if (this.roll(faults.crashBeforeSettlingCopy)) {
        this.restart('after a refusal, before removing the pending copy');
        return ' (crash before removing the pending copy)';
      }
      this.server.remove(claim.mailboxId, claim.messageId);
      return '';
    };
    const x = this.faultRandom.next() / this.faultRate;
    let cut = faults.transient;
    if (x < cut) {
      this.stats.transientFailures++;
      const crashed = refused();
      if (crashed) return `send ${claim.messageId} -> transient failure${crashed}`;
      const o = await recordFailure(this.proc.outbox, claim, { permanent: false, reason: '451 4.7.1 try again later' });
      return `send ${claim.messageId} -> transient failure, ${o.kind}`;
    }
    if (x < (cut += faults.permanent)) {
      this.stats.permanentFailures++;
      const crashed = refused();
      if (crashed) return `send ${claim.messageId} -> permanent failure${crashed}`;
      await recordFailure(this.proc.outbox, claim, { permanent: true, reason: '550 5.7.1 message rejected' });
      return `send ${claim.messageId} -> permanent failure`;
    }
    if (x < (cut += faults.bounceAtRcpt)) {
      this.stats.bouncesAtRcpt++;
      const crashed = refused();
      if (crashed) return `send ${claim.messageId} -> bounce at RCPT${crashed}`;
      // The enrollment bounced, the address suppressed, the request failed: one transaction.
      this.armMaybe(faults.crashInRecord, 10, 'recording a bounce at RCPT');
      await recordBounce(this.proc.outbox, claim, { recipient: claim.to, responseCode: 550, enhancedStatus: '5.1.1', diagnostic: '550 5.1.1 user unknown' });
      // The enrollment passed the last look a moment ago, in this same step: the engine takes the bounce.
      this.log.add({ series: 'bounces', enrollmentId: claim.enrollmentId, at: this.clock.now(), readAt: this.clock.now(), how: 'at RCPT', hard: true, taken: true });
      return `send ${claim.messageId} -> bounce at RCPT, recorded`;
    }
    if (x < (cut += faults.timeoutBeforeHandover)) {
      this.stats.unknownOutcomes++;
      await markUnknown(this.proc.outbox, claim, 'timeout before the server accepted');
      return `send ${claim.messageId} -> timeout (not delivered)`;
    }
    await this.checker.checkMailboxLook(claim, this.clock.now(), boundReached, defaultLastLookPolicy.skewMs);
    await this.deliver(claim);
    if (this.roll(faults.crashBetweenCopyAndAnswer)) {
      this.stats.crashes.copyToAnswer++;
      this.restart("after the handover, before the server's answer");
      return `send ${claim.messageId} -> delivered, crash before the answer`;
    }
    if (x < (cut += faults.timeoutAfterHandover)) {
      this.stats.unknownOutcomes++;
      await markUnknown(this.proc.outbox, claim, 'timeout after DATA');
      return `send ${claim.messageId} -> delivered, timeout (unknown)`;
    }
    if (mode === 'smtp_cadenza') {
      if (this.roll(faults.crashBeforeSettlingCopy)) {
        this.stats.crashes.sendToRecord++;
        this.restart('after the 250, before the Sent copy was settled');
        return `send ${claim.messageId} -> delivered, crash before settling the copy`;
      }
      // The copy: settled (copy first), or appended only now (the design before issue 10).
      if (!copyFirst) this.server.appendPending(claim.mailboxId, claim.messageId, this.clock.now());
      this.server.settle(claim.mailboxId, claim.messageId);
    }
    if (this.roll(faults.crashBetweenSendAndRecord)) {
      this.stats.crashes.sendToRecord++;
      this.restart('between send and record');
      return `send ${claim.messageId} -> delivered, crash before the record`;
    }
    const sentAt = this.clock.now();
    if (this.ops.next() < 0.7) {
      this.armMaybe(faults.crashInRecord, 8, 'recording a send');
      await recordSent(this.proc.outbox, claim, sentAt);
      this.log.recorded(claim.requestId, sentAt);
      return `send ${claim.messageId} -> delivered, recorded`;
    }
    // Up to 3 minutes (a slow store, a busy process): long enough for the records of other
    // mailboxes' sends to wait together, which the 'record' action commits as one batch.
    this.agenda.add(sentAt + this.ops.int(0, 180_000), { t: 'record', claim, sentAt });
    return `send ${claim.messageId} -> delivered`;
  }

  private async deliver(claim: Claim): Promise<void> {
    const mark = await this.journalMark();
    const now = this.clock.now();
    const d = { mailboxId: claim.mailboxId, messageId: claim.messageId, requestId: claim.requestId, enrollmentId: claim.enrollmentId, stepId: claim.stepId, to: claim.to, at: now, visibleAt: now + this.ops.int(0, SENT_INDEX_LAG_MS), journalMark: mark };
    this.server.deliver(d);
    this.log.sent({ enrollmentId: claim.enrollmentId, requestId: claim.requestId, stepId: claim.stepId, mailboxId: claim.mailboxId, variantId: claim.variantId }, now, 'delivered');
    this.stats.deliveries++;
    if (this.opts.inject === 'duplicate-delivery' && !this.injected) {
      this.server.deliver(d);
      this.injected = true;
    }
    for (const x of reactToEmail(this.prospects, this.rates)) {
      if (now + x.after <= this.end) this.agenda.add(now + x.after, { t: 'signal', enrollmentId: claim.enrollmentId, signal: x.signal, replyTo: claim.messageId, attempt: 0 });
    }
  }

  private async journalMark(): Promise<number> {
    const r = await sql<{ m: number }>`select coalesce(max(id), 0)::int8 as m from event`.execute(this.store.db);
    return Number(r.rows[0]!.m);
  }

  private async signal(a: Extract<Action, { t: 'signal' }>): Promise<string> {
    const now = this.clock.now();
    if (a.signal.type === 'reply_at_next_due') {
      const e = await this.store.db.selectFrom('enrollment').select(['state', 'waiting_for', 'due_at']).where('id', '=', a.enrollmentId).executeTakeFirst();
      if (e?.state === 'active' && e.waiting_for === 'timer' && e.due_at && e.due_at.getTime() >= now && e.due_at.getTime() <= this.end) {
        const due = e.due_at.getTime();
        const r = this.prospects;
        if (r.next() < 0.5) {
          // The race point of issue 10: the reply is in the mailbox up to 3 s before the step comes
          // due, and the sync reads it up to 8 s later: only the sender's mailbox last look sees it.
          const at = Math.max(now, due - r.int(0, 3_000));
          this.agenda.add(at, { t: 'land', enrollmentId: a.enrollmentId, replyTo: a.replyTo, syncMs: r.int(100, 8_000) });
          this.stats.repliesLandedBeforeDue++;
          return `prospect's reply will land in the mailbox at ${iso(at)}, just before the next due time ${iso(due)}`;
        }
        this.agenda.add(due, { ...a, signal: { type: 'reply' } });
        this.stats.repliesAtDue++;
        return `prospect will reply exactly at the next due time ${iso(e.due_at.getTime())}`;
      }
      return 'prospect would reply at the next due time: none';
    }
    const ev: EngineEvent = a.landed ? { type: 'reply', messageId: a.landed.messageId, ...this.intent(a.landed.from) } : this.toEvent(a.signal, a.replyTo, now);
    if (this.opts.inject === 'bypass-suppress' && !this.injected && (ev.type === 'unsubscribe' || (ev.type === 'bounce' && ev.hard))) {
      const planted = await this.bypassSuppress(a.enrollmentId, ev.type === 'unsubscribe' ? 'unsubscribe' : 'hard_bounce');
      if (planted) return planted;
    }
    this.armMaybe(faults.crashInSignal, 6, `signal ${ev.type}`);
    const res = a.landed ? await this.ingestLanded(a.landed, ev) : await this.proc.service.apply(a.enrollmentId, ev);
    if (!res) return `reply ${a.landed?.messageId} read again by the sync: already stored, nothing done`;
    this.logSignal(ev, a.enrollmentId, a.landed?.at ?? now, 'prospect', res.outcome === 'applied');
    this.countSignal(ev);
    await this.maybeSendAfterStop(a.enrollmentId, res.next.state);
    if (this.opts.inject === 'lost-moved-to' && !this.injected && res.effects.some((f) => f.type === 'move_to_sequence')) {
      await this.store.db.updateTable('enrollment').set({ moved_to: null }).where('id', '=', res.next.id).execute();
      this.injected = true;
    }
    return `${ev.type}${a.attempt ? ` (again, #${a.attempt})` : ''} for ${a.enrollmentId} -> ${res.outcome} ${res.next.state}${res.note ? ` (${res.note})` : ''}`;
  }

  /**
   * A mailbox's sync pulls warmup mail beside a peer's note and, half the time, a prospect's reply
   * to one of its recorded sends, through the real pipeline; then the warmup invariants.
   */
  private async inbound(mailboxId: string): Promise<string> {
    const w = this.warmupRandom;
    const m = this.world.mailboxes.find((x) => x.id === mailboxId)!;
    const n = ++this.warmupCount;
    let replyTo: { messageId: string; enrollmentId: string; from: string } | null = null;
    const mine = this.server.deliveries.filter((d) => d.mailboxId === mailboxId);
    if (mine.length > 0 && w.next() < 0.5) {
      const d = mine[w.int(0, mine.length - 1)]!;
      // Only a send recorded as sent is threaded by its Message-ID (a reply to one still in flight is the outbox's business).
      const recorded = await this.store.db.selectFrom('message').select('id').where('message_id', '=', d.messageId).where('direction', '=', 'outbound').executeTakeFirst();
      if (recorded) replyTo = { messageId: d.messageId, enrollmentId: d.enrollmentId, from: d.to };
    }
    const { batch, report, moved } = await pullWarmupBatch(
      { store: this.proc.store, service: this.proc.service, clock: this.clock, random: w, recognise: this.opts.inject !== 'no-warmup-recogniser' },
      { id: m.id, workspaceId: this.world.workspaceId, email: m.email },
      n,
      replyTo,
    );
    this.proc.service.notify(report.applied);
    this.stats.warmupReceived += report.warmup.length;
    this.stats.warmupPeopleMail += batch.human.length;
    if (batch.warmup.from === FAR) this.stats.warmupFromPeer++;
    if (batch.peer?.leftAt === this.clock.now()) this.stats.peerLeaves++;
    for (const x of report.messages) if (x.inserted && x.action === 'reply') this.stats.replies++;
    const human = replyTo && report.messages.find((x) => x.inserted && x.action === 'reply' && x.enrollmentId === replyTo.enrollmentId);
    if (replyTo && human) {
      // Taken by its enrollment, or by the one it moved to (the engine follows moved_to from a
      // moved or replied enrollment): the same message's reply event either way.
      const took = report.applied.find((x) => x.event.type === 'reply' && (x.enrollmentId === replyTo.enrollmentId || x.event.messageId === human.messageId));
      this.logSignal({ type: 'reply' }, replyTo.enrollmentId, this.clock.now(), 'prospect', took?.result.outcome === 'applied');
    }
    await checkWarmupBatch(this.store, batch, report, moved);
    this.agenda.wake('placement', this.clock.now() + this.placementRandom.int(1, PLACEMENT_EVERY_MS), { t: 'placement' });
    return `inbound ${n} to ${mailboxId.slice(-4)}: warmup ${batch.warmup.messageId} in ${batch.warmup.folder}${replyTo ? `, reply for ${replyTo.enrollmentId}` : ''}, ${batch.human.length} written by people -> ${report.warmup.length} taken aside, ${report.messages.map((x) => x.action).join(' ')}`;
  }

  /** A reply lands in the mailbox now; the sync reads it later (a crash then loses the read, and it is read again). */
  private async land(a: Extract<Action, { t: 'land' }>): Promise<string> {
    const e = await this.store.db.selectFrom('enrollment').innerJoin('lead', 'lead.id', 'enrollment.lead_id').select(['enrollment.mailbox_id', 'lead.email']).where('enrollment.id', '=', a.enrollmentId).executeTakeFirst();
    if (!e?.mailbox_id) return `reply for ${a.enrollmentId} has no mailbox to land in`;
    const landed = this.server.land({ mailboxId: e.mailbox_id, enrollmentId: a.enrollmentId, from: e.email, messageId: `<landed-${++this.replyCount}-${a.replyTo.slice(1, 9)}@prospect.test>`, at: this.clock.now() });
    this.agenda.add(this.clock.now() + a.syncMs, { t: 'signal', enrollmentId: a.enrollmentId, signal: { type: 'reply' }, replyTo: a.replyTo, attempt: 0, landed });
    return `reply ${landed.messageId} landed in mailbox ${e.mailbox_id.slice(-4)}; the sync reads it in ${a.syncMs} ms`;
  }

  /** What the ingest pipeline does with a landed reply: its inbound row and the engine's event in one transaction. */
  private async ingestLanded(m: Landed, ev: EngineEvent): Promise<TransitionResult | null> {
    const now = this.clock.now();
    const ws = await this.store.db.selectFrom('mailbox').select('workspace_id').where('id', '=', m.mailboxId).executeTakeFirstOrThrow();
    const applied: Applied[] = [];
    let stored = false;
    await this.proc.store.db.transaction().execute(async (tx) => {
      const inserted = await tx
        .insertInto('message')
        .values({ id: newId(now, this.ops), workspace_id: ws.workspace_id, mailbox_id: m.mailboxId, enrollment_id: m.enrollmentId, direction: 'inbound', message_id: m.messageId, provider_key: m.key, from_addr: m.from, folder: 'inbox', at: new Date(m.at), received_at: new Date(m.at), intent: ev.type === 'reply' ? (ev.intent ?? null) : null })
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .execute();
      if (inserted.length > 0) applied.push(...(await this.proc.service.applyInTx(tx, m.enrollmentId, ev, now)));
      stored = inserted.length > 0;
    });
    // A reply the classifier called interested, stored: the world knows what the prospect meant.
    if (stored && ev.type === 'reply' && ev.intent === 'interested') this.log.add({ series: 'positiveReplies', enrollmentId: m.enrollmentId, at: m.at, readAt: m.at, how: 'interested', taken: true });
    this.proc.service.notify(applied);
    return applied[0]?.result ?? null;
  }

  /** The planted fault 'send-after-stop': a sender that ignores the stop delivers the enrollment's last step again. */
  private async maybeSendAfterStop(enrollmentId: string, state: string): Promise<void> {
    if (this.opts.inject !== 'send-after-stop' || this.injected || state === 'active' || state === 'paused') return;
    const last = [...this.server.deliveries].reverse().find((d) => d.enrollmentId === enrollmentId);
    if (!last) return;
    const now = this.clock.now();
    this.server.deliver({ ...last, messageId: `<again-${last.messageId.slice(1)}`, stepId: `${last.stepId}:again`, at: now, visibleAt: now, journalMark: await this.journalMark() });
    this.injected = true;
  }

  /**
   * The planted fault 'bypass-suppress': the opt-out goes straight into the suppression table with
   * the owner's own query but not through suppress(), for a lead with a live enrollment, so that
   * nothing is stopped. Null (and the signal goes the normal way) when the lead has none live.
   */
  private async bypassSuppress(enrollmentId: string, reason: 'unsubscribe' | 'hard_bounce'): Promise<string | null> {
    const e = await this.store.db.selectFrom('enrollment').innerJoin('lead', 'lead.id', 'enrollment.lead_id').select(['lead.workspace_id', 'lead.email_norm', 'lead.id']).where('enrollment.id', '=', enrollmentId).executeTakeFirst();
    if (!e) return null;
    const live = await this.store.db.selectFrom('enrollment').select('id').where('lead_id', '=', e.id).where('state', 'in', ['active', 'paused']).execute();
    if (live.length === 0) return null;
    const now = this.clock.now();
    await this.proc.store.db.transaction().execute((tx) => insertSuppressions(tx, e.workspace_id, [{ email: e.email_norm, reason, source: 'planted fault: bypass-suppress' }], now));
    this.injected = true;
    return `${reason} for ${enrollmentId} -> written straight into the suppression table (planted fault: ${live.length} live enrollments not stopped)`;
  }

  private toEvent(s: Signal, replyTo: string, now: number): EngineEvent {
    switch (s.type) {
      case 'reply':
      case 'reply_at_next_due':
        return { type: 'reply', messageId: `<reply-${++this.replyCount}-${replyTo.slice(1, 9)}@prospect.test>`, ...this.intent(null) };
      case 'bounce':
        return { type: 'bounce', hard: s.hard, reason: s.hard ? '550 5.1.1 user unknown' : '452 4.2.2 mailbox full' };
      case 'out_of_office':
        return s.returnIn === null ? { type: 'out_of_office' } : { type: 'out_of_office', returnAt: now + s.returnIn };
      case 'unsubscribe':
        return { type: 'unsubscribe', source: 'list-unsubscribe' };
      case 'meeting_booked':
        return { type: 'meeting_booked' };
    }
  }

  /**
   * The intent the classifier gives a prospect's reply, as the pipeline passes it on (ingest/act.ts:
   * only a sure one travels with the reply; 10% are not sure). Out-of-office notes are their own
   * signal; an unsubscribe reply opts out (the unsubscribe signal).
   */
  private intent(from: string | null): { intent?: string; from?: string } {
    const r = this.intentRandom;
    const x = r.next();
    const intent = x < 0.3 ? 'interested' : x < 0.65 ? 'not_interested' : x < 0.75 ? 'question' : x < 0.82 ? 'neutral' : x < 0.86 ? 'wrong_person' : x < 0.9 ? 'referral' : null;
    this.stats.intents[intent ?? 'none'] = (this.stats.intents[intent ?? 'none'] ?? 0) + 1;
    return intent ? { intent, ...(from ? { from } : {}) } : {};
  }

  /** Signals as the engine received them (duplicates and late ones included, applied or not). */
  private countSignal(ev: EngineEvent): void {
    if (ev.type === 'reply') this.stats.replies++;
    if (ev.type === 'bounce') this.stats.bounces++;
    if (ev.type === 'out_of_office') this.stats.outOfOffice++;
    if (ev.type === 'unsubscribe') this.stats.unsubscribes++;
    if (ev.type === 'meeting_booked') this.stats.meetings++;
  }

  /** A rep acts on one enrollment: pause (until a date or for good), resume, stop, or logs a reply. */
  private async rep(a: Extract<Action, { t: 'rep' }>): Promise<string> {
    const r = this.ops;
    const now = this.clock.now();
    let e: { id: string; state: string };
    let ev: EngineEvent;
    const x = r.next();
    if (a.target && a.event) {
      e = { id: a.target, state: 'claimed' };
      ev = a.event;
    } else {
      this.agenda.add(now + r.int(4 * HOUR, 36 * HOUR), { t: 'rep' });
      const all = await this.store.db.selectFrom('enrollment').select(['id', 'state']).orderBy('id').execute();
      if (all.length === 0) return 'rep: nothing to do';
      e = all[r.int(0, all.length - 1)]!;
      if ((e.state === 'active' || e.state === 'paused') && this.world.sequences.length > 1 && r.next() < 0.35) return this.move(e.id);
      ev = this.repEvent(e.state, x, now);
    }
    this.armMaybe(faults.crashInSignal, 6, `rep ${ev.type}`);
    const res = await this.proc.service.apply(e.id, ev);
    this.logSignal(ev, e.id, now, 'rep', res.outcome === 'applied');
    await this.maybeSendAfterStop(e.id, res.next.state);
    if (res.outcome === 'applied') {
      if (ev.type === 'pause') this.stats.pauses++;
      if (ev.type === 'resume') this.stats.resumes++;
      if (ev.type === 'stop') this.stats.stops++;
      if (ev.type === 'unsubscribe') this.stats.unsubscribes++;
      if (ev.type === 'reply') this.stats.replies++;
    }
    return `rep ${ev.type} ${e.id} (${e.state}) -> ${res.outcome} ${res.next.state}`;
  }

  /**
   * A rep moves a lead to another of the world's sequences, sometimes from a later step: the old
   * enrollment must send nothing more (never-after-stop counts 'moved' as a stop), and the new one
   * is held to every promise like any other.
   */
  private async move(enrollmentId: string): Promise<string> {
    const r = this.ops;
    const e = await this.store.db.selectFrom('enrollment').select(['sequence_id', 'lead_id', 'state']).where('id', '=', enrollmentId).executeTakeFirstOrThrow();
    const mine = new Set((await this.store.db.selectFrom('enrollment').select('sequence_id').where('lead_id', '=', e.lead_id).execute()).map((x) => x.sequence_id));
    // Mostly a sequence the lead is not in yet (a move that happens); now and then one it is in (refused).
    const fresh = this.world.sequences.filter((s) => !mine.has(s.id));
    const others = fresh.length && r.next() < 0.9 ? fresh : this.world.sequences.filter((s) => s.id !== e.sequence_id);
    if (others.length === 0) return `move ${enrollmentId}: no other sequence`;
    const target = others[r.int(0, others.length - 1)]!;
    const keys = await this.store.db.selectFrom('step').select('key').where('sequence_id', '=', target.id).where('archived_at', 'is', null).orderBy('position').execute();
    const startAtStep = keys.length > 1 && r.next() < 0.3 ? keys[r.int(1, keys.length - 1)]!.key : undefined;
    this.armMaybe(faults.crashInSignal, 12, 'moving an enrollment');
    const res = await moveEnrollment(
      { store: this.proc.store, clock: this.clock, random: this.ops, service: this.proc.service },
      { workspaceId: this.world.workspaceId, enrollmentId, sequenceId: target.id, ...(startAtStep ? { startAtStep } : {}) },
    );
    if (res.outcome === 'moved') {
      this.stats.moves++;
      await this.learnEnrollments(target.id, [e.lead_id]);
    }
    const how = res.outcome === 'moved' ? `moved -> ${res.newEnrollmentId}` : `skipped (${res.reason})`;
    return `move ${enrollmentId} (${e.state}) to ${target.raw.key}${startAtStep ? ` at ${startAtStep}` : ''} -> ${how}`;
  }

  private repEvent(state: string, x: number, now: number): EngineEvent {
    const r = this.ops;
    if (state === 'paused') return x < 0.75 ? { type: 'resume' } : x < 0.9 ? { type: 'stop', reason: 'rep stopped it' } : { type: 'pause' };
    if (state === 'active') {
      return x < 0.35 ? { type: 'pause', until: now + r.int(HOUR, 10 * DAY) } : x < 0.65 ? { type: 'pause', reason: 'rep paused it' } : x < 0.8 ? { type: 'stop', reason: 'rep stopped it' } : x < 0.9 ? { type: 'reply', messageId: '<logged-call@rep>' } : { type: 'resume' };
    }
    return x < 0.1 ? { type: 'unsubscribe', source: 'rep' } : x < 0.3 ? { type: 'reply' } : { type: 'resume' };
  }

  /** Reps work through their open tasks: calls with an outcome, manual tasks done or skipped. */
  private async tasks(): Promise<string> {
    const r = this.ops;
    const now = this.clock.now();
    this.agenda.add(now + r.int(2 * HOUR, 24 * HOUR), { t: 'tasks' });
    const open = await this.store.db.selectFrom('task').select(['id', 'enrollment_id', 'step_id', 'kind']).where('state', '=', 'open').where('due_at', '<=', new Date(now)).orderBy('due_at').orderBy('id').execute();
    const done: string[] = [];
    for (const t of open) {
      if (r.next() < 0.4) continue;
      const outcomes: CallOutcome[] = ['connected', 'connected', 'no_answer', 'no_answer', 'voicemail', 'busy', 'wrong_number', 'meeting_booked', 'not_interested'];
      const outcome: TaskOutcome = t.kind === 'call' ? outcomes[r.int(0, outcomes.length - 1)]! : r.next() < 0.8 ? 'done' : 'skipped';
      this.armMaybe(faults.crashInSignal, 6, 'completing a task');
      const res = await this.completeTask(t.id, t.enrollment_id, t.step_id, t.kind, outcome);
      // A meeting booked on a call counts whatever the engine made of it (docs/api.md, isMeeting).
      if (res && outcome === 'meeting_booked') this.log.add({ series: 'meetings', enrollmentId: t.enrollment_id, at: now, readAt: now, how: 'call', taken: true });
      this.stats.tasksCompleted++;
      done.push(`${t.kind} ${outcome}${res?.retryAt ? ` (try ${res.attempt + 1} at ${iso(res.retryAt.getTime())})` : ''}`);
    }
    return `tasks: ${open.length} open, ${done.join(', ') || 'none completed'}`;
  }

  /** The task's outcome as the task and call routes give it (sequence/task-outcome.ts), in one transaction. */
  private async completeTask(taskId: string, enrollmentId: string, stepId: string, kind: 'call' | 'manual', outcome: TaskOutcome): Promise<TaskOutcomeResult | null> {
    const now = this.clock.now();
    // Planted fault: the task's count of tries is lost before each outcome, so a retry rule never runs out.
    if (this.opts.inject === 'uncounted-calls') await this.proc.store.db.updateTable('task').set({ attempts: 0 }).where('id', '=', taskId).execute();
    const r = await this.proc.store.db.transaction().execute((tx) => recordTaskOutcome(tx, this.proc.service, { id: taskId, kind, enrollmentId, stepId }, outcome, now));
    if (r) this.proc.service.notify(r.applied);
    return r;
  }

  /** A user edits a running sequence (steps added, removed, restored, reordered, delays changed). */
  private async edit(a: Extract<Action, { t: 'edit' }>): Promise<string> {
    const r = this.ops;
    const seq = this.world.sequences[a.seq]!;
    let raw = a.raw;
    let ops = a.ops ?? [];
    if (!raw) {
      const now = this.clock.now();
      if (now + DAY <= this.end) this.agenda.add(now + r.int(DAY, 6 * DAY), { t: 'edit', seq: r.int(0, this.world.sequences.length - 1) });
      const edited = editDefinition(r, seq.raw, removedSteps(seq), () => `${seq.raw.key}-e${++this.editKeys}`);
      raw = edited.def;
      ops = edited.ops;
      a = { ...a, raw, ops };
    }
    this.armMaybe(faults.crashInEdit, 40, 'editing a sequence');
    const summary = await applyDefinition(this.proc.store, { clock: this.clock, random: this.ops }, this.world.workspaceId, toDefinition(raw));
    applied(seq, raw);
    const changed = await this.proc.service.replanSequence(seq.id, r.int(1, 50));
    this.stats.edits++;
    return `edit ${seq.raw.key} v${summary.version} [${ops.join(', ')}] -> ${changed} enrollments re-planned`;
  }

  /**
   * Declares a random arm of the sequence's experiment the winner, as the automatic winner does
   * (the verdict itself is the statistics' business, tested in experiments/). What must hold after
   * it (invariant arm-winner): the enrollments in the experiment keep their arms, and every later
   * enrollment runs the winner while the experiment still has that arm (enroll, below).
   */
  private async declareWinner(i: number): Promise<string> {
    const seq = this.world.sequences[i]!;
    const x = (seq.raw.experiments as Array<{ key: string; arms: Array<{ key: string }> }> | undefined)?.[0];
    if (!x || this.winners.has(seq.id)) return `winner ${seq.raw.key}: none to declare`;
    const arm = x.arms[this.winnerRandom.int(0, x.arms.length - 1)]!.key;
    const kept = new Map((await this.store.db.selectFrom('enrollment').select(['id', 'experiment_arms']).where('sequence_id', '=', seq.id).execute()).map((e) => [e.id, JSON.stringify(e.experiment_arms)]));
    const now = this.clock.now();
    await declareArmWinner(this.proc.store.db, { sequenceId: seq.id, experimentKey: x.key, armKey: arm, at: new Date(now), pValue: 0.01, reason: 'simulation' });
    this.winners.set(seq.id, { key: x.key, arm, at: now, kept });
    return `winner ${seq.raw.key} ${x.key}=${arm} (${kept.size} enrollments keep their arms)`;
  }

  /** Invariant arm-winner: the arms held at the declaration are kept; enrollments made since run the winner. */
  private async checkWinner(sequenceId: string): Promise<void> {
    const w = this.winners.get(sequenceId);
    if (!w) return;
    const rows = await this.store.db.selectFrom('enrollment').select(['id', 'experiment_arms', 'created_at']).where('sequence_id', '=', sequenceId).execute();
    const arms = (this.world.sequences.find((q) => q.id === sequenceId)!.raw.experiments as Array<{ key: string; arms: Array<{ key: string }> }> | undefined)?.find((x) => x.key === w.key)?.arms;
    for (const e of rows) {
      const before = w.kept.get(e.id);
      if (before !== undefined && before !== JSON.stringify(e.experiment_arms)) throw new InvariantViolation('arm-winner', `enrollment ${e.id} changed arms after the winner of ${w.key} was declared: ${before} -> ${JSON.stringify(e.experiment_arms)}`);
      const got = (e.experiment_arms as Record<string, string>)[w.key];
      if (e.created_at.getTime() >= w.at && arms?.some((a) => a.key === w.arm) && got !== w.arm) throw new InvariantViolation('arm-winner', `enrollment ${e.id}, made after ${w.key}'s winner ${w.arm} was declared, runs arm ${String(got)}`);
    }
  }

  private async enroll(a: Extract<Action, { t: 'enroll' }>): Promise<string> {
    const r = this.ops;
    const leadIds = this.world.leads.filter(() => r.next() < a.share).map((l) => l.id);
    this.armMaybe(faults.crashInEnroll, 6, 'enrolling');
    const res = await bulkEnroll(this.proc.store, { clock: this.clock, random: this.ops }, { workspaceId: this.world.workspaceId, sequenceId: this.world.sequences[a.seq]!.id, leadIds, chunkSize: r.int(1, 8) });
    this.stats.enrollments += res.enrolled;
    await this.learnEnrollments(this.world.sequences[a.seq]!.id, leadIds);
    await this.checkWinner(this.world.sequences[a.seq]!.id);
    const why = new Map<string, number>();
    for (const x of res.refused) why.set(x.reason, (why.get(x.reason) ?? 0) + 1);
    return `enroll ${leadIds.length} in ${this.world.sequences[a.seq]!.raw.key} -> ${res.enrolled} enrolled${why.size ? `, refused ${[...why].map(([k, v]) => `${v} ${k}`).join(', ')}` : ''}`;
  }

  /**
   * The end of the run: no more new activity; the process stops (its in-flight requests become
   * unknown for its successor), the successor settles every unknown request from the Sent folders
   * after the grace period, and the final checks compare the records with what was delivered.
   */
  private async drain(): Promise<void> {
    this.agenda.dropWhere(() => true);
    this.plugin.disarm();
    this.clock.advanceTo(this.end + MIN);
    this.restart('end of run', false);
    this.agenda.dropWhere(() => true);
    const grace = policy.unknownGraceMs ?? 0;
    for (let round = 0; round < 3; round++) {
      for (const m of this.world.mailboxes) {
        this.step++;
        const notes: string[] = [];
        if (this.proc.recovering.delete(m.id)) {
          const n = await recoverInFlight(this.proc.outbox, m.id);
          if (n) notes.push(`recovered ${n}`);
        }
        for (const u of await listUnknown(this.proc.outbox, m.id)) {
          const res = await this.settleUnknown(u);
          notes.push(`unknown ${u.messageId} -> ${res}`);
        }
        await this.afterStep(`drain ${m.id.slice(-4)}: ${notes.join('; ') || 'settled'}`);
      }
      this.clock.advance(grace + 1);
    }
    const rules = await this.checker.finalCheck();
    this.stats.replyNotices += rules.notices;
    this.stats.replyMoves += rules.moves;
    this.stats.replyMovesRefused += rules.refused;
    // The CRM is back and the sync writes the rest of its outbox.
    this.crm.endOutage();
    for (let i = 0; i < 500; i++) {
      this.step++;
      const res = await this.crm.step(this.proc.crmWriter, 0);
      this.stats.crmWritten += res.written;
      await this.afterStep(`drain ${res.line}`);
      if (res.nextAt === null) break;
      this.clock.advanceTo(Math.max(res.nextAt, this.clock.now() + 2000));
    }
    await this.crm.finalCheck(this.store);
  }

  /** The final store, in a stable order, into the digest: same seed, same rows. */
  private async digestStore(): Promise<void> {
    const db = this.store.db;
    const tables = [
      await db.selectFrom('enrollment').select(['id', 'lead_id', 'sequence_id', 'state', 'state_reason', 'waiting_for', 'next_step_id', 'last_step_id', 'last_step_at', 'done_step_ids', 'due_at', 'paused_due_at', 'soft_bounces', 'version']).orderBy('id').execute(),
      await db.selectFrom('send_request').select(['id', 'enrollment_id', 'step_id', 'mailbox_id', 'variant_id', 'state', 'due_at', 'message_id', 'attempts', 'last_error']).orderBy('id').execute(),
      await db.selectFrom('task').select(['id', 'enrollment_id', 'step_id', 'state', 'outcome', 'due_at', 'completed_at']).orderBy('id').execute(),
      await db.selectFrom('message').select(['id', 'message_id', 'enrollment_id', 'at']).orderBy('id').execute(),
      await db.selectFrom('suppression').select(['email_norm', 'reason', 'source']).orderBy('email_norm').execute(),
      await db.selectFrom('event').select(['enrollment_id', 'type', 'payload', 'at']).orderBy('id').execute(),
    ];
    for (const rows of tables) this.hash.update(JSON.stringify(rows));
    this.hash.update(JSON.stringify(this.server.deliveries));
  }
}

function describe(a: Action): string {
  switch (a.t) {
    case 'send':
    case 'record':
      return `${a.t} ${a.claim.messageId}`;
    case 'sender':
      return `sender ${a.mailboxId.slice(-4)}`;
    case 'signal':
      return `signal ${a.signal.type} ${a.enrollmentId}`;
    case 'edit':
    case 'enroll':
      return `${a.t} ${a.seq}`;
    default:
      return a.t;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
