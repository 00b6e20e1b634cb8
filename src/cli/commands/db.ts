import type { Command } from 'commander';
import pg from 'pg';
import { loadConfig } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import { DB_ROLES, grantStatements } from '../../ops/mtls/db-grants.ts';
import { globals, output } from '../context.ts';

/**
 * `cadenza db grants`: the least-privilege roles of the role processes (ops/mtls/db-grants.ts),
 * applied as the superuser to the database the URL names, after `cadenza migrate`.
 */
export function register(program: Command): void {
  const db = program.command('db').description('PostgreSQL administration as the superuser');
  db.command('grants')
    .description(`create the roles ${Object.values(DB_ROLES).join(', ')} and grant each what its process needs (run as the superuser after every \`cadenza migrate\`)`)
    .option('--print', 'print the statements instead of running them')
    .action(async (o: { print?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      const url = g.databaseUrl ?? loadConfig().DATABASE_URL;
      if (!url) throw cadenzaError('CONFIG_INVALID', 'cadenza db grants works on PostgreSQL: give --database-url (or DATABASE_URL) of the superuser');
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const facts = await c.query<{ database: string; schema: string; owner: string | null }>(
          `select current_database() as database, current_schema() as schema,
                  (select pg_get_userbyid(relowner) from pg_class where oid = to_regclass('schema_migration')) as owner`,
        );
        const f = facts.rows[0]!;
        if (!f.owner) throw cadenzaError('CONFIG_INVALID', `database ${f.database} has no Cadenza schema yet: run \`cadenza migrate\` first`);
        const tables = (await c.query<{ t: string }>(`select tablename as t from pg_tables where schemaname = current_schema()`)).rows.map((r) => r.t);
        const statements = grantStatements({ database: f.database, schema: f.schema, tables, owner: f.owner });
        if (o.print) {
          process.stdout.write(`${statements.join(';\n')};\n`);
          return;
        }
        await c.query('begin');
        for (const s of statements) await c.query(s);
        await c.query('commit');
        output(g, { database: f.database, roles: DB_ROLES, tables: tables.length, statements: statements.length }, () => `granted on ${f.database} (${tables.length} tables): ${Object.entries(DB_ROLES).map(([k, v]) => `${k} → ${v}`).join(', ')}`);
      } catch (e) {
        await c.query('rollback').catch(() => undefined);
        if ((e as { code?: string }).code === '42501') throw cadenzaError('CONFIG_INVALID', `cadenza db grants needs the superuser (or the owner of the schema with CREATEROLE): ${(e as Error).message}`);
        throw e;
      } finally {
        await c.end();
      }
    });
}
