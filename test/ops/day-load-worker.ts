/**
 * One role process of the day's load test split over processes (day-load.ts `workers`): the
 * sender pool, the sync pool or both, as `cadenza start --roles sender,sync` runs them, on the
 * parent's database, against the parent's Gmail emulator (over HTTP) and on its clock. What the
 * processes share is what production processes share: the store (leases with fencing split the
 * mailboxes among them, membership.ts and fair-share.ts), and the push bus (LISTEN/NOTIFY): the
 * parent's push route relays each Gmail notification to the sync owner of the mailbox, the
 * scheduler's fired steps wake every dispatcher, and a dispatcher's planned mailboxes wake the
 * loops of the process that owns them (app.ts wires the same).
 *
 * Spawned by the parent with an IPC channel; its settings in CADENZA_DAY_LOAD_WORKER (JSON).
 * Messages: to the parent `ready`, `token` (a fresh access token for an address: the emulator's
 * token issuer lives in the parent), `replies` (the Message-IDs of replies this process's sync
 * committed, with the wall time of the commit) and `stats` at the end (CPU, peak RSS); from the
 * parent `token`, `senders` (start sending: every mailbox is synced) and `stop`.
 */
import { AcceleratedClock } from '../../src/demo/demo-clock.ts';
import { seededRandom } from '../../src/common/random.ts';
import { createLogger } from '../../src/common/logger.ts';
import { SyncPool } from '../../src/ingest/worker/sync-pool.ts';
import type { ConnectorSetup } from '../../src/mailbox/connectors/connector.ts';
import { RelayedPushRegistry } from '../../src/mailbox/sync/push-relay.ts';
import { localKeyWrapper, Vault } from '../../src/mailbox/vault.ts';
import { postgresPushBus } from '../../src/ops/push-bus.ts';
import { WorkNudges } from '../../src/ops/work-nudge.ts';
import { SenderPool } from '../../src/sending/sender-pool.ts';
import { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import { openStore } from '../../src/store/store.ts';
import { roleDeps, senderTuning, syncTuning } from './day-load-roles.ts';

export interface WorkerSettings {
  name: string;
  roles: Array<'sender' | 'sync'>;
  databaseUrl: string;
  poolSize: number;
  masterHex: string;
  pushSecret: string;
  gmailTopic: string;
  baseUrls: { gmail: string; graph: string };
  /** The parent's clock: its simulated time at the wall time `wallAt`, and its rate. */
  simAt: number;
  wallAt: number;
  rate: number;
  seed: string;
  logLevel: string;
}

export type ToParent =
  | { t: 'ready' }
  | { t: 'token'; id: number; address: string }
  | { t: 'replies'; at: number; ids: string[] }
  | { t: 'stats'; name: string; roles: string[]; pid: number; cpuSeconds: number; peakRssMiB: number };
export type ToWorker = { t: 'token'; id: number; token: string } | { t: 'senders' } | { t: 'stop' };

async function main(): Promise<void> {
  const s = JSON.parse(process.env.CADENZA_DAY_LOAD_WORKER ?? '') as WorkerSettings;
  const send = (m: ToParent) => process.send!(m);
  const clock = new AcceleratedClock(s.simAt + Math.floor((Date.now() - s.wallAt) * s.rate), s.rate);
  const real = (ms: number) => clock.realMs(ms);
  const random = seededRandom(`${s.seed}:${s.name}`);
  const log = createLogger({ level: s.logLevel, name: `day-load ${s.name}` });
  const store = await openStore({ databaseUrl: s.databaseUrl, poolSize: s.poolSize });
  const master = Buffer.from(s.masterHex, 'hex');
  const vault = new Vault(store, localKeyWrapper(master));
  const service = new EnrollmentService({ store, clock, random: random.fork('engine') });
  const bus = await postgresPushBus({ databaseUrl: s.databaseUrl, store, clock, random: random.fork('bus'), log });
  const nudges = new WorkNudges({ origin: s.name, bus, onError: (e) => log.warn({ err: e }, 'work nudge: publish failed') });
  const registry = new RelayedPushRegistry(bus, { origin: `${s.name}:push`, secret: s.pushSecret });

  // Access tokens come from the emulator's issuer, in the parent.
  let nextToken = 0;
  const waiting = new Map<number, (token: string) => void>();
  const freshToken = (address: string) =>
    new Promise<string>((resolve) => {
      const id = nextToken++;
      waiting.set(id, resolve);
      send({ t: 'token', id, address });
    });
  const connectors: ConnectorSetup = {
    tokens: (mailbox, credential) => {
      let token = credential.accessToken;
      return async ({ forceRefresh }) => {
        if (forceRefresh || token === undefined) token = await freshToken(mailbox.email);
        return token;
      };
    },
    baseUrls: s.baseUrls,
    httpTimeoutMs: real(30_000),
    push: { registry, secret: s.pushSecret, gmailTopic: s.gmailTopic },
  };

  let peakRss = process.memoryUsage().rss;
  const rssTimer = setInterval(() => void (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 1000);
  const cpu0 = process.cpuUsage();
  let syncs: SyncPool | undefined;
  let senders: SenderPool | undefined;
  nudges.on('requests', () => void senders?.nudge());
  nudges.onPlanned((ids) => senders?.wake(ids));
  nudges.onPull((id) => void syncs?.poke(id));
  nudges.on('mailboxes', () => {
    void senders?.balance();
    void syncs?.balance();
  });
  if (s.roles.includes('sync')) {
    syncs = new SyncPool({
      ...roleDeps({ store, service, clock, vault, master, connectors }),
      random: random.fork('sync'),
      ...syncTuning(clock),
      log,
      announce: () => nudges.nudge('mailboxes'),
      onBatch: (_mailboxId, report) => {
        const ids = report.messages.filter((m) => m.action === 'reply' && m.inserted).map((m) => m.messageId);
        if (ids.length) send({ t: 'replies', at: Date.now(), ids });
      },
    });
    await syncs.start();
  }
  const startSenders = async () => {
    if (!s.roles.includes('sender') || senders) return;
    senders = new SenderPool({
      ...roleDeps({ store, service, clock, vault, master, connectors }),
      random: random.fork('senders'),
      ...senderTuning(clock),
      log,
      announce: () => nudges.nudge('mailboxes'),
      pullMailbox: (id) => nudges.pull(id),
      onPlanned: (ids) => nudges.planned(ids),
    });
    await senders.start();
  };
  const stop = async () => {
    await senders?.stop();
    await syncs?.stop();
    clearInterval(rssTimer);
    const cpu = process.cpuUsage(cpu0);
    send({ t: 'stats', name: s.name, roles: s.roles, pid: process.pid, cpuSeconds: (cpu.user + cpu.system) / 1e6, peakRssMiB: Math.round(peakRss / 2 ** 20) });
    await bus.close();
    await store.close();
    process.disconnect();
  };
  process.on('message', (m: ToWorker) => {
    if (m.t === 'token') {
      waiting.get(m.id)?.(m.token);
      waiting.delete(m.id);
    } else if (m.t === 'senders') void startSenders().catch((e: unknown) => log.error({ err: e }, 'sender pool failed to start'));
    else if (m.t === 'stop') void stop().catch((e: unknown) => log.error({ err: e }, 'stop failed'));
  });
  send({ t: 'ready' });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
