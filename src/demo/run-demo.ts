import { randomBytes } from 'node:crypto';
import { cadenzaError } from '../common/errors.ts';
import type { Logger } from '../common/logger.ts';
import { seededRandom } from '../common/random.ts';
import { SyncPool } from '../ingest/worker/sync-pool.ts';
import type { ConnectorSetup } from '../mailbox/connectors/connector.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import type { Metrics } from '../ops/metrics.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { Scheduler } from '../sequence/scheduler.ts';
import { trackingKey } from '../sending/compose/tracking.ts';
import { SenderPool } from '../sending/sender-pool.ts';
import { ensureEventPartitions } from '../store/partitions.ts';
import type { Store } from '../store/store.ts';
import { Audience, type AudienceCounts } from './audience.ts';
import { AcceleratedClock } from './demo-clock.ts';
import { startEmulatedProviders, type EmulatedProvider, type EmulatedProviders } from './emulated-providers.ts';
import { readProgress, type DemoProgress } from './progress.ts';
import { fillDemoWorkspace, type DemoWorkspace } from './workspace.ts';
import { joinDemoNetwork, NetworkDelivery, type NetworkMember } from './warmup-network.ts';
import { WarmupPlanRole } from '../warmup/plan-role.ts';
import { PLACEMENT_EVERY_MS, startPlacementDuty } from '../warmup/placement/placement-role.ts';
import type { PlacementResult } from '../warmup/placement/evaluate.ts';
import type { Periodic } from '../common/periodic.ts';
import { warmupRecogniser } from '../warmup/receive/recogniser.ts';
import { warmupDueAt, warmupExtraStep } from '../warmup/send/warmup-sender.ts';
import { warmupPoolKey } from '../warmup/text/marker.ts';
import { newId } from '../common/ids.ts';

/**
 * The demo: a workspace filled with mailboxes on the Gmail and Graph emulators, a few hundred leads
 * across time zones and two sequences, run by the real scheduler, sender pool, sync pool and
 * ingestion pipeline on an accelerated clock, while simulated prospects reply, bounce, go on
 * holiday and unsubscribe by mail. The reps also take part in a warmup network with four mailboxes
 * of other companies (warmup-network.ts): planned, sent, received and answered by the real warmup
 * parts. Nothing writes an enrollment's state but the engine: a reply
 * reaches the store only by being delivered to an emulated inbox, pulled by the sync connector,
 * parsed, threaded and classified.
 *
 * Real-time budgets (HTTP deadlines, lease lifetimes, idle polls) are expressed in real
 * milliseconds and converted with clock.realMs(), so a faster clock does not make them tighter.
 */
export interface DemoOptions {
  store: Store;
  /** Leads to create (default 300). */
  leads?: number;
  /** Simulated ms per real ms (default 3,600: an hour a second). */
  rate?: number;
  seed?: string | number;
  /** Where simulated time starts (default: now). */
  startMs?: number;
  /** Seals the demo mailboxes' tokens; default a key of its own (the demo's grants are throwaway). */
  masterKey?: Buffer;
  workspaceName?: string;
  /** Fill this existing workspace (the one first-run setup created) instead of a new one. */
  workspaceId?: string;
  publicUrl?: string;
  metrics?: Metrics;
  log?: Logger;
}

export interface DemoRun {
  workspaceId: string;
  workspace: DemoWorkspace;
  clock: AcceleratedClock;
  providers: EmulatedProviders;
  scheduler: Scheduler;
  senders: SenderPool;
  syncs: SyncPool;
  /** The warmup network's daily planning. */
  warmupPlan: WarmupPlanRole;
  /** The warmup members' placement judged again, hourly on the demo's clock (as the scheduler role does). */
  warmupPlacement: Periodic;
  /** The placement passes so far, and the last one's results (null: another process held the lease). */
  placement: { passes: number; last: PlacementResult[] | null };
  /** The warmup pool: the reps and the four peers of other workspaces. */
  network: NetworkMember[];
  /** Warmup mail the emulated providers delivered so far, by folder. */
  warmupDelivered: NetworkDelivery['delivered'];
  /** What the simulated prospects sent back so far, by kind. */
  reactions: AudienceCounts;
  progress(): Promise<DemoProgress>;
  /** Stops every part (gracefully: sends and batches in flight are recorded); the store stays open. */
  stop(): Promise<void>;
  /**
   * After stop(), for a store that outlives the demo: the enrollments still running are stopped
   * through the engine, and the mailboxes, whose emulated providers are gone, are marked so that no
   * sender or sync process takes them.
   */
  retire(): Promise<{ stopped: number }>;
}

