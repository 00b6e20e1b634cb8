import type { Command } from 'commander';
import { cadenzaError } from '../../common/errors.ts';
import { initCa, issueCert, listCa, retire, rotate } from '../../ops/mtls/ca-folder.ts';
import { deps, globals, output, table } from '../context.ts';

/**
 * `cadenza ca`: the private CA for TLS between the role processes and PostgreSQL, with client
 * certificates whose CN is the database role each process logs in as (docs/security.md "Database
 * connections"). It works on a folder only: no database, no server.
 */
const dirOption = ['--dir <dir>', "the CA's folder (env CADENZA_CA_DIR, default ./ca)"] as const;
const dirOf = (o: { dir?: string }) => o.dir ?? process.env.CADENZA_CA_DIR ?? './ca';

function days(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 36_500) throw cadenzaError('INVALID_INPUT', `${what} must be a whole number of days from 1 to 36500 (got '${text}')`);
  return n;
}

export function register(program: Command): void {
  const ca = program.command('ca').description('the private CA for TLS between the role processes and PostgreSQL: init, issue, rotate, retire, list');

  ca.command('init')
    .description('create the CA (ca.crt, ca.key) and trust.pem in the folder')
    .option(...dirOption)
    .option('--name <cn>', "the CA's common name", 'Cadenza database CA')
    .option('--days <n>', 'how long the CA is valid', '3650')
    .action(async (o: { dir?: string; name: string; days: string }, cmd: Command) => {
      const g = globals(cmd);
      const info = await initCa(dirOf(o), { name: o.name, days: days(o.days, '--days'), nowMs: deps.clock.now() });
      output(g, { dir: dirOf(o), ca: info }, () => `CA '${info.commonName}' created in ${dirOf(o)}, valid until ${info.notAfter.toISOString()}`);
    });

  ca.command('issue <name>')
    .description("issue certs/<name>.crt and .key: a client certificate whose CN is the database role <name>, or with --server, PostgreSQL's certificate")
    .option(...dirOption)
    .option('--server', "a server certificate (PostgreSQL's); needs --host")
    .option('--host <names>', 'server: comma-separated host names and IP addresses clients connect to', (v: string, prev: string[] = []) => [...prev, ...v.split(',').map((s) => s.trim()).filter(Boolean)])
    .option('--days <n>', 'how long the certificate is valid (default 90 for a client, 397 for a server)')
    .action(async (name: string, o: { dir?: string; server?: boolean; host?: string[]; days?: string }, cmd: Command) => {
      const g = globals(cmd);
      const kind = o.server ? 'server' : 'client';
      const info = await issueCert(dirOf(o), { name, kind, ...(o.host ? { hosts: o.host } : {}), days: days(o.days ?? (o.server ? '397' : '90'), '--days'), nowMs: deps.clock.now() });
      output(g, { name, ...info }, () => `${kind} certificate ${name} issued (certs/${name}.crt, certs/${name}.key), valid until ${info.notAfter.toISOString()}${info.hosts.length ? ` for ${info.hosts.join(', ')}` : ''}`);
    });

  ca.command('rotate')
    .description('reissue the certificates that expire soon; with --new-ca, replace the CA and reissue every certificate, the old CA staying trusted until `ca retire`')
    .option(...dirOption)
    .option('--within <days>', 'reissue what expires within this many days', '30')
    .option('--new-ca', 'replace the CA itself')
    .option('--ca-days <n>', 'how long a new CA is valid', '3650')
    .action(async (o: { dir?: string; within: string; newCa?: boolean; caDays: string }, cmd: Command) => {
      const g = globals(cmd);
      const r = await rotate(dirOf(o), { withinDays: days(o.within, '--within'), newCa: o.newCa === true, caDays: days(o.caDays, '--ca-days'), nowMs: deps.clock.now() });
      output(g, r, () =>
        [
          ...(r.newCa ? [`new CA ${r.newCa.serial}, valid until ${r.newCa.notAfter.toISOString()}; trust.pem holds ${r.trusted.length} CA(s) until \`cadenza ca retire\``] : []),
          ...r.plan.reissue.map((x) => `reissued ${x.name}: ${x.reason}`),
          ...(r.plan.keep.length ? [`kept ${r.plan.keep.join(', ')}`] : []),
          'copy the reissued files to PostgreSQL and the role processes, then reload PostgreSQL (pg_ctl reload) and restart the roles',
        ].join('\n'),
      );
    });

  ca.command('retire')
    .description('end a CA rotation: the replaced CAs leave trust.pem (run once every server and role uses the new files)')
    .option(...dirOption)
    .action((o: { dir?: string }, cmd: Command) => {
      const g = globals(cmd);
      const r = retire(dirOf(o), deps.clock.now());
      output(g, r, () => (r.removed.length ? `no longer trusted: ${r.removed.join(', ')}; copy trust.pem to PostgreSQL and the roles` : 'no retired CA to remove'));
    });

  ca.command('list')
    .description('the CA, the retired CAs still trusted, and every certificate issued, with expiry')
    .option(...dirOption)
    .action(async (o: { dir?: string }, cmd: Command) => {
      const g = globals(cmd);
      const rows = (await listCa(dirOf(o), deps.clock.now())).map((e) => ({
        name: e.name,
        kind: e.role,
        cn: e.info.commonName,
        issuer: e.info.issuer,
        notAfter: e.info.notAfter.toISOString(),
        daysLeft: e.daysLeft,
        trusted: e.trusted,
        hosts: e.info.hosts.join(','),
      }));
      output(g, rows, () => table(rows));
    });
}
