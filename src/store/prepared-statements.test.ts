import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { statementName, UNNAMED } from './prepared-statements.ts';
import { openStore, type Store } from './store.ts';

// PGlite has no pool and no named statements to keep: this is the PostgreSQL pool's behaviour.
describe.skipIf(!testBackends().includes('postgres'))('named prepared statements on PostgreSQL', () => {
  let base: TestStore;
  let store: Store;
  beforeAll(async () => {
    base = await freshStore('postgres');
  });
  afterEach(async () => {
    await store?.close();
  });
  afterAll(async () => {
    await base.destroy();
  });

  /** One connection, so that every statement (and pg_prepared_statements) sees the same session. */
  async function open(capacity: number): Promise<Store> {
    store = await openStore({ databaseUrl: base.url!, poolSize: 1, preparedStatements: capacity });
    return store;
  }

  async function prepared(s: Store): Promise<string[]> {
    const r = await sql<{ name: string }>`select name from pg_prepared_statements where name like ${'cz_%'}`.execute(s.db);
    return r.rows.map((x) => x.name);
  }

  const distinct = (i: number) => sql<{ v: number }>`select ${i}::int + ${sql.raw(String(i))} as v`;

  it('prepares a statement once per connection and binds it after', async () => {
    const s = await open(8);
    const q = sql<{ v: number }>`select ${1}::int as v`;
    for (let i = 0; i < 3; i++) expect((await q.execute(s.db)).rows).toEqual([{ v: 1 }]);
    const name = statementName(q.compile(s.db).sql);
    const r = await sql<{ n: number }>`select generic_plans + custom_plans as n from pg_prepared_statements where name = ${name}`.execute(s.db);
    expect(r.rows).toEqual([{ n: 3 }]);
  });

  it('with capacity 0 (CADENZA_PG_PREPARED_STATEMENTS=0, for a pooler in transaction mode) prepares nothing by name', async () => {
    const s = await open(0);
    for (let i = 0; i < 5; i++) expect((await distinct(i).execute(s.db)).rows).toEqual([{ v: 2 * i }]);
    expect(await prepared(s)).toEqual([]);
  });

  it('keeps at most capacity statements on the server, plus one group waiting to be deallocated', async () => {
    const s = await open(4);
    for (let i = 0; i < 100; i++) expect((await distinct(i).execute(s.db)).rows).toEqual([{ v: 2 * i }]);
    const held = await prepared(s);
    expect(held.length).toBeGreaterThanOrEqual(4);
    expect(held.length).toBeLessThanOrEqual(4 + 16 + 1);
  });

  it('evicts the least recently used, and prepares it again when it comes back', async () => {
    const s = await open(4);
    const first = distinct(1000);
    await first.execute(s.db);
    const name = statementName(first.compile(s.db).sql);
    // A hot statement used between the others stays; the first one is pushed out and deallocated.
    const hot = distinct(2000);
    for (let i = 0; i < 40; i++) {
      await distinct(3000 + i).execute(s.db);
      await hot.execute(s.db);
    }
    const held = await prepared(s);
    expect(held).not.toContain(name);
    expect(held).toContain(statementName(hot.compile(s.db).sql));
    expect((await first.execute(s.db)).rows).toEqual([{ v: 2000 }]);
    expect(await prepared(s)).toContain(name);
  });

  it('prepares again, and retries, a statement whose table a migration changed (outside a transaction)', async () => {
    const s = await open(8);
    await sql`create table plan_a (id int primary key)`.execute(s.db);
    await sql`insert into plan_a values (1)`.execute(s.db);
    const q = () => s.db.selectFrom('plan_a' as never).selectAll().execute();
    expect(await q()).toEqual([{ id: 1 }]);
    await sql`alter table plan_a add column note text default 'x'`.execute(s.db);
    expect(await q()).toEqual([{ id: 1, note: 'x' }]);
  });

  it('retries when the changed statement is the first of a transaction, which then goes on', async () => {
    const s = await open(8);
    await sql`create table plan_b (id int primary key)`.execute(s.db);
    await sql`insert into plan_b values (1)`.execute(s.db);
    const q = sql`select * from plan_b order by id`;
    expect((await q.execute(s.db)).rows).toEqual([{ id: 1 }]);
    await sql`alter table plan_b add column note text default 'y'`.execute(s.db);
    const rows = await s.db.transaction().execute(async (tx) => {
      const r = (await q.execute(tx)).rows;
      await sql`insert into plan_b values (${2})`.execute(tx);
      return r;
    });
    expect(rows).toEqual([{ id: 1, note: 'y' }]);
    expect((await q.execute(s.db)).rows).toEqual([{ id: 1, note: 'y' }, { id: 2, note: 'y' }]);
  });

  it('lets the error through mid-transaction (earlier writes are gone), and the next attempt runs prepared afresh', async () => {
    const s = await open(8);
    await sql`create table plan_c (id int primary key)`.execute(s.db);
    const q = sql`select * from plan_c order by id`;
    expect((await q.execute(s.db)).rows).toEqual([]);
    await sql`alter table plan_c add column note text default 'z'`.execute(s.db);
    const attempt = () =>
      s.db.transaction().execute(async (tx) => {
        await sql`insert into plan_c values (${1})`.execute(tx);
        return (await q.execute(tx)).rows;
      });
    await expect(attempt()).rejects.toThrow('cached plan must not change result type');
    expect((await sql`select count(*)::int as n from plan_c`.execute(s.db)).rows).toEqual([{ n: 0 }]);
    // The caller's retry: the stale plan was dropped after the rollback.
    expect(await attempt()).toEqual([{ id: 1, note: 'z' }]);
  });

  it('sends DDL, transaction control and parameterless multi-statement text unnamed', async () => {
    const s = await open(8);
    await sql`create table plan_d (id int); insert into plan_d values (1); insert into plan_d values (2)`.execute(s.db);
    await s.db.transaction().execute(async (tx) => {
      await sql`delete from plan_d where id = ${1}`.execute(tx);
    });
    expect((await sql`select count(*)::int as n from plan_d`.execute(s.db)).rows).toEqual([{ n: 1 }]);
    // A statement marked to be planned with its values on every call.
    expect((await sql`${sql.raw(UNNAMED)} select count(*)::int as n from plan_d where id = ${2}`.execute(s.db)).rows).toEqual([{ n: 1 }]);
    const held = await prepared(s);
    // The delete and the counts: the DDL script, BEGIN, COMMIT and the marked statement are not prepared.
    expect(held.length).toBe(3);
  });
});
