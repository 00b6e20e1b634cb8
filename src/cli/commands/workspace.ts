import type { Command } from 'commander';
import { isValidZone } from '../../sequence/calendar/index.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import { deps, globals, nudgeRunning, output, table, withStore } from '../context.ts';
import { resolveWorkspace, unusedDefaultWorkspace } from '../../ops/workspace.ts';
import { patchWorkspacePacing, readWorkspacePacing } from '../../ops/pacing-settings.ts';
import { addPacingOptions, describePacing, patchFromFlags, type PacingFlags } from '../pacing-flags.ts';

export function register(program: Command): void {
  const ws = program.command('workspace');
  ws.command('list')
    .description('list workspaces')
    .action(async (_o, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const rows = await store.db.selectFrom('workspace').select(['id', 'name', 'time_zone', 'country']).orderBy('created_at').execute();
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
        const values = { name, time_zone: o.zone, country: o.country?.toUpperCase() ?? null };
        const unused = await unusedDefaultWorkspace(store);
        if (unused) {
          await store.db.updateTable('workspace').set(values).where('id', '=', unused).execute();
          output(g, { id: unused, name, replaced: 'Default' }, () => `workspace ${name} created (${unused}), in place of the unused Default workspace`);
          return;
        }
        const id = newId(deps.clock.now(), deps.random);
        await store.db.insertInto('workspace').values({ id, ...values }).execute();
        output(g, { id, name }, () => `workspace ${name} created (${id})`);
      });
    });
}
