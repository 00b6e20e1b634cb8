import type { Command } from 'commander';
import { isValidZone } from '../../calendar/index.ts';
import { cadenzaError } from '../../common/errors.ts';
import { deps, globals, nudgeRunning, output, table, withStore } from '../context.ts';
import { createNamedWorkspace, listWorkspaces, resolveWorkspace } from '../../workspace/workspaces.ts';
import { patchWorkspacePacing, readWorkspacePacing } from '../../mailbox/pacing/pacing-settings.ts';
import { addPacingOptions, describePacing, patchFromFlags, type PacingFlags } from '../pacing-flags.ts';

export function register(program: Command): void {
  const ws = program.command('workspace');
  ws.command('list')
    .description('list workspaces')
    .action(async (_o, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const rows = await listWorkspaces(store);
        output(g, rows, () => table(rows));
      });
    });
  addPacingOptions(
    ws
      .command('pacing')
      .description("the pacing defaults of the workspace's mailboxes (caps, ramp, gap, hours, days, lunch, human timing); without flags, show them")
      .option('--workspace <id|name>', 'workspace (default: the only one)'),
  ).action(async (o: PacingFlags & { workspace?: string }, cmd: Command) => {
    const g = globals(cmd);
    const patch = patchFromFlags(o);
    await withStore(g, async (store) => {
      const w = await resolveWorkspace(store, o.workspace);
      const view = patch ? await patchWorkspacePacing(store, w.id, patch) : await readWorkspacePacing(store.db, w.id);
      if (patch) await nudgeRunning(store, 'mailboxes');
      output(g, view, () => `workspace ${w.name}${patch ? ' updated' : ''}:\n${describePacing(view)}`);
    });
  });
  ws.command('create <name>')
    .description('create a workspace')
    .option('--zone <iana>', 'default time zone for leads and mailboxes without one', 'UTC')
    .option('--country <cc>', 'ISO country code')
    .action(async (name: string, o: { zone: string; country?: string }, cmd: Command) => {
      const g = globals(cmd);
      if (!isValidZone(o.zone)) throw cadenzaError('UNKNOWN_TIME_ZONE', `unknown time zone '${o.zone}'`);
      await withStore(g, async (store) => {
        const { id, replacedDefault } = await createNamedWorkspace(store, deps, { name, time_zone: o.zone, country: o.country?.toUpperCase() ?? null });
        if (replacedDefault) output(g, { id, name, replaced: 'Default' }, () => `workspace ${name} created (${id}), in place of the unused Default workspace`);
        else output(g, { id, name }, () => `workspace ${name} created (${id})`);
      });
    });
}
