import { networkInterfaces } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../api/server.ts';
import { drainServer } from '../api/http/drain.ts';
import { defaultAuthSettings } from '../api/context.ts';
import { systemClock, type Clock, type TimerHandle } from '../common/clock.ts';
import { SwitchableClock } from '../common/switchable-clock.ts';
import { embeddedDbDir, type Role } from '../common/config.ts';
import { createLogger, type Logger } from '../common/logger.ts';
import { systemRandom, type Random } from '../common/random.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { Scheduler } from '../sequence/scheduler.ts';
import { migrate } from '../store/migrate.ts';
import { openStore, type Store } from '../store/store.ts';
import { ensureEventPartitions } from '../store/partitions.ts';
import { ensureDefaultWorkspace } from '../workspace/workspaces.ts';
import { openMasterKey } from '../mailbox/master-key.ts';
import { ensurePrivateDir } from '../common/private-files.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { trackingKey } from '../sending/compose/tracking.ts';
import { warmupRecogniser } from '../warmup/receive/recogniser.ts';
import { SenderPool } from '../sending/sender-pool.ts';
import { CredentialTaskRunner } from '../sending/credential-tasks/task-runner.ts';
import { OAuthClients, type OAuthSettings } from '../mailbox/oauth/client.ts';
import { MailboxTokens } from '../mailbox/oauth/mailbox-tokens.ts';
import { SyncPool } from '../ingest/worker/sync-pool.ts';
import { callMediaReader } from '../crm/call-media.ts';
import { CrmSync } from '../crm/crm-sync.ts';
import type { CrmOAuthApps } from '../crm/oauth/apps.ts';
import { WebhookDispatcher } from '../api/webhooks/dispatcher.ts';
import { sealLegacyWebhookSecrets } from '../api/webhooks/secrets.ts';
import { newId } from '../common/ids.ts';
import type { ConnectorPush, ConnectorSetup } from '../mailbox/connectors/connector.ts';
import { PushRegistry } from '../mailbox/sync/push-registry.ts';
import { RelayedPushRegistry } from '../mailbox/sync/push-relay.ts';
import type { PushSettings } from '../mailbox/sync/push-settings.ts';
import { postgresPushBus, type PushBus } from '../ops/push-bus.ts';
import { WorkNudges, type WorkKind } from '../ops/work-nudge.ts';
import { describeListening, type Listening } from './listen-addresses.ts';
import { serveStoreEndpoint, type StoreEndpoint } from '../store/remote/server.ts';
import { Metrics } from '../ops/metrics.ts';
import { DemoControl } from '../demo/control.ts';
import { version } from '../common/version.ts';
import { smtpSystemMailer, type SystemMailerSettings } from '../api/system-mailer.ts';
import { sendDueWeeklyReports, WEEKLY_REPORT_EVERY_MS } from '../api/weekly-report/job.ts';
import { startNotificationDuties } from '../api/notify/duty.ts';
import { setupTokenInDataDir } from '../api/auth/setup-token.ts';
import { purgeAuditLog } from '../api/audit/retention.ts';
import { runEvery, type Periodic } from '../common/periodic.ts';
import { compactFigures, foldFigures } from '../ops/figure-rollup.ts';
import { sweepCalls } from '../dialer/calls.ts';
import { settleWinners } from '../sequence/auto-winner.ts';
import { ingestRecordings, purgeRecordings, readAnnouncement } from '../dialer/recording/ingest.ts';
import { loadModel, type TranscriptionModelConfig } from '../dialer/transcribe/model.ts';
import { transcribeCall } from '../dialer/transcribe/transcribe.ts';
import { TranscriptionWorker } from '../dialer/transcribe/worker.ts';
import { DomainMonitor } from '../sending/dns/domain-monitor.ts';
import { WarmupPlanRole } from '../warmup/plan-role.ts';
import { startPlacementDuty } from '../warmup/placement/placement-role.ts';
import { startSsoProofRecheck } from '../api/auth/sso/proof-recheck-duty.ts';
import { warmupDueAt, warmupExtraStep } from '../warmup/send/warmup-sender.ts';
import { PrivacyPurgeRole } from '../privacy/purge-role.ts';
import { erasureKey } from '../common/erasure-key.ts';
import { warmupPoolKey } from '../warmup/text/marker.ts';
import { federationIdentity, pairKey } from '../warmup/federation/identity.ts';
import { FederationRole } from '../warmup/federation/federation-role.ts';
import { domainHealthSettings, type DomainCheckConfig } from '../sending/dns/health-settings.ts';
import { CustomHosts, type CustomHostSettings } from '../tracking/domains/custom-hosts.ts';
import { HygieneChecker } from '../leads/hygiene/checker.ts';
import { rspamdScorer } from '../sending/content-check/rspamd-scorer.ts';
import type { SipCredentialSettings } from '../dialer/sip-credentials.ts';

