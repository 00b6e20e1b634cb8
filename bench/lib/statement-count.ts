/**
 * Counts the SQL statements a process sends to its database, BEGIN and COMMIT included, at the
 * drivers' doors: pg's Client.query (node-postgres, under Kysely's PostgresDialect) and PGlite's
 * query (under the PGlite dialect). For a benchmark's "statements per send"; read it around a
 * phase in which nothing else of this process talks to the database.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

let count = 0;
/** CADENZA_BENCH_TRACE_SQL=1: every statement to stderr, to see which ones a send makes. */
const trace = !!process.env.CADENZA_BENCH_TRACE_SQL;
let installed = false;

export function countStatements(): { read(): number } {
  if (!installed) {
    installed = true;
    for (const proto of [pg.Client.prototype, PGlite.prototype] as Array<{ query: (...a: unknown[]) => unknown }>) {
      const original = proto.query;
      proto.query = function (this: unknown, ...a: unknown[]) {
        count++;
        if (trace) console.error('SQL', String(typeof a[0] === 'string' ? a[0] : (a[0] as { text?: string })?.text).replace(/\s+/g, ' ').slice(0, 150));
        return original.apply(this, a);
      };
    }
  }
  return { read: () => count };
}
