import type { Command } from 'commander';
import { cadenzaError } from '../../common/errors.ts';
import { loadConfig } from '../../common/config.ts';
import { HygieneChecker } from '../../leads/hygiene/checker.ts';
import { importLeads, openInputFile } from '../../leads/import.ts';
import { erasureKey } from '../../common/erasure-key.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { deps, globals, masterKey, output, withStore } from '../context.ts';
import { progressBar } from '../progress.ts';

export function register(program: Command): void {
  program
    .command('import <file>')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--map <column=field>', "map a CSV column to a lead field (email, first_name, last_name, company, title, phone, country, region, time_zone, custom.NAME, or - to ignore); repeatable", (v: string, acc: string[] = []) => [...acc, v])
    .option('--on-duplicate <mode>', 'skip or update leads already in the workspace', 'skip')
    .option('--rejects <file>', 'write rejected rows with line and reason to this CSV (default: FILE.rejects.csv)')
    .action(async (file: string, o: { workspace?: string; map?: string[]; onDuplicate: string; rejects?: string }, cmd: Command) => {
      const g = globals(cmd);
      if (o.onDuplicate !== 'skip' && o.onDuplicate !== 'update') throw cadenzaError('INVALID_INPUT', '--on-duplicate is skip or update');
      const mapping: Record<string, string> = {};
      for (const m of o.map ?? []) {
        const i = m.lastIndexOf('=');
        if (i <= 0) throw cadenzaError('INVALID_INPUT', `--map takes column=field, got '${m}'`);
        mapping[m.slice(0, i)] = m.slice(i + 1);
      }
      const rejectFile = o.rejects ?? `${file.replace(/\.csv$/i, '')}.rejects.csv`;
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        // The file before the master key: a missing input is the error to report, whatever the key.
        await (await openInputFile(file)).close();
        const bar = progressBar(!g.json, 'importing');
        // List hygiene on each batch's written leads (docs/deliverability.md), as the API's import does.
        const checker = HygieneChecker.fromConfig(loadConfig(), deps.clock);
        const hygiene = { valid: 0, risky: 0, invalid: 0 };
        const r = await importLeads(store, {
          ...(checker
            ? {
                onBatch: async (b) => {
                  const c = (await checker.checkLeads(store.db, w.id, b.leadIds)).counts;
                  hygiene.valid += c.valid;
                  hygiene.risky += c.risky;
                  hygiene.invalid += c.invalid;
                },
              }
            : {}),
          workspaceId: w.id,
          input: file,
          // Addresses erased from the workspace are refused, as in the API's import.
          erasure: erasureKey(await masterKey(g, store)),
          ...(Object.keys(mapping).length ? { mapping } : {}),
          onDuplicate: o.onDuplicate as 'skip' | 'update',
          rejectFile,
          clock: deps.clock,
          random: deps.random,
          onProgress: (p) => bar.update(p.bytesRead, p.totalBytes),
        });
        bar.stop();
        const { issues, ...summary } = r;
        output(g, { ...summary, issues: issues.slice(0, 20), rejectFile: r.rejected ? rejectFile : null, hygiene: checker ? hygiene : null }, () =>
          [
            `read ${r.rowsRead} row(s) in ${(r.durationMs / 1000).toFixed(1)} s: ${r.imported} imported, ${r.updated} updated, ${r.unchanged} unchanged, ${r.rejected} rejected`,
            checker ? `  address check: ${hygiene.valid} valid, ${hygiene.risky} to review, ${hygiene.invalid} invalid (never enrolled)` : '',
            ...Object.entries(r.rejectsByReason).map(([k, n]) => `  rejected ${n}: ${k.replace(/_/g, ' ')}`),
            ...Object.entries(r.warningsByReason).map(([k, n]) => `  warning ${n}: ${k.replace(/_/g, ' ')} (imported without it)`),
            ...Object.entries(r.phonesFlaggedByReason).map(([k, n]) => `  phone flagged ${n}: ${k.replace(/_/g, ' ')} (imported with the number as written)`),
            r.rejected ? `rejected rows and reasons: ${rejectFile}` : '',
          ]
            .filter(Boolean)
            .join('\n'),
        );
      });
    });
}
