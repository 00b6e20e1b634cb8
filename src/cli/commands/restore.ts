import type { Command } from 'commander';
import { restoreArgs } from '../../ops/pitr/pgbackrest.ts';
import { runPgBackRest } from '../../ops/pitr/run-pgbackrest.ts';
import { parseTargetTime } from '../../ops/pitr/target-time.ts';
import { deps, globals, output } from '../context.ts';
import { pgBackRestOptions, pgBackRestTarget } from './pitr-options.ts';

/**
 * `cadenza restore --to TIME`: restores Cadenza's PostgreSQL cluster, with pgBackRest, to the
 * instant TIME (the minute before a bad bulk action, say). PostgreSQL must be stopped (pgBackRest
 * refuses otherwise), and Cadenza with it; after it: start PostgreSQL (it replays the archived WAL
 * up to TIME and opens on a new timeline), then `cadenza reconcile-sent --since TIME` before
 * starting Cadenza, so that what the mailboxes sent after TIME is recorded and never sent again.
 */
export function register(program: Command): void {
  pgBackRestOptions(
    program
      .command('restore')
      .description("restore Cadenza's PostgreSQL cluster to an instant with pgBackRest (PostgreSQL stopped); then start it and run reconcile-sent --since the same instant")
      .requiredOption('--to <time>', '"YYYY-MM-DD HH:MM[:SS]" in --zone, or ISO 8601 with an offset')
      .option('--zone <iana>', 'the zone of a --to without an offset (default: this machine\'s)', 'system'),
  ).action(async (o: { to: string; zone: string; stanza: string; config?: string; asUser?: string }, cmd: Command) => {
    const g = globals(cmd);
    const at = parseTargetTime(o.to, deps.clock.now(), o.zone);
    const t = pgBackRestTarget(o);
    const started = deps.clock.now();
    await runPgBackRest(t, restoreArgs(t, at));
    const data = { restoredTo: new Date(at).toISOString(), tookMs: deps.clock.now() - started };
    output(g, data, () =>
      [
        `restored the cluster files to ${data.restoredTo} in ${(data.tookMs / 1000).toFixed(1)} s.`,
        'Next: start PostgreSQL (it replays the archive up to that instant and opens on a new timeline),',
        `then, before starting Cadenza: cadenza reconcile-sent --since ${data.restoredTo}`,
      ].join('\n'),
    );
  });
}
