import type { KyselyPlugin } from 'kysely';
import type { Store } from '../src/store/store.ts';

/**
 * For tests and benchmarks: counts the SQL statements a store runs (every query Kysely compiles, `sql` templates included;
 * BEGIN and COMMIT are the driver's own and not counted): the store to hand to the code measured,
 * and the count so far.
 */
export function countingStore(store: Store): { store: Store; statements(): number } {
  let n = 0;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      n++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { store: { ...store, db: store.db.withPlugin(plugin), close: () => store.close() }, statements: () => n };
}
