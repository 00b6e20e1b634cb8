import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { migrate } from './migrate.ts';

describe.each(testBackends())('store on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('is migrated, and migrating again applies nothing', async () => {
    const r = await migrate(store);
    expect(r.applied).toEqual([]);
    const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'public'`.execute(store.db);
    const names = tables.rows.map((t) => t.table_name);
    for (const t of ['workspace', 'app_user', 'mailbox', 'lead', 'sequence', 'step', 'variant', 'enrollment', 'send_request', 'message', 'task', 'event', 'suppression']) {
      expect(names).toContain(t);
    }
  });

  it('rolls a failed transaction back', async () => {
    const id = '00000000-0000-7000-8000-000000000001';
    await expect(
      store.db.transaction().execute(async (tx) => {
        await tx.insertInto('workspace').values({ id, name: 'w' }).execute();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.db.selectFrom('workspace').selectAll().where('id', '=', id).execute()).toEqual([]);
  });

  it('keeps concurrent transactions apart', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `00000000-0000-7000-8000-${String(100 + i).padStart(12, '0')}`);
    await Promise.all(
      ids.map((id, i) =>
        store.db
          .transaction()
          .execute(async (tx) => {
            await tx.insertInto('workspace').values({ id, name: `w${i}` }).execute();
            if (i % 2) throw new Error('odd');
          })
          .catch(() => undefined),
      ),
    );
    const rows = await store.db.selectFrom('workspace').select('id').where('id', 'in', ids).execute();
    expect(rows.length).toBe(10);
  });

  it('returns int8 as numbers and jsonb as objects on both backends', async () => {
    const r = await sql<{ n: number; j: { a: number } }>`select 5::int8 as n, '{"a":1}'::jsonb as j`.execute(store.db);
    expect(r.rows[0]).toEqual({ n: 5, j: { a: 1 } });
  });
});
