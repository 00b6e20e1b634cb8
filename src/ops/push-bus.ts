import { sql } from 'kysely';
import pg from 'pg';
import type { Clock, TimerHandle } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import { BackoffSchedule, type BackoffPolicy } from '../common/backoff.ts';
import type { Store } from '../store/store.ts';
import { connectWritable } from '../store/pg-failover.ts';
import { parsePgHosts } from '../store/pg-hosts.ts';
import type { Metrics } from './metrics.ts';

/**
 * What processes tell each other over the bus: pushes relayed to a mailbox's sync owner
 * (mailbox/sync/push-relay.ts), work nudges (work-nudge.ts) and pulls.
 */
export type PushMessage =
  | { origin: string; kind: 'gmail'; emailAddress: string }
  | { origin: string; kind: 'graph'; clientState: string; subscriptionId: string; lifecycleEvent?: string }
  /** Work became due now (work-nudge.ts): the same bus wakes the scheduler and dispatcher of other processes. */
  | { origin: string; kind: 'work'; work: 'enrollments' | 'requests' | 'mailboxes' | 'credentials' }
  /** Pull this mailbox now (the sender's mailbox last look found mail the sync has not read): its sync owner pulls. */
  | { origin: string; kind: 'pull'; mailboxId: string }
  /** A credential task was carried out (sending/credential-tasks/): the process whose request waits for it answers now. */
  | { origin: string; kind: 'task_done'; taskId: string }
  /** A dispatcher gave these mailboxes new slots (work-nudge.ts): their send loops, wherever they run, read their next slot now. */
  | { origin: string; kind: 'planned'; mailboxIds: string[] };

export interface PushBus {
  publish(message: PushMessage): Promise<void>;
  /** Every message published by any process (this one included). */
  subscribe(receive: (message: PushMessage) => void): void;
  close(): Promise<void>;
}

const CHANNEL = 'cadenza_push';

/**
 * The push bus over PostgreSQL LISTEN/NOTIFY: publish is `pg_notify` on the store's pool (it is
 * delivered when that statement's transaction commits, at once here); one dedicated connection
 * LISTENs, reconnecting with backoff when it drops. NOTIFY is fire-and-forget: a message sent
 * while the listener is away is lost. So a loss is never silent: it is counted
 * (cadenza_push_bus_connection_lost_total) and, once listening again, `onReconnect` runs what the
 * lost messages might have asked for (app.ts: every work pass and a pull of every synced mailbox).
 *
 * The connection is a plain pg.Client, not a pool member, so no idle timeout closes it; TCP
 * keepalive makes a peer that vanished (a failover, a NAT or firewall dropping an idle flow)
 * show as an error instead of a listener that silently hears nothing. Keepalive alone is slow:
 * Node sets only its first delay, and Linux then probes every 75 s, 9 times (11 minutes). So the
 * listener also sends `select 1` every HEARTBEAT_MS: on a primary cut off from the network that
 * statement goes unanswered, stalled-query.ts finds the server gone and destroys the connection,
 * and the bus listens again on the new primary within seconds.
 */
const HEARTBEAT_MS = 5_000;
/**
 * The listener's reconnect delays: 0.5 s, 1 s, 2 s, then at most 5 s. One connection per process,
 * so none of the herd that the mailboxes' five-minute cap guards against; and every moment it is
 * away, replies are heard only by the catch-up pass. With the default cap, an etcd quorum lost for
 * 60 s (docs/operations.md) left the bus deaf for 49 s after writes came back.
 */
export const PUSH_BUS_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 5_000 };
/** close() waits this long for the server's goodbye, then drops the socket (a cut-off server sends none). */
const CLOSE_WAIT_MS = 2_000;
export async function postgresPushBus(o: {
  databaseUrl: string;
  store: Store;
  clock: Clock;
  random: Random;
  log?: Logger;
  metrics?: Metrics;
  /** After a lost connection is listening again: run the passes its lost messages might have asked for. */
  onReconnect?: () => void;
}): Promise<PushBus> {
  const receivers: Array<(m: PushMessage) => void> = [];
  let client: pg.Client | null = null;
  let closed = false;
  let retry: TimerHandle | null = null;
  let heartbeat: TimerHandle | null = null;
  const backoff = new BackoffSchedule(o.random, PUSH_BUS_BACKOFF);

  let lostSinceListen = false;
  const hosts = parsePgHosts(o.databaseUrl);

  const connect = async (): Promise<void> => {
    // LISTEN runs only on a primary: with several hosts, the one that takes writes (pg-failover.ts);
    // one round over the hosts, the backoff below is the wait.
    const c = await connectWritable(hosts, { keepAlive: true, keepAliveInitialDelayMillis: 10_000 }, 0);
    c.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      let m: PushMessage;
      try {
        m = JSON.parse(n.payload) as PushMessage;
      } catch {
        return;
      }
      for (const r of receivers) r(m);
    });
    const lost = (e?: unknown) => {
      // Our own close() ends the connection too: that is no loss (it used to log one at every stop).
      if (client !== c || closed) return;
      client = null;
      lostSinceListen = true;
      o.metrics?.pushBusLost.inc();
      o.log?.warn({ err: e }, 'push bus connection lost; reconnecting');
      void c.end().catch(() => undefined);
      reconnect();
    };
    c.on('error', lost);
    c.on('end', () => lost());
    await c.query(`listen ${CHANNEL}`);
    if (closed) {
      await endWithin(c, o.clock, CLOSE_WAIT_MS);
      return;
    }
    client = c;
    backoff.reset();
    const beat = () => {
      heartbeat = o.clock.setTimer(HEARTBEAT_MS, () => {
        if (client !== c) return;
        // A failure is reported by the connection's 'error' (lost, above); the next beat is set here.
        c.query('select 1').catch(() => undefined);
        beat();
      });
    };
    heartbeat?.cancel();
    beat();
    if (lostSinceListen) {
      lostSinceListen = false;
      o.log?.info('push bus listening again; catching up on what it may have missed');
      o.onReconnect?.();
    }
  };
  const reconnect = () => {
    if (closed || retry) return;
    retry = o.clock.setTimer(backoff.next(), () => {
      retry = null;
      connect().catch((e: unknown) => {
        o.log?.warn({ err: e }, 'push bus: cannot listen yet');
        reconnect();
      });
    });
  };

  await connect();
  return {
    publish: (m) => notifyPushBus(o.store, m),
    subscribe(receive) {
      receivers.push(receive);
    },
    async close() {
      closed = true;
      retry?.cancel();
      heartbeat?.cancel();
      const c = client;
      client = null;
      if (c) await endWithin(c, o.clock, CLOSE_WAIT_MS);
    },
  };
}

/** Ends the connection politely, or drops its socket when the server does not answer in time. */
async function endWithin(c: pg.Client, clock: Clock, ms: number): Promise<void> {
  let timer: TimerHandle | undefined;
  const late = new Promise<'late'>((r) => {
    timer = clock.setTimer(ms, () => r('late'));
  });
  const how = await Promise.race([c.end().then(() => 'ended' as const, () => 'ended' as const), late]);
  timer?.cancel();
  if (how === 'late') (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * One message onto the bus from a process that does not listen (the CLI): the Cadenza processes
 * running on the same PostgreSQL database hear it as they hear each other.
 */
export async function notifyPushBus(store: Store, m: PushMessage): Promise<void> {
  await sql`select pg_notify(${CHANNEL}, ${JSON.stringify(m)})`.execute(store.db);
}
