import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import type { PushBus, PushMessage } from './push-bus.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import type { Logger } from '../common/logger.ts';
import { Metrics } from './metrics.ts';
import { postgresPushBus } from './push-bus.ts';

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

  it('closes without reporting a lost connection (every process logged one at its stop)', async () => {
    const quiet: string[] = [];
    const own = await postgresPushBus({ databaseUrl: store.url!, store, clock: systemClock, random: seededRandom('c'), metrics: new Metrics(), log: { ...log, warn: (_o: unknown, msg: string) => void quiet.push(msg) } as unknown as Logger });
    await own.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(quiet).toEqual([]);
  });
});