// Re-exported for the callers that knew it here.
export { version };

export interface AppOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  port: number;
  host: string;
  roles: Role[];
  /** The URL recipients reach for unsubscribe and tracking links (CADENZA_PUBLIC_URL). */
  publicUrl?: string;
  /** The rspamd the content check asks (CADENZA_RSPAMD_URL); absent: its packaged address on this machine. */
  rspamdUrl?: string;
  /** OAuth clients for Google and Microsoft mailboxes (config CADENZA_GOOGLE_* / CADENZA_MICROSOFT_*). */
  oauth?: OAuthSettings;
  /** OAuth apps for connecting CRMs (config CADENZA_HUBSPOT_* / _SALESFORCE_* / _PIPEDRIVE_*; src/crm/oauth/apps.ts). */
  crmOAuth?: CrmOAuthApps;
  /** Push for Gmail and Graph mailboxes (pushSettingsFrom: CADENZA_PUSH_SECRET…); absent: they are polled. */
  push?: PushSettings;
  /** Webhooks out: loopback and private destinations allowed (CADENZA_WEBHOOK_ALLOW_PRIVATE). */
  webhooks?: { allowPrivate: boolean; pollMs?: number };
  /** Notifications: how often recorded events are handed out and Slack posts sent (default 5 s). */
  notifications?: { everyMs?: number };
  /**
   * List hygiene of imported and enrolled leads (src/leads/hygiene/) on this DNS server
   * (CADENZA_DNS_RESOLVER; absent: the system's resolvers). Absent: off (tests that do not ask for it
   * never reach a resolver).
   */
  hygiene?: { dnsServer?: string };
  /** Behind a reverse proxy: whose X-Forwarded-For to believe (CADENZA_TRUST_PROXY); absent: none. */
  trustProxy?: boolean | number | string[];
  /** Cadenza's own SMTP account for invitations (CADENZA_SMTP_URL, CADENZA_MAIL_FROM); absent: links are shown to copy. */
  mailer?: SystemMailerSettings;
  /** The senders' timings (CADENZA_UNKNOWN_GRACE_MS, CADENZA_SENDER_RESOLVE_EVERY_MS, CADENZA_SENDER_LEASE_TTL_MS); absent: the defaults. */
  sending?: { unknownGraceMs?: number; resolveEveryMs?: number; leaseTtlMs?: number };
  /**
   * The periodic passes that work nudges make up for: the scheduler's refill and the day planner's
   * pass (default 30 s each). Tests that must see the nudges alone set them far apart.
   */
  polls?: { refillEveryMs?: number; planEveryMs?: number };
  /** GET /metrics needs this bearer token (CADENZA_METRICS_TOKEN); absent: /metrics is public. */
  metricsToken?: string;
  /** The click journal's directory (CADENZA_CLICK_JOURNAL_DIR); absent: <dataDir>/click-journal on the embedded store, none on PostgreSQL. */
  clickJournalDir?: string;
  /** PostgreSQL: named prepared statements per connection (CADENZA_PG_PREPARED_STATEMENTS); absent: the store's default. */
  preparedStatements?: number;
  /** How long a stop lets HTTP requests in progress finish before their connections are cut; default 10 s. */
  drainMs?: number;
  /**
   * Domain health checks (CADENZA_DNS_RESOLVER, CADENZA_DNSBL_*: sending/dns/health-settings.ts):
   * the scheduler role's daily re-check and the API's re-check button. Absent: both off (tests
   * that start an app ask no DNS server unless they give one).
   */
  domains?: DomainCheckConfig;
  /** Custom tracking hosts with ACME certificates (CADENZA_TRACKING_HTTPS_PORT…, trackingDomainSettings); absent: off. */
  trackingDomains?: CustomHostSettings;
  /** The browser softphone (CADENZA_SIP_*, CADENZA_TURN_*: dialer/settings.ts); absent: off. */
  dialer?: SipCredentialSettings;
  /** Call recording's spool (rtpengine's recording-dir) and consent announcement (CADENZA_RECORDING_*); absent: nothing ingested. */
  recording?: { spoolDir: string; announcementFile?: string };
  /**
   * Call transcription (CADENZA_TRANSCRIPTION_*: src/dialer/transcribe/): the streaming transducer
   * the API role loads at its start (a bad model refuses the start) and transcribes each stored
   * recording with, after the call record is saved. Absent: recordings are kept untranscribed.
   */
  transcription?: TranscriptionModelConfig;
  /**
   * Warmup federation (src/warmup/federation/): this installation's name on its card
   * (CADENZA_FEDERATION_NAME; default: the public URL's host) and how often the scheduler role
   * exchanges with every peer (CADENZA_FEDERATION_EVERY_MS; default 10 min).
   */
  federation?: { name?: string; everyMs?: number };
  /** The Gmail and Graph APIs' base URLs replaced (the emulators in tests). */
  providerBaseUrls?: { gmail?: string; graph?: string };
  clock?: Clock;
  random?: Random;
  log?: Logger;
}

