import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import type { PushBus, PushMessage } from './push-bus.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import type { Logger } from '../common/logger.ts';
import { Metrics } from './metrics.ts';
import { postgresPushBus, PUSH_BUS_BACKOFF } from './push-bus.ts';
import net from 'node:net';
import type { Clock } from '../common/clock.ts';

describe.skipIf(!testBackends().includes('postgres'))('push bus over PostgreSQL LISTEN/NOTIFY', () => {
  let store: TestStore;
  let a: PushBus;
  let b: PushBus;
  const got: PushMessage[] = [];
  const metrics = new Metrics();
  let caughtUp = 0;
  const warnings: string[] = [];
  const log = { warn: (_o: unknown, msg: string) => void warnings.push(msg), info: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;

  beforeAll(async () => {
    store = await freshStore('postgres');
    a = await postgresPushBus({ databaseUrl: store.url!, store, clock: systemClock, random: seededRandom('a') });
    b = await postgresPushBus({ databaseUrl: store.url!, store, clock: systemClock, random: seededRandom('b'), log, metrics, onReconnect: () => void caughtUp++ });
    b.subscribe((m) => got.push(m));
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store?.destroy();
  });

  const arrives = async (m: PushMessage, ms = 8_000) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      await a.publish(m);
      await new Promise((r) => setTimeout(r, 100));
      if (got.some((x) => JSON.stringify(x) === JSON.stringify(m))) return true;
    }
    return false;
  };

  it("carries a message to another connection's subscriber, and listens again after its connection is killed", async () => {
    expect(await arrives({ origin: 'a', kind: 'gmail', emailAddress: 'one@acme.test' }, 2_000)).toBe(true);
    const killed = await sql<{ n: number }>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = current_database() and query ilike 'listen cadenza_push%'`.execute(store.db);
    expect(killed.rows[0]!.n).toBe(2);
    expect(await arrives({ origin: 'a', kind: 'graph', clientState: 'x.y', subscriptionId: 's', lifecycleEvent: 'missed' })).toBe(true);
    // The loss is counted and followed by one catch-up (what its lost messages asked for runs anyway).
    expect(await metrics.text()).toMatch(/^cadenza_push_bus_connection_lost_total 1$/m);
    expect(caughtUp).toBe(1);
    expect(warnings).toEqual(['push bus connection lost; reconnecting']);
  });

  it('after a long outage listens again within seconds: its reconnect delays stay under five seconds however many tries failed', async () => {
    // PostgreSQL behind a relay this test opens and closes: closed, every try is refused at once.
    const target = new URL(store.url!);
    const sockets = new Set<net.Socket>();
    const relay = () =>
      net.createServer((inbound) => {
        const out = net.connect(Number(target.port || 5432), target.hostname);
        for (const x of [inbound, out]) {
          sockets.add(x);
          x.on('error', () => undefined);
          x.on('close', () => sockets.delete(x));
        }
        inbound.pipe(out).pipe(inbound);
      });
    let server = relay();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const url = new URL(store.url!);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    // Every timer fires after at most 20 ms, so a hundred failed tries take seconds; the delays the
    // bus asked for are recorded (the heartbeat's 5 s and the close's 2 s apart).
    const asked: number[] = [];
    const fast: Clock = {
      now: () => Date.now(),
      setTimer: (ms, fn) => {
        if (ms !== 5_000 && ms !== 2_000) asked.push(ms);
        return systemClock.setTimer(Math.min(ms, 20), fn);
      },
      sleep: (ms) => systemClock.sleep(Math.min(ms, 20)),
    };
    const heard: PushMessage[] = [];
    const bus = await postgresPushBus({ databaseUrl: url.toString(), store, clock: fast, random: seededRandom('outage') });
    bus.subscribe((m) => heard.push(m));
    try {
      // close() calls back once every connection has ended: end them first.
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const x of sockets) x.destroy();
      await closed;
      const until = Date.now() + 20_000;
      while (asked.length < 25 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(asked.length).toBeGreaterThanOrEqual(25);
      expect(Math.max(...asked)).toBeLessThanOrEqual(PUSH_BUS_BACKOFF.capMs);
      server = relay();
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      const m: PushMessage = { origin: 'a', kind: 'gmail', emailAddress: 'back@acme.test' };
      const end = Date.now() + 10_000;
      while (!heard.length && Date.now() < end) {
        await a.publish(m);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(heard).toContainEqual(m);
    } finally {
      await bus.close();
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const x of sockets) x.destroy();
      await closed;
    }
  }, 60_000);

  it('closes without reporting a lost connection (every process logged one at its stop)', async () => {
    const quiet: string[] = [];
    const own = await postgresPushBus({ databaseUrl: store.url!, store, clock: systemClock, random: seededRandom('c'), metrics: new Metrics(), log: { ...log, warn: (_o: unknown, msg: string) => void quiet.push(msg) } as unknown as Logger });
    await own.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(quiet).toEqual([]);
  });
});
