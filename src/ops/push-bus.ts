import { sql } from 'kysely';
import pg from 'pg';
import type { Clock, TimerHandle } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import { BackoffSchedule } from '../mailbox/sync/backoff.ts';
import type { PushBus, PushMessage } from '../mailbox/sync/push-relay.ts';
import type { Store } from '../store/store.ts';

const CHANNEL = 'cadenza_push';

/**
 * The push bus over PostgreSQL LISTEN/NOTIFY: publish is `pg_notify` on the store's pool (it is
 * delivered when that statement's transaction commits, at once here); one dedicated connection
 * LISTENs, reconnecting with backoff when it drops. NOTIFY is fire-and-forget: a message sent
 * while the listener is reconnecting is lost, which push tolerates (the owner's reconciliation
 * poll pulls anyway, and a reconnecting owner pulls once it is back).
 */
export async function postgresPushBus(o: { databaseUrl: string; store: Store; clock: Clock; random: Random; log?: Logger }): Promise<PushBus> {
  const receivers: Array<(m: PushMessage) => void> = [];
  let client: pg.Client | null = null;
  let closed = false;
  let retry: TimerHandle | null = null;
  const backoff = new BackoffSchedule(o.random);

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: o.databaseUrl });
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
      if (client !== c) return;
      client = null;
      o.log?.warn({ err: e }, 'push bus connection lost; reconnecting');
      void c.end().catch(() => undefined);
      reconnect();
    };
    c.on('error', lost);
    c.on('end', () => lost());
    await c.connect();
    await c.query(`listen ${CHANNEL}`);
    if (closed) {
      await c.end();
      return;
    }
    client = c;
    backoff.reset();
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
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}

/**
 * One message onto the bus from a process that does not listen (the CLI): the Cadenza processes
 * running on the same PostgreSQL database hear it as they hear each other.
 */
export async function notifyPushBus(store: Store, m: PushMessage): Promise<void> {
  await sql`select pg_notify(${CHANNEL}, ${JSON.stringify(m)})`.execute(store.db);
}
