import type pg from 'pg';
import { cadenzaError } from '../../common/errors.ts';
import { grantStatements } from './db-grants.ts';

/**
 * Runs db-grants.ts's statements on the database `c` is connected to, in one transaction, as the
 * superuser (`cadenza db grants`). With print, returns them without running anything.
 */
export async function applyGrants(c: pg.Client, o: { print?: boolean } = {}): Promise<{ database: string; tables: number; statements: string[] }> {
  const facts = await c.query<{ database: string; schema: string; owner: string | null }>(
    `select current_database() as database, current_schema() as schema,
            (select pg_get_userbyid(relowner) from pg_class where oid = to_regclass('schema_migration')) as owner`,
  );
  const f = facts.rows[0]!;
  if (!f.owner) throw cadenzaError('CONFIG_INVALID', `database ${f.database} has no Cadenza schema yet: run \`cadenza migrate\` first`);
  const tables = (await c.query<{ t: string }>(`select tablename as t from pg_tables where schemaname = current_schema()`)).rows.map((r) => r.t);
  const statements = grantStatements({ database: f.database, schema: f.schema, tables, owner: f.owner });
  if (o.print) return { database: f.database, tables: tables.length, statements };
  try {
    await c.query('begin');
    for (const s of statements) await c.query(s);
    await c.query('commit');
  } catch (e) {
    await c.query('rollback').catch(() => undefined);
    if ((e as { code?: string }).code === '42501') throw cadenzaError('CONFIG_INVALID', `cadenza db grants needs the superuser: ${(e as Error).message}`);
    throw e;
  }
  return { database: f.database, tables: tables.length, statements };
}
