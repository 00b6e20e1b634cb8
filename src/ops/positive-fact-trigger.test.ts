/**
 * The trigger that journals positive replies (migrations 0131, 0134) under the writes production
 * makes at once: one transaction storing the interested replies of many enrollments (a bulk import,
 * a lead batch deleted with its replies), and two transactions relabelling replies of one
 * enrollment side by side. The rollup's own exactness is figure-rollup.test.ts's.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { randomUUID } from 'node:crypto';

const DAY = 86_400_000;
const base = Date.UTC(2036, 2, 1);

describe.each(testBackends())('the positive-reply trigger (%s)', (backend) => {
  let store: TestStore;
  const ws = randomUUID();
  const seq = randomUUID();
  beforeAll(async () => {
    store = await freshStore(backend);
    await store.db.insertInto('workspace').values({ id: ws, name: 'Trigger' }).execute();
    await store.db.insertInto('sequence').values({ id: seq, workspace_id: ws, key: 't', name: 'Trigger', send_window: JSON.stringify({ kind: 'any' }) }).execute();
  });
  afterAll(async () => {
    await store?.destroy();
  });

  /** `n` enrollments (with their leads), made set-based; their ids. */
  async function enrollments(n: number, tag: string): Promise<string[]> {
    const r = await sql<{ id: string }>`
      with l as (
        insert into lead (id, workspace_id, email, email_norm)
        select gen_random_uuid(), ${ws}, ${tag} || g || '@p.test', ${tag} || g || '@p.test' from generate_series(1, ${n}::int) g
        returning id)
      insert into enrollment (id, workspace_id, sequence_id, lead_id, state, time_zone, zone_source)
      select gen_random_uuid(), ${ws}, ${seq}, l.id, 'active', 'UTC', 'workspace' from l
      returning id`.execute(store.db);
    return r.rows.map((x) => x.id);
  }

  /** Each enrollment's positive facts summed by time: what the rollup counts for it. */
  async function counted(ids: readonly string[]): Promise<Map<string, Array<{ at: number; n: number }>>> {
    const r = await sql<{ enrollment_id: string; at: Date; n: number }>`
      select enrollment_id, at, sum(n)::int as n from positive_fact where enrollment_id = any(${ids}::uuid[])
      group by 1, 2 having sum(n) <> 0 order by 1, 2`.execute(store.db);
    const out = new Map<string, Array<{ at: number; n: number }>>();
    for (const x of r.rows) out.set(x.enrollment_id, [...(out.get(x.enrollment_id) ?? []), { at: new Date(x.at).getTime(), n: x.n }]);
    return out;
  }

  it('one statement stores the interested replies of 20,000 enrollments, each counted once at its first', async () => {
    const ids = await enrollments(20_000, 'bulk');
    // Two replies each, the later one first: the trigger moves each count once.
    await sql`
      insert into message (id, workspace_id, enrollment_id, direction, message_id, at, intent)
      select gen_random_uuid(), ${ws}, e.id, 'inbound', '<' || e.id || '-' || k || '@p.test>', ${new Date(base)}::timestamptz + (k || ' days')::interval, 'interested'
      from unnest(${ids}::uuid[]) e(id), (values (2), (1)) v(k)`.execute(store.db);
    const c = await counted(ids);
    expect(c.size).toBe(ids.length);
    for (const id of ids) expect(c.get(id)).toEqual([{ at: base + DAY, n: 1 }]);
    // And one statement deletes them all (a lead batch deleted with its replies): nothing counts.
    await sql`delete from message where enrollment_id = any(${ids}::uuid[])`.execute(store.db);
    expect((await counted(ids)).size).toBe(0);
  }, 120_000);

  it.runIf(backend === 'postgres')('two transactions changing one enrollment\'s replies at once write facts that add up', async () => {
    const ids = await enrollments(20, 'race');
    const reply = (e: string, k: string, day: number) =>
      sql`insert into message (id, workspace_id, enrollment_id, direction, message_id, at, intent) values (${randomUUID()}, ${ws}, ${e}, 'inbound', ${`<${e}-${k}@p.test>`}, ${new Date(base + day * DAY)}, 'interested')`;
    for (const [i, e] of ids.entries()) {
      // The first transaction stores a reply and holds its lock; the second stores an earlier one
      // meanwhile and must wait for it, then see it. Half the rounds commit the first after the
      // second has started waiting, half roll it back.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let stored!: () => void;
      const inFirst = new Promise<void>((r) => (stored = r));
      const rollback = i % 2 === 1;
      const first = store.db
        .transaction()
        .execute(async (tx) => {
          await reply(e, 'a', 5).execute(tx);
          stored();
          await held;
          if (rollback) throw new Error('rolled back');
        })
        .catch((err: Error) => {
          if (err.message !== 'rolled back') throw err;
        });
      await inFirst;
      const second = store.db.transaction().execute(async (tx) => {
        await reply(e, 'b', 3).execute(tx);
      });
      // Give the second time to reach the lock before the first ends.
      await new Promise((r) => setTimeout(r, 30));
      release();
      await Promise.all([first, second]);
    }
    const c = await counted(ids);
    for (const e of ids) expect(c.get(e)).toEqual([{ at: base + 3 * DAY, n: 1 }]);
    // Relabelled from two sides at once: the earliest reply to "not interested" and a new one.
    await Promise.all(
      ids.map(async (e) => {
        await Promise.all([
          sql`update message set intent = 'not_interested' where enrollment_id = ${e} and message_id = ${`<${e}-b@p.test>`}`.execute(store.db),
          reply(e, 'c', 4).execute(store.db),
        ]);
      }),
    );
    const after = await counted(ids);
    for (const e of ids) expect(after.get(e)).toEqual([{ at: base + 4 * DAY, n: 1 }]);
  }, 120_000);
});
