import type { Command } from 'commander';
import { cadenzaError } from '../../common/errors.ts';
import { backupArgs, infoArgs, summariseInfo, type BackupType, type StanzaSummary } from '../../ops/pitr/pgbackrest.ts';
import { runPgBackRest } from '../../ops/pitr/run-pgbackrest.ts';
import { deps, globals, output } from '../context.ts';
import { pgBackRestOptions, pgBackRestTarget } from './pitr-options.ts';

/**
 * `cadenza backup`: a base backup of Cadenza's PostgreSQL cluster with pgBackRest, then what the
 * repository holds (every backup, the WAL archive, the earliest instant a restore can reach).
 * `cadenza backup --list` only lists. The WAL archiving that makes any instant between backups
 * reachable is PostgreSQL's archive_command (docs/operations.md, "Point-in-time recovery").
 */
export function register(program: Command): void {
  pgBackRestOptions(
    program
      .command('backup')
      .description("back up Cadenza's PostgreSQL cluster with pgBackRest (full, diff or incr); --list shows the backups and the restorable range")
      .option('--type <type>', 'full, diff (changes since the last full) or incr (since the last backup)', 'full')
      .option('--list', 'list the backups only, take none'),
  ).action(async (o: { type: string; list?: boolean; stanza: string; config?: string; asUser?: string }, cmd: Command) => {
    const g = globals(cmd);
    if (!['full', 'diff', 'incr'].includes(o.type)) throw cadenzaError('INVALID_INPUT', `--type must be full, diff or incr, not '${o.type}'`);
    const t = pgBackRestTarget(o);
    const started = deps.clock.now();
    if (!o.list) await runPgBackRest(t, backupArgs(t, o.type as BackupType));
    const tookMs = deps.clock.now() - started;
    const info = summariseInfo(JSON.parse(await runPgBackRest(t, infoArgs(t))), t.stanza);
    output(g, { ...(o.list ? {} : { tookMs }), ...info }, () => human(info, o.list ? null : tookMs));
  });
}

function human(s: StanzaSummary, tookMs: number | null): string {
  const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`;
  const lines = tookMs === null ? [] : [`backup taken in ${(tookMs / 1000).toFixed(1)} s`];
  lines.push(`stanza ${s.stanza}: ${s.status}`);
  for (const b of s.backups) lines.push(`  ${b.label} ${b.type.padEnd(4)} ${b.startedAt} → ${b.stoppedAt}  database ${mb(b.databaseBytes)}, stored ${mb(b.repositoryBytes)}`);
  lines.push(`WAL archive: ${s.archive.min ?? 'empty'} … ${s.archive.max ?? ''}`);
  lines.push(s.restorableFrom ? `restorable to any instant from ${s.restorableFrom} to the newest archived WAL` : 'no backup yet: nothing can be restored');
  return lines.join('\n');
}
