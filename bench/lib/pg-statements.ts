/**
 * Where a benchmark's PostgreSQL time goes, statement by statement: pg_stat_statements (a contrib
 * module shipped with PostgreSQL) over the benchmark's own database, reset when the phase to
 * measure begins. It needs the server started with `shared_preload_libraries = 'pg_stat_statements'`
 * (docs/operations.md, "Profiling PostgreSQL"); without it the profile says so and measures nothing.
 *
 * The times are the executor's (lock waits included, planning not), so on a shared machine they
 * say which statements take the database's time, in shares, more than how long each would take
 * alone.
 */
import pg from 'pg';

export interface StatementRow {
  /** The statement's text, whitespace collapsed, cut to 160 characters. */
  query: string;
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
  /** Share of the database's executor time over every statement measured. */
  share: number;
}

export interface StatementProfile {
  /** False: the module is not loaded in the server; `reset` and `top` do nothing. */
  available: boolean;
  reset(): Promise<void>;
  top(n: number): Promise<{ totalMs: number; calls: number; rows: StatementRow[] }>;
  close(): Promise<void>;
}

export async function statementProfile(url: string): Promise<StatementProfile> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const loaded = (await client.query<{ s: string }>(`select current_setting('shared_preload_libraries') as s`)).rows[0]!.s;
  const available = /(^|,)\s*pg_stat_statements\s*(,|$)/.test(loaded);
  if (available) await client.query('create extension if not exists pg_stat_statements');
  const ours = `dbid = (select oid from pg_database where datname = current_database())`;
  return {
    available,
    async reset() {
      if (available) await client.query('select pg_stat_statements_reset()');
    },
    async top(n) {
      if (!available) return { totalMs: 0, calls: 0, rows: [] };
      const all = (await client.query<{ total: number; calls: string }>(`select coalesce(sum(total_exec_time), 0)::float8 as total, coalesce(sum(calls), 0)::text as calls from pg_stat_statements where ${ours}`)).rows[0]!;
      const r = await client.query<{ query: string; calls: string; total: number; rows: string }>(
        `select query, calls::text, total_exec_time::float8 as total, rows::text from pg_stat_statements where ${ours} order by total_exec_time desc limit $1`,
        [n],
      );
      return {
        totalMs: all.total,
        calls: Number(all.calls),
        rows: r.rows.map((x) => ({
          query: x.query.replace(/\s+/g, ' ').trim().slice(0, 160),
          calls: Number(x.calls),
          totalMs: x.total,
          meanMs: x.total / Math.max(1, Number(x.calls)),
          rows: Number(x.rows),
          share: all.total > 0 ? x.total / all.total : 0,
        })),
      };
    },
    close: () => client.end(),
  };
}
