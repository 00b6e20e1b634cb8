import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store } from '../src/store/store.ts';
import { migrate } from '../src/store/migrate.ts';
import { pgUrlFor, retryWhileInUse, templateName, testBackends, withAdmin } from './pg-admin.ts';
import { migratedPgliteDump } from './pglite-template.ts';

export { testBackends };

export interface TestStore extends Store {
  /** Drops the database (PostgreSQL) and closes the store. */
  destroy(): Promise<void>;
  /** PostgreSQL only: the database URL, so a test can open a second pool as another process would. */
  url?: string;
}

/**
 * A fresh, migrated store on the given backend: PGlite in memory loaded from the migrated dump
 * (pglite-template.ts), or a PostgreSQL database cloned from the migrated template. Each call is isolated from every other.
 */
export async function freshStore(backend: 'pglite' | 'postgres', opts: { poolSize?: number } = {}): Promise<TestStore> {
  if (backend === 'pglite') {
    const store = await openStore({ startFrom: await migratedPgliteDump() });
    // The dump is migrated; this applies nothing unless a migration was added since (then the
    // template's name changes and it is rebuilt) — and checks that it was.
    await migrate(store);
    return { ...store, destroy: () => store.close() };
  }
  // The parent is the vitest process (pool: forks); see global-setup.ts for the clean-up rule.
  const name = `cadenza_t_${process.ppid}_${randomBytes(6).toString('hex')}`;
  await withAdmin((c) => retryWhileInUse(() => c.query(`create database ${name} template ${templateName()}`)));
  const store = await openStore({ databaseUrl: pgUrlFor(name), poolSize: opts.poolSize ?? 8 });
  return {
    ...store,
    url: pgUrlFor(name),
    async destroy() {
      await store.close();
      await withAdmin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}


/**
 * A fresh store of this backend for the enclosing describe block, made before its tests and
 * destroyed after them: the getter answers it inside the tests (the block's usual
 * `let store; beforeAll(freshStore); afterAll(destroy)`, once).
 */
export function useFreshStore(backend: 'pglite' | 'postgres'): () => TestStore {
  let store: TestStore | undefined;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store?.destroy();
  });
  return () => store!;
}