export interface RunningApp {
  store: Store;
  server?: FastifyInstance;
  scheduler?: Scheduler;
  /** The daily domain re-check (scheduler role, with `domains` given). */
  domains?: DomainMonitor;
  /** The warmup network's daily planning (scheduler role; one process plans, under a lease). */
  warmupPlan?: WarmupPlanRole;
  /** Warmup placement judged again every hour (scheduler role; one process judges, under a lease): warnings, pauses, cap factors. */
  warmupPlacement?: Periodic;
  /** The daily re-check of verified SSO domains (scheduler role, with domain checks on). */
  ssoProofs?: Periodic;
  /** Warmup federation's exchange with peer installations (scheduler role; one process at a time, under a lease). */
  federation?: FederationRole;
  /** The nightly purge of data past its workspace's retention (scheduler role; one process purges, under a lease). */
  privacyPurge?: PrivacyPurgeRole;
  senders?: SenderPool;
  /** The sender role's credential tasks: mailbox tests, inbox replies and grant revocations the API asks for. */
  credentialTasks?: CredentialTaskRunner;
  syncs?: SyncPool;
  webhooks?: WebhookDispatcher;
  /** The CRM writer loop (src/crm/crm-sync.ts), in the API role. */
  crm?: CrmSync;
  /** This process's push registry (absent: push off). */
  push?: PushRegistry;
  metrics: Metrics;
  /** The API's (and the enrollment service's) clock: a demo running in this process switches it to the demo's. */
  worldClock: SwitchableClock;
  url?: string;
  /**
   * First run only (no account yet, api role): the one-time token POST /api/setup takes, and the
   * file in the data folder that holds it (src/api/auth/setup-token.ts). `cadenza start` prints it.
   */
  setupToken?: { token: string; file: string };
  /** Custom tracking hosts (api role with trackingDomains): the job, the certificates served, the HTTPS port. */
  customHosts?: CustomHosts;
  trackingHttpsPort?: number;
  /** Where the API listens (listen-addresses.ts). */
  listening?: Listening;
  /** Graceful stop: no new work, finish what is in progress, close the store. */
  stop(): Promise<void>;
}

/** `cadenza start`: every role the options name, in one process, on one store. */
/** How often the API folds new analytics facts into buckets (src/ops/figure-rollup.ts). */
const FIGURE_FOLD_EVERY_MS = 60_000;
/** Every tenth fold also merges the buckets' rows (figure-rollup.ts compactFigures): a recent bucket reads at most ten rows per key. */
const FIGURE_COMPACT_EVERY_MS = 10 * 60_000;

