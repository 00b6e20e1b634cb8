import type { Command } from 'commander';
import pg from 'pg';
import { loadConfig } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import { applyGrants } from '../../ops/mtls/apply-grants.ts';
import { DB_ROLES } from '../../ops/mtls/db-grants.ts';
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
        const r = await applyGrants(c, { print: o.print === true });
        if (o.print) process.stdout.write(`${r.statements.join(';\n')};\n`);
        else output(g, { database: r.database, roles: DB_ROLES, tables: r.tables, statements: r.statements.length }, () => `granted on ${r.database} (${r.tables} tables): ${Object.entries(DB_ROLES).map(([k, v]) => `${k} → ${v}`).join(', ')}`);
      } finally {
        await c.end();
      }
    });
}
