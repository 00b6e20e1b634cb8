import type { Command } from 'commander';
import { buildConnector } from '../../mailbox/connectors/registry.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { parseTargetTime } from '../../ops/pitr/target-time.ts';
import { reconcileSent, type ReconcileReport } from '../../sending/reconcile-sent.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { deps, globals, masterKey, output, withStore } from '../context.ts';

/**
 * `cadenza reconcile-sent --since TIME`: after a restore to TIME, records as sent every step that
 * went out after TIME, read from each mailbox's Sent folder (sending/reconcile-sent.ts), so that
 * Cadenza never sends it again. Run it with Cadenza stopped, before starting it on the restored
 * database. Exit status 1 when a mailbox could not be read (run it again: it is idempotent).
 */
export function register(program: Command): void {
  program
    .command('reconcile-sent')
    .description("after a restore: record as sent the steps each mailbox's Sent folder shows went out since TIME (matched by Message-ID), so none is sent again")
    .requiredOption('--since <time>', 'the restore point: "YYYY-MM-DD HH:MM[:SS]" in --zone, or ISO 8601 with an offset')
    .option('--zone <iana>', 'the zone of a --since without an offset (default: this machine\'s)', 'system')
    .option('--workspace <id|name>', 'only this workspace (default: every workspace)')
    .action(async (o: { since: string; zone: string; workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      const since = parseTargetTime(o.since, deps.clock.now(), o.zone);
      const report = await withStore(g, async (store) => {
        const vault = new Vault(store, localKeyWrapper(await masterKey(g, store)));
        const workspaceId = o.workspace ? (await resolveWorkspace(store, o.workspace)).id : undefined;
        return reconcileSent(
          { store, ...deps, sentFolderOf: (m) => buildConnector(m, { vault, ...deps, needs: ['send'] }) },
          { since, ...(workspaceId ? { workspaceId } : {}) },
        );
      });
      output(g, report, () => human(report));
      if (report.mailboxes.some((m) => m.unavailable) || report.conflicts.length) process.exitCode = 1;
    });
}

function human(r: ReconcileReport): string {
  const lines = [`Sent folders since ${r.since}:`];
  for (const m of r.mailboxes) lines.push(m.unavailable ? `  ${m.email}: NOT READ (${m.unavailable})` : `  ${m.email}: ${m.copies} copies, ${m.recorded} steps recorded sent`);
  lines.push(`steps recorded as sent: ${r.recorded} (of them possibly sent, unsettled copies: ${r.possiblySent})`);
  lines.push(`already recorded: ${r.alreadyRecorded}; copies of no step in this database: ${r.unmatched}`);
  for (const c of r.conflicts) lines.push(`  CONFLICT ${c}`);
  lines.push(`took ${(r.durationMs / 1000).toFixed(1)} s`);
  return lines.join('\n');
}
