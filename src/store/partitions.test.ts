import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { ensureEventPartitions } from './partitions.ts';

describe.each(testBackends())('event partitions on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('creates monthly partitions ahead, routes events into them, and is idempotent', async () => {
    const now = Date.UTC(2027, 11, 15); // December: the next months cross a year
    const r = await ensureEventPartitions(store, now);
    expect(r.created).toEqual(['event_2027_12', 'event_2028_01', 'event_2028_02']);
    expect((await ensureEventPartitions(store, now)).created).toEqual([]);
    const ws = '00000000-0000-7000-8000-000000000001';
    await store.db.insertInto('event').values([
      { workspace_id: ws, type: 't', at: new Date(Date.UTC(2028, 0, 3)) },
      { workspace_id: ws, type: 't', at: new Date(Date.UTC(2020, 0, 3)) },
    ]).execute();
    const where = await sql<{ t: string; n: number }>`select tableoid::regclass::text as t, count(*)::int as n from event group by 1 order by 1`.execute(store.db);
    expect(where.rows).toEqual([
      { t: 'event_2028_01', n: 1 },
      { t: 'event_default', n: 1 },
    ]);
  });

  it('leaves a month in the default partition when it already holds rows of that month', async () => {
    const ws = '00000000-0000-7000-8000-000000000001';
    await store.db.insertInto('event').values({ workspace_id: ws, type: 't', at: new Date(Date.UTC(2031, 4, 3)) }).execute();
    const r = await ensureEventPartitions(store, Date.UTC(2031, 4, 1), 0);
    expect(r).toEqual({ created: [], skipped: ['event_2031_05'] });
  });
  it('processes starting together create each month once, and none fails', async () => {
    const now = Date.UTC(2033, 2, 10);
    const all = await Promise.all(Array.from({ length: 6 }, () => ensureEventPartitions(store, now)));
    expect(all.flatMap((r) => r.created).sort()).toEqual(['event_2033_03', 'event_2033_04', 'event_2033_05']);
  });
});