export async function startApp(o: AppOptions): Promise<RunningApp> {
  const clock = o.clock ?? systemClock;
  const random = o.random ?? systemRandom();
  const log = o.log ?? createLogger();
  // The data folder holds master.key and the embedded database: the account's own (0700).
  if (!o.databaseUrl) ensurePrivateDir(o.dataDir);
  const store = await openStore({ databaseUrl: o.databaseUrl, dataDir: o.databaseUrl ? undefined : embeddedDbDir(o.dataDir), ...(o.preparedStatements !== undefined ? { preparedStatements: o.preparedStatements } : {}) });
  const m = await migrate(store);
  if (m.applied.length) log.info({ applied: m.applied }, 'migrations applied');
  await ensureDefaultWorkspace(store, { clock, random });
  const parts = await ensureEventPartitions(store, clock.now());
  if (parts.skipped.length) log.warn({ months: parts.skipped }, 'event months left in the default partition');

  // Checked before any role starts: a wrong or missing key refuses the start with what to do.
  let master: Buffer;
  try {
    master = await openMasterKey(store, { dataDir: o.dataDir });
  } catch (e) {
    await store.close();
    throw e;
  }

  // Keep the journal's months ahead of time while the process runs.
  let maintenance: TimerHandle | undefined;
  const scheduleMaintenance = () => {
    maintenance = clock.setTimer(6 * 3_600_000, () => {
      void ensureEventPartitions(store, clock.now())
        .catch((e: unknown) => log.error({ err: e }, 'event partition maintenance failed'))
        .finally(scheduleMaintenance);
    });
  };
  scheduleMaintenance();
  // The audit log's retention (src/api/audit/retention.ts): now, then every 6 hours.
  const auditPurge = o.roles.includes('api')
    ? runEvery(
        clock,
        6 * 3_600_000,
        async () => {
          const r = await purgeAuditLog(store, clock);
          if (r.deleted) log.info({ deleted: r.deleted }, 'audit events past their retention purged');
        },
        (e) => log.error({ err: e }, 'audit log purge failed'),
      )
    : undefined;
  // The analytics rollup (src/ops/figure-rollup.ts): the API's reads stay exact without it, and
  // fast with it; folded now, then every minute, by the process that serves them, and compacted
  // now and every ten minutes.
  let stopping = false;
  let compactedAt = -Infinity;
  const figureFold = o.roles.includes('api')
    ? runEvery(
        clock,
        FIGURE_FOLD_EVERY_MS,
        async () => {
          const r = await foldFigures(store, { stopping: () => stopping });
          const rows = r.journal.to - r.journal.from + (r.tracking.to - r.tracking.from);
          if (rows > 0n) log.debug({ journalThrough: String(r.journal.to), trackingThrough: String(r.tracking.to) }, 'analytics facts folded');
          if (!stopping && clock.now() - compactedAt >= FIGURE_COMPACT_EVERY_MS) {
            const c = await compactFigures(store);
            compactedAt = clock.now();
            if (c.removed > 0) log.debug({ removed: c.removed, written: c.written }, 'analytics buckets compacted');
          }
        },
        (e) => log.error({ err: e }, 'analytics fold failed'),
      )
    : undefined;

  const metrics = new Metrics();
  let demo: DemoControl | undefined;
  let endpoint: StoreEndpoint | undefined;
  // The time the API acts in: the system's, or a demo's while one runs here (pausing an enrollment
  // during a demo is stamped in the demo's time). Sessions and the roles' timers stay on real time.
  const world = new SwitchableClock(clock);
  const app: RunningApp = {
    store,
    metrics,
    worldClock: world,
    async stop() {
      maintenance?.cancel();
      // Commands beside the server first: one in flight is told the server stopped.
      await endpoint?.close();
      // A purge or sweep in progress ends before the store closes, and schedules nothing after.
      await auditPurge?.stop();
      stopping = true;
      await figureFold?.stop();
      await callSweep?.stop();
      await experimentWinners?.stop();
      await recordings?.stop();
      await weeklyReports?.stop();
      await notifications?.stop();
      await transcriber?.stop();
      // A demo ends first: it resumes the roles it suspended, which then stop below.
      await demo?.stop();
      // Senders first: each finishes the message it is handing over and records it. Sync loops
      // finish and commit the batch in flight.
      await Promise.all([app.senders?.stop(), app.credentialTasks?.stop(), app.syncs?.stop(), app.domains?.stop(), app.warmupPlan?.stop(), app.warmupPlacement?.stop(), app.ssoProofs?.stop(), app.federation?.stop(), app.privacyPurge?.stop()]);
      // Bounded: a request that hangs (a stalled upload) is cut at the deadline (api/http/drain.ts).
      if (app.server) {
        const d = await drainServer(app.server, o.drainMs ?? 10_000);
        if (d.forced) log.warn({ deadlineMs: o.drainMs ?? 10_000 }, 'stop: HTTP requests still open at the deadline were cut');
      }
      await app.customHosts?.stop();
      await app.webhooks?.stop();
      await app.crm?.stop();
      await pushBus?.close();
      await app.scheduler?.stop();
      await store.close();
    },
  };
  const service = new EnrollmentService({ store, clock: world, random });
  // Calls whose softphone went silent end as dropped; calls left without an outcome get the one
  // their end suggested (src/dialer/calls.ts): every minute, in the API role that owns the calls.
  const callSweep = o.roles.includes('api')
    ? runEvery(
        clock,
        60_000,
        async () => {
          const r = await sweepCalls({ store, clock: world, random, service });
          if (r.dropped || r.autoLogged) log.info(r, 'calls swept');
        },
        (e) => log.error({ err: e }, 'call sweep failed'),
      )
    : undefined;
  // Experiments that ask for an automatic winner get it once the verdict has one (src/experiments/
  // auto-winner.ts), in the API role that owns definitions. Outcomes count only once a send's reply
  // window has closed, days later: every 15 minutes is far quicker than the data move.
  const experimentWinners = o.roles.includes('api')
    ? runEvery(
        clock,
        15 * 60_000,
        async () => {
          const declared = await settleWinners({ store, clock: world });
          if (declared.length) log.info({ declared }, 'experiment winners declared');
        },
        (e) => log.error({ err: e }, 'experiment winners failed'),
      )
    : undefined;
  // Recorded calls (src/dialer/recording/): the spool every 10 s, the retention purge with it.
  // Declared before the vault below is built, started after it.
  let recordings: { stop(): Promise<void> } | undefined;
  let weeklyReports: { stop(): Promise<void> } | undefined;
  let notifications: { stop(): Promise<void> } | undefined;
  let transcriber: TranscriptionWorker | undefined;
  let consentAnnouncement: Uint8Array | undefined;
  // The federation identity is derived from the master key (nothing stored): the card, the signing key, the pair keys.
  const publicUrl = o.publicUrl ?? `http://localhost:${o.port}`;
  const federation = federationIdentity(master, publicUrl, o.federation?.name ?? new URL(publicUrl).host);
  const warmupKey = (pool: string, peer?: { signKey: string; agreeKey: string }) => (peer ? pairKey(federation, peer) : warmupPoolKey(master, pool));
  const domainSettings = o.domains ? domainHealthSettings(o.domains, publicUrl, o.trackingDomains?.publicHost) : undefined;
  // One token provider per process: senders, sync loops and the connect routes share its cache.
  const vault = new Vault(store, localKeyWrapper(master));
  // Webhook secrets stored in clear before 0013 are sealed by the first API process (the webhooks'
  // owner: under least privilege no other role may read them, src/ops/mtls/db-grants.ts).
  if (o.roles.includes('api')) {
    const sealed = await sealLegacyWebhookSecrets(store, vault);
    if (sealed) log.info({ sealed }, 'webhook signing secrets sealed');
  }
  if (o.roles.includes('api')) {
    // The consent announcement is read once: a missing or wrong file refuses the start, not each call.
    const read = o.recording?.announcementFile ? await readAnnouncement(o.recording.announcementFile) : null;
    const announcement = read?.samples ?? null;
    consentAnnouncement = read?.file;
    // The speech model is loaded (and probed in a child) once, here: a bad one refuses the start.
    if (o.transcription) {
      const model = await loadModel(o.transcription);
      log.info({ model: model.id }, 'call transcription on');
      transcriber = new TranscriptionWorker({
        store,
        clock,
        sealer: vault,
        transcribe: (wav) => transcribeCall(model, { kind: 'stereo', wav }),
        owner: `transcriber:${newId(clock.now(), random)}`,
        log,
        onResult: (result) => metrics.transcriptions.inc({ result }),
      });
      transcriber.start();
    }
    const spool = o.recording ? { store, clock, sealer: vault, spoolDir: o.recording.spoolDir, announcement, transcribes: transcriber !== undefined } : undefined;
    let lastPurge = -Infinity;
    recordings = runEvery(
      clock,
      10_000,
      async () => {
        if (spool) {
          const r = await ingestRecordings(spool);
          if (r.stored.length || r.quarantined.length) log.info({ stored: r.stored.length, quarantined: r.quarantined }, 'call recordings ingested');
          if (r.stored.length) transcriber?.nudge();
        }
        if (clock.now() - lastPurge >= 6 * 3_600_000) {
          lastPurge = clock.now();
          const deleted = await purgeRecordings(store, clock);
          if (deleted) log.info({ deleted }, 'call recordings past their retention purged');
        }
      },
      (e) => log.error({ err: e }, 'call recording ingestion failed'),
    );
  }
  const oauthClients = new OAuthClients(o.oauth ?? {}, { clock });
  const mailboxTokens = new MailboxTokens({ store, vault, clients: oauthClients, clock, random, log });
  // One push registry per process, shared by the push routes and the sync connectors. On
  // PostgreSQL the roles may run in separate processes: the registry then relays what its
  // routes receive to the mailbox's owner through LISTEN/NOTIFY (push-relay.ts).
  let pushBus: PushBus | undefined;
  let push: ConnectorPush | undefined;
  // On PostgreSQL the bus also carries work nudges (work-nudge.ts), so it runs with push off too.
  // A lost LISTEN connection may have cost nudges and relayed pushes: once back, every work pass
  // runs and every synced mailbox is pulled (nudges is assigned below, before any reconnect).
  let nudges: WorkNudges | undefined;
  const catchUp = () => {
    nudges?.catchUp();
    app.syncs?.pokeAll();
  };
  if (o.databaseUrl) pushBus = await postgresPushBus({ databaseUrl: o.databaseUrl, store, clock, random, log, metrics, onReconnect: catchUp });
  // Enrollments made due by the API wake the scheduler, and its fired steps the dispatcher, here
  // and in the other processes, instead of waiting for their 30 s polls.
  nudges = new WorkNudges({ origin: newId(clock.now(), random), ...(pushBus ? { bus: pushBus } : {}), onError: (e) => log.warn({ err: e }, 'work nudge: publish failed') });
  nudges.on('enrollments', () => void app.scheduler?.nudge());
  nudges.on('requests', () => void app.senders?.nudge());
  nudges.on('credentials', () => void app.credentialTasks?.nudge());
  // A mailbox connected or resumed: its sender and sync loop start now, not at the next 20 s balance;
  // a resumed mailbox's parked queue is planned after the balance, so its new loop is woken.
  nudges.onPull((mailboxId) => void app.syncs?.poke(mailboxId));
  // Slots planned by another process's dispatcher: this process's loops for those mailboxes wake.
  nudges.onPlanned((mailboxIds) => app.senders?.wake(mailboxIds));
  nudges.on('mailboxes', () => {
    void app.senders?.balance().then(() => app.senders?.nudge());
    void app.syncs?.balance();
  });
  if (o.push) {
    const settings = o.push;
    const registry = pushBus
      ? new RelayedPushRegistry(pushBus, { origin: newId(clock.now(), random), secret: settings.secret, onError: (e) => log.warn({ err: e }, 'push relay: publish failed') })
      : new PushRegistry();
    push = { registry, secret: settings.secret, ...(settings.gmailTopic ? { gmailTopic: settings.gmailTopic } : {}), ...(settings.graphNotificationUrl ? { graphNotificationUrl: settings.graphNotificationUrl } : {}) };
    app.push = registry;
  }
  // What this process builds every mailbox's connector with (mailbox/connectors/registry.ts), for
  // the senders, the sync loops and replies sent from the inbox: one token provider, the API base
  // URLs, push.
  const connectors: ConnectorSetup = {
    tokens: (m) => mailboxTokens.forMailbox(m.id),
    ...(o.providerBaseUrls ? { baseUrls: o.providerBaseUrls } : {}),
    ...(push ? { push } : {}),
  };
  // The scheduler, sender and sync roles, startable again after a stop (the first-run demo
  // suspends them while its own run on its faster clock: src/demo/control.ts).
  const startRoles = async () => {
    if (o.roles.includes('scheduler')) {
      app.scheduler = new Scheduler({ store, service, clock, log, onFired: () => nudges.nudge('requests'), ...(o.polls?.refillEveryMs !== undefined ? { refillEveryMs: o.polls.refillEveryMs } : {}) });
      await app.scheduler.start();
      // The daily domain re-check: every scheduler process runs the timer, the lease picks one.
      if (domainSettings) {
        app.domains = new DomainMonitor({
          store,
          clock,
          settings: domainSettings,
          log,
          owner: newId(clock.now(), random),
          ...(o.domains?.everyMs ? { everyMs: o.domains.everyMs } : {}),
          onCounts: (c) => {
            for (const [status, n] of Object.entries(c)) metrics.sendingDomains.set({ status }, n);
          },
        });
        app.domains.start();
        // The daily re-check of verified SSO domains, through the same resolver (the lease picks one process).
        app.ssoProofs = startSsoProofRecheck({ store, clock, random, resolver: domainSettings.resolver, log, owner: newId(clock.now(), random), ...(o.domains?.everyMs ? { everyMs: o.domains.everyMs } : {}) });
      }
      app.warmupPlan = new WarmupPlanRole({ store, clock, random, log, owner: newId(clock.now(), random) });
      app.warmupPlan.start();
      app.warmupPlacement = startPlacementDuty({ store, clock, log, owner: newId(clock.now(), random) });
      app.federation = new FederationRole({ store, clock, identity: federation, log, owner: newId(clock.now(), random), ...(o.federation?.everyMs ? { everyMs: o.federation.everyMs } : {}) });
      app.federation.start();
      app.privacyPurge = new PrivacyPurgeRole({ store, clock, log, owner: newId(clock.now(), random) });
      app.privacyPurge.start();
    }
    if (o.roles.includes('sender')) {
      app.senders = new SenderPool({
        store,
        service,
        clock,
        random,
        vault,
        connectors,
        trackingKey: trackingKey(master),
        publicUrl: o.publicUrl ?? `http://localhost:${o.port}`,
        ...(o.sending?.unknownGraceMs !== undefined ? { policy: { unknownGraceMs: o.sending.unknownGraceMs } } : {}),
        ...(o.sending?.resolveEveryMs !== undefined ? { resolveEveryMs: o.sending.resolveEveryMs } : {}),
        ...(o.sending?.leaseTtlMs !== undefined ? { leaseTtlMs: o.sending.leaseTtlMs } : {}),
        ...(o.polls?.planEveryMs !== undefined ? { planEveryMs: o.polls.planEveryMs } : {}),
        log,
        // Joining, leaving and handing a mailbox over tell the other processes' pools to balance now.
        announce: () => nudges.nudge('mailboxes'),
        // The mailbox last look found a lead's mail the sync has not read: pull that mailbox now.
        pullMailbox: (id) => nudges.pull(id),
        onPlanned: (ids) => nudges.planned(ids),
        // Warmup mail goes out through the same mailbox sender and bucket, after campaign mail.
        extraStepFor: warmupExtraStep({ store, clock, keyFor: warmupKey }),
        extraDueAt: warmupDueAt({ store, clock }),
        // Every step that reached a server or a verdict, by outcome (idle loops are not counted).
        onStep: (_mailboxId, r) => {
          if (r.kind !== 'idle') metrics.sends.inc({ outcome: r.kind });
        },
      });
      await app.senders.start();
      // What needs a mailbox credential and is asked for elsewhere (the API): one owner, here.
      app.credentialTasks = new CredentialTaskRunner({ store, clock, random, vault, connectors, oauthClients, log, owner: `tasks:${newId(clock.now(), random)}`, onDone: (id) => nudges.taskDone(id) });
      await app.credentialTasks.start();
    }
    if (o.roles.includes('sync')) {
      app.syncs = new SyncPool({
        store,
        service,
        clock,
        random,
        vault,
        connectors,
        trackingKey: trackingKey(master),
        // Warmup mail is taken aside (recorded, rescued, flagged, read) before anything user-facing.
        warmup: warmupRecogniser({ db: store.db, master, clock, random, log, federation }),
        metrics,
        log,
        announce: () => nudges.nudge('mailboxes'),
      });
      await app.syncs.start();
    }
  };
  const stopRoles = async () => {
    await Promise.all([app.senders?.stop(), app.credentialTasks?.stop(), app.syncs?.stop(), app.domains?.stop(), app.warmupPlan?.stop(), app.warmupPlacement?.stop(), app.ssoProofs?.stop(), app.federation?.stop(), app.privacyPurge?.stop()]);
    await app.scheduler?.stop();
    app.credentialTasks = undefined;
    app.domains = undefined;
    app.warmupPlacement = undefined;
    app.ssoProofs = undefined;
    app.federation = undefined;
    app.senders = undefined;
    app.syncs = undefined;
    app.scheduler = undefined;
  };
  await startRoles();
  // Commands run beside this server reach its embedded store through it (store/remote/server.ts):
  // the folder serves one process at a time, and this one holds it.
  const workKinds: readonly string[] = ['enrollments', 'requests', 'mailboxes'] satisfies WorkKind[];
  endpoint = o.databaseUrl
    ? undefined
    : await serveStoreEndpoint({ store, dbDir: embeddedDbDir(o.dataDir), nudge: (w) => workKinds.includes(w) && nudges.nudge(w as WorkKind), onError: (e) => log.warn({ err: e }, 'store endpoint for commands failed') });
  // The demo runs only where one process runs every role (npm start): elsewhere other processes'
  // roles, which it cannot suspend, would work on its mailboxes on real time.
  const everyRole = (['api', 'scheduler', 'sender', 'sync'] as const).every((r) => o.roles.includes(r));
  if (everyRole) demo = new DemoControl({ store, log, world, roles: { suspend: stopRoles, resume: startRoles }, publicUrl: o.publicUrl ?? `http://localhost:${o.port}` });
  if (o.roles.includes('api')) {
    app.setupToken = await setupTokenInDataDir(store, o.dataDir);
    if (app.setupToken) log.info({ file: app.setupToken.file }, 'first run: setup needs the token in this file (cadenza start prints it)');
    // Webhooks out are delivered by the API processes (claims are skip-locked: several share the work).
    const webhooks = new WebhookDispatcher({ store, clock, random, log, secrets: vault, allowPrivate: o.webhooks?.allowPrivate ?? false, ...(o.webhooks?.pollMs ? { pollMs: o.webhooks.pollMs } : {}) });
    app.webhooks = webhooks;
    webhooks.start();
    // CRM activities are written by the API processes too; one writer per connection at a time (a lease).
    const crm = new CrmSync({ store, clock, random, log, sealer: vault, owner: `crm:${newId(clock.now(), random)}`, engine: service, ...(o.publicUrl ? { publicUrl: o.publicUrl } : {}), onEnrolled: () => nudges.nudge('enrollments'), callMedia: callMediaReader({ publicUrl, sealer: vault }) });
    app.crm = crm;
    crm.start();
    const mailer = o.mailer ? smtpSystemMailer(o.mailer) : undefined;
    // The weekly report by email (src/api/weekly-report/): every API process with a system mailer
    // runs the job; the claim of each workspace's ISO week makes it one mail whatever runs it.
    weeklyReports = mailer
      ? runEvery(
          clock,
          WEEKLY_REPORT_EVERY_MS,
          async () => {
            const r = await sendDueWeeklyReports({ store, clock, mailer, owner: `api:${newId(clock.now(), random)}`, appUrl: publicUrl });
            if (r.sent.length || r.failed.length) log.info({ sent: r.sent, failed: r.failed }, 'weekly reports');
          },
          (e) => log.error({ err: e }, 'weekly reports failed'),
        )
      : undefined;
    // Notifications (src/api/notify/): the API hands recorded events out to members and delivers the
    // digests and Slack posts; claims are skip-locked, so several API processes share the work.
    notifications = startNotificationDuties({ store, clock, random, sealer: vault, log, allowPrivate: o.webhooks?.allowPrivate ?? false, ...(mailer ? { mailer } : {}), appUrl: publicUrl, ...(o.notifications?.everyMs ? { everyMs: o.notifications.everyMs } : {}) });
    // Custom tracking hosts: the API processes answer their challenges and serve them; the job
    // runs in each, under one lease.
    const customHosts = o.trackingDomains
      ? new CustomHosts(o.trackingDomains, { store, clock, vault, wrapper: localKeyWrapper(master), owner: `api:${newId(clock.now(), random)}`, log })
      : undefined;
    app.customHosts = customHosts;
    const trackingDomains = customHosts ? { trackingDomains: { publicHost: o.trackingDomains!.publicHost, nudge: () => customHosts.nudge(), httpsPort: () => app.trackingHttpsPort } } : {};
    app.server = buildServer({ ...(customHosts ? { customHosts } : {}), federation: { random, identity: federation, log }, store, clock: world, version, metrics, log, ...(o.metricsToken ? { metricsToken: o.metricsToken } : {}), ...(o.trustProxy !== undefined ? { trustProxy: o.trustProxy } : {}), tracking: { service, key: trackingKey(master), log, ...clickJournal(o) }, crmHooks: { sealer: vault, publicUrl, onOutcome: (result) => metrics.crmHooks.inc({ result }) },
      api: { erasure: erasureKey(master), ...(o.rspamdUrl ? { contentScorer: rspamdScorer({ url: o.rspamdUrl, timeoutMs: 5_000 }) } : {}), random, vault, service, credentialTasks: { signals: { nudge: () => nudges.nudge('credentials'), onDone: (fn) => nudges.onTaskDone(fn) } }, ...(o.hygiene ? { hygiene: HygieneChecker.withResolver(o.hygiene.dnsServer ? { server: o.hygiene.dnsServer } : {}, clock) } : {}), oauth: { clients: oauthClients, tokens: mailboxTokens }, ...(demo ? { demo } : {}), ...(mailer ? { mailer } : {}), workDue: () => nudges.nudge('enrollments'), mailboxesChanged: () => nudges.nudge('mailboxes'), realClock: clock, publicUrl: o.publicUrl ?? `http://localhost:${o.port}`, ...(domainSettings ? { domains: domainSettings } : {}), ...trackingDomains, ...(o.dialer ? { dialer: o.dialer } : {}), ...(consentAnnouncement ? { consentAnnouncement } : {}), ...(transcriber ? { transcripts: { nudge: () => transcriber?.nudge() } } : {}), ...defaultAuthSettings, webhooks: { allowPrivate: o.webhooks?.allowPrivate ?? false, nudge: () => webhooks.nudge() }, crm: { nudge: () => crm.nudge() }, ...(o.crmOAuth ? { crmOAuth: o.crmOAuth } : {}), federation: { identity: federation } },
      ...(push ? { push: { registry: push.registry, verificationToken: push.secret } } : {}),
      oauth: { store, vault, clients: oauthClients, clock, random, tokens: mailboxTokens, log, mailboxChanged: () => nudges.nudge('mailboxes'), ...(o.publicUrl ? { publicUrl: o.publicUrl } : {}) },
    });
    app.url = await app.server.listen({ port: o.port, host: o.host });
    if (customHosts) {
      app.trackingHttpsPort = (await customHosts.start(app.server)).httpsPort;
      log.info({ port: app.trackingHttpsPort, publicHost: o.trackingDomains!.publicHost }, 'custom tracking hosts: HTTPS listening');
    }
    // Each address it is bound to, and a URL for each that others can use: on a wildcard host
    // (0.0.0.0, ::) that is every interface, not the loopback URL listen() answers.
    const where = describeListening(app.server.addresses().filter((a) => typeof a !== 'string'), networkInterfaces());
    app.listening = where;
    log.info(
      { url: app.url, listening: where.bound, urls: where.urls, everyInterface: where.everyInterface, backend: store.backend, roles: o.roles },
      `cadenza is running on ${where.bound.join(', ')}${where.everyInterface ? ' (every interface)' : ''}: ${where.urls.join(' ')}`,
    );
  }
  return app;
}

/** Where clicks are journaled (src/tracking/click-journal.ts): one process owns the embedded store's data folder, so its journal can live there. */
function clickJournal(o: AppOptions): { journalDir?: string } {
  if (o.clickJournalDir) return { journalDir: o.clickJournalDir };
  return o.databaseUrl ? {} : { journalDir: `${o.dataDir.replace(/\/+$/, '')}/click-journal` };
}