/**
 * The demo's scheduler, dispatcher and senders serve the whole store on a clock that runs ahead:
 * beside a live mailbox or enrollment of a real workspace they would fire its steps early and send
 * its mail through an emulator. So the demo runs only on a store where nothing else is live
 * (earlier demos, retired, may stay). Throws CONFLICT naming what is there.
 */
export async function assertStoreFreeForDemo(store: Store): Promise<void> {
  const mailboxes = await store.db.selectFrom('mailbox').select((eb) => eb.fn.countAll<number>().as('n')).where('health', '<>', 'error').executeTakeFirstOrThrow();
  const enrollments = await store.db.selectFrom('enrollment').select((eb) => eb.fn.countAll<number>().as('n')).where('state', 'in', ['active', 'paused']).executeTakeFirstOrThrow();
  if (Number(mailboxes.n) > 0 || Number(enrollments.n) > 0) {
    throw cadenzaError(
      'CONFLICT',
      `the demo needs a store with nothing else running (this one has ${Number(mailboxes.n)} connected mailboxes and ${Number(enrollments.n)} running enrollments): its accelerated clock would fire their steps early; use another data folder or database`,
      { mailboxes: Number(mailboxes.n), enrollments: Number(enrollments.n) },
    );
  }
}

export async function startDemo(o: DemoOptions): Promise<DemoRun> {
  await assertStoreFreeForDemo(o.store);
  const rate = o.rate ?? 3600;
  const clock = new AcceleratedClock(o.startMs ?? Date.now(), rate);
  const random = seededRandom(o.seed ?? 'cadenza-demo');
  const { store, log } = o;
  const real = (ms: number) => clock.realMs(ms);
  await ensureEventPartitions(store, clock.now());

  let audience: Audience | undefined;
  let delivery: NetworkDelivery | undefined;
  const providers = await startEmulatedProviders(clock, (m) => {
    audience?.received(m);
    delivery?.received(m);
  });
  const parts: { scheduler?: Scheduler; senders?: SenderPool; syncs?: SyncPool; peerSyncs?: SyncPool; warmupPlan?: WarmupPlanRole; warmupPlacement?: Periodic } = {};
  let stopping: Promise<void> | undefined;
  const stopParts = () =>
    (stopping ??= (async () => {
      await Promise.all([audience?.stop(), delivery?.stop()]);
      parts.warmupPlan?.stop();
      await parts.warmupPlacement?.stop();
      await Promise.all([parts.senders?.stop(), parts.syncs?.stop(), parts.peerSyncs?.stop()]);
      await parts.scheduler?.stop();
      await providers.close();
    })());
  try {
    const master = o.masterKey ?? randomBytes(32);
    const vault = new Vault(store, localKeyWrapper(master));
    const workspace = await fillDemoWorkspace(store, vault, { clock, random: random.fork('workspace') }, {
      leads: o.leads ?? 300,
      name: o.workspaceName ?? 'Demo workspace',
      ...(o.workspaceId ? { workspaceId: o.workspaceId } : {}),
      tokenFor: (rep) => {
        providers.addMailbox(rep.provider, rep.email);
        return providers.issueToken(rep.provider, rep.email);
      },
    });
    const network = await joinDemoNetwork(store, vault, { clock, random: random.fork('network') }, {
      reps: workspace.mailboxes,
      workspaceId: workspace.workspaceId,
      tokenFor: (rep) => {
        providers.addMailbox(rep.provider, rep.email);
        return providers.issueToken(rep.provider, rep.email);
      },
    });
    delivery = new NetworkDelivery({ random: random.fork('network-delivery'), deliver: (p, to, raw, opts) => providers.deliver(p, to, raw, opts), ...(log ? { log } : {}) }, network);
    const providerOf = new Map(network.map((m) => [m.id, m.provider]));
    const members = workspace.sequences.flatMap((s) =>
      s.leads.map((l) => ({ email: l.email, firstName: l.firstName, lastName: l.lastName, company: l.company, persona: workspace.personas.get(l.email)!, emails: s.emails })),
    );
    audience = new Audience({ clock, random: random.fork('audience'), deliver: (p, to, raw) => providers.deliver(p, to, raw), ...(log ? { log } : {}) }, members);

    // The connectors the registry builds for these OAuth mailboxes, pointed at the emulators, with
    // real-time HTTP deadlines. The grant's access token comes from the vault, as for a connected
    // mailbox; a 401 makes the connector ask for a fresh one, which the emulator issues as a token
    // endpoint would.
    const connectors: ConnectorSetup = {
      tokens: (mailbox, credential) => providers.tokenProvider(providerOf.get(mailbox.id) as EmulatedProvider, mailbox.email, credential.accessToken),
      baseUrls: { gmail: providers.gmail.baseUrl, graph: providers.graph.baseUrl },
      httpTimeoutMs: real(20_000),
    };
    const service = new EnrollmentService({ store, clock, random: random.fork('engine') });
    const tracking = trackingKey(master);

    parts.scheduler = new Scheduler({ store, service, clock, ...(log ? { log } : {}), horizonMs: real(10_000), refillEveryMs: real(2_000), tickMs: real(20) });
    await parts.scheduler.start();
    parts.senders = new SenderPool({
      store,
      service,
      clock,
      random: random.fork('senders'),
      vault,
      trackingKey: tracking,
      publicUrl: o.publicUrl ?? 'http://localhost:8080',
      leaseTtlMs: real(30_000),
      idlePollMs: real(250),
      resolveEveryMs: real(5_000),
      connectors,
      // Warmup mail goes out through the same mailbox sender and bucket, after campaign mail (as app.ts wires it).
      extraStepFor: warmupExtraStep({ store, clock, keyFor: (pool) => warmupPoolKey(master, pool) }),
      extraDueAt: warmupDueAt({ store, clock }),
      ...(log ? { log } : {}),
    });
    // One sync pool per pace: the reps' inboxes, where prospects answer, every quarter of a real
    // second; the warmup peers', where only warmup mail lands, every second (PGlite serves one
    // query at a time: polling them as often would slow the reps' reply-to-stop).
    const recogniser = warmupRecogniser({ db: store.db, master, clock, random: random.fork('warmup-receive'), ...(log ? { log } : {}) });
    const reps = new Set(workspace.mailboxes.map((m) => m.id));
    const syncPool = (ids: string[], everyRealMs: number, name: string) =>
      new SyncPool({
        store,
        service,
        clock,
        random: random.fork(name),
        vault,
        trackingKey: tracking,
        mailboxIds: ids,
        leaseTtlMs: real(30_000),
        // No push endpoint in the demo: the reconciliation pull finds replies.
        reconcileMs: real(everyRealMs),
        connectors,
        // Warmup mail is taken aside (recorded, rescued, flagged, read, a share answered) before anything user-facing.
        warmup: recogniser,
        ...(o.metrics ? { metrics: o.metrics } : {}),
        ...(log ? { log } : {}),
      });
    parts.syncs = syncPool([...reps], 250, 'syncs');
    parts.peerSyncs = syncPool(network.filter((m) => !reps.has(m.id)).map((m) => m.id), 1000, 'peer-syncs');
    await parts.peerSyncs.start();
    await parts.syncs.start();
    await parts.senders.start();
    // The day's warmup plan: at once, then each real second looks whether a new UTC day needs one.
    parts.warmupPlan = new WarmupPlanRole({ store, clock, random: random.fork('warmup-plan'), owner: newId(clock.now(), random), everyMs: real(1000), ...(log ? { log } : {}) });
    parts.warmupPlan.start();
    // The hourly placement pass of the scheduler role (app.ts), on the demo's clock: receipts of the
    // network's mail judged into cap factors, warnings and pauses. No more often than every 2 real
    // seconds (PGlite serves one query at a time: the reps' reply-to-stop comes first); its lease
    // lives 30 real seconds, as the senders' do, so that a slow pass is not cut off mid-way.
    const placement: DemoRun['placement'] = { passes: 0, last: null };
    parts.warmupPlacement = startPlacementDuty({
      store,
      clock,
      owner: newId(clock.now(), random),
      everyMs: Math.max(PLACEMENT_EVERY_MS, real(2_000)),
      leaseTtlMs: real(30_000),
      onPass: (r) => ((placement.passes += 1), (placement.last = r)),
      ...(log ? { log } : {}),
    });

    const a = audience;
    return {
      workspaceId: workspace.workspaceId,
      workspace,
      clock,
      providers,
      scheduler: parts.scheduler,
      senders: parts.senders,
      syncs: parts.syncs,
      warmupPlan: parts.warmupPlan,
      warmupPlacement: parts.warmupPlacement,
      placement,
      network,
      warmupDelivered: delivery.delivered,
      reactions: a.delivered,
      progress: () => readProgress(store, workspace.workspaceId, clock.now()),
      stop: stopParts,
      async retire() {
        const live = await store.db.selectFrom('enrollment').select('id').where('workspace_id', '=', workspace.workspaceId).where('state', 'in', ['active', 'paused']).execute();
        for (const e of live) await service.apply(e.id, { type: 'stop', reason: 'demo ended' });
        // The reps and the warmup network's peers (their own workspaces).
        await store.db
          .updateTable('mailbox')
          .set({ health: 'error', health_reason: 'A demo mailbox: its pretend Gmail or Microsoft 365 ran only while the demo did, so it can no longer send or receive. Remove it when you are done with the demo.' })
          .where('id', 'in', network.map((m) => m.id))
          .execute();
        return { stopped: live.length };
      },
    };
  } catch (e) {
    await stopParts().catch(() => undefined);
    throw e;
  }
}
