import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import type { PushBus, PushMessage } from '../mailbox/sync/push-relay.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { postgresPushBus } from './push-bus.ts';

describe.skipIf(!testBackends().includes('postgres'))('push bus over PostgreSQL LISTEN/NOTIFY', () => {
  let store: TestStore;
  let a: PushBus;
  let b: PushBus;
  const got: PushMessage[] = [];

  beforeAll(async () => {
    store = await freshStore('postgres');
    a = await postgresPushBus({ databaseUrl: store.url!, store, clock: systemClock, random: seededRandom('a') });
    b = await postgresPushBus({ databaseUrl: store.url!, store, clock: systemClock, random: seededRandom('b') });
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
  });
});
