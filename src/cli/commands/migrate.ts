import type { Command } from 'commander';
import { migrate, schemaVersion } from '../../store/migrate.ts';
import { ensureDefaultWorkspace } from '../../workspace/workspaces.ts';
import { deps, globals, output, withStore } from '../context.ts';

export function register(program: Command): void {
  program
    .command('migrate')
    .action(async (_opts, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const r = await migrate(store);
        await ensureDefaultWorkspace(store, deps);
        const data = { backend: store.backend, version: await schemaVersion(store), applied: r.applied };
        output(g, data, () => `database (${store.backend}) at migration ${data.version}${r.applied.length ? `; applied ${r.applied.join(', ')}` : '; nothing to apply'}`);
      }, { migrate: false });
    });
}
