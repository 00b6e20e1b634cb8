import type { Command } from 'commander';
import { recheckPhones } from '../../leads/recheck-phones.ts';
import { phoneFlagCodes, type PhoneFlagCode } from '../../leads/phone.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { globals, output, withStore } from '../context.ts';
import { progressBar } from '../progress.ts';

export function register(program: Command): void {
  const phones = program.command('phones');
  phones
    .command('recheck')
    .description("read the leads' stored numbers again (E.164 form, valid or flagged with a reason): leads written before numbers were read, or with --all every lead, after the workspace's country changed")
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--all', 'every lead with a number, not only those never read')
    .action(async (o: { workspace?: string; all?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const bar = progressBar(!g.json, 'reading numbers');
        const r = await recheckPhones(store.db, { workspaceId: w.id, all: o.all === true, onProgress: (d, t) => bar.update(d, t) });
        bar.stop();
        output(g, r, () =>
          [
            `read ${r.read} number(s) in ${w.name}: ${r.valid} valid, ${r.flagged} flagged; ${r.changed} lead(s) updated`,
            ...Object.entries(r.flaggedByReason).map(([k, n]) => `  flagged ${n}: ${phoneFlagCodes[k as PhoneFlagCode] ?? k}`),
          ].join('\n'),
        );
      });
    });
}
