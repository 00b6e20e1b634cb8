import type { Command } from 'commander';
import { cadenzaError } from '../../common/errors.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { readDefinitionFile } from '../../sequence/definition.ts';
import { loadDefinition, toDocument } from '../../sequence/definition-document.ts';
import { renderDefinitionYaml } from '../../sequence/definition-yaml.ts';
import { gapWarnings } from '../../sequence/gap-warnings.ts';
import { threadWarnings } from '../../sequence/thread-entry.ts';
import { poolGaps } from '../../mailbox/pacing/pacing-settings.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { listSequences, sequenceIdByKey } from '../../sequence/sql/sequences.ts';
import { deps, globals, nudgeRunning, output, table, withStore } from '../context.ts';

export function register(program: Command): void {
  const seq = program.command('sequence');
  seq
    .command('apply <file>')
    .description('create or update a sequence from a YAML or JSON definition (steps matched by key; running enrollments re-planned by the edit rule)')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--dry-run', 'validate the file and stop')
    .action(async (file: string, o: { workspace?: string; dryRun?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      const def = readDefinitionFile(file);
      if (o.dryRun) {
        output(g, { valid: true, key: def.key, steps: def.steps.length }, () => `${file}: valid (${def.steps.length} steps)`);
        return;
      }
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const summary = await applyDefinition(store, deps, w.id, def);
        const replanned = summary.created ? 0 : await new EnrollmentService({ store, ...deps }).replanSequence(summary.sequenceId);
        if (replanned > 0) await nudgeRunning(store, 'enrollments');
        const warnings = [...threadWarnings(def), ...gapWarnings(def, await poolGaps(store.db, w.id, def.mailboxes))];
        for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
        const data = { ...summary, replanned, warnings };
        output(g, data, () =>
          [
            `sequence ${def.key} ${summary.created ? 'created' : `updated to version ${summary.version}`} (${summary.sequenceId})`,
            summary.added.length ? `  added:    ${summary.added.join(', ')}` : '',
            summary.updated.length ? `  kept:     ${summary.updated.join(', ')}` : '',
            summary.removed.length ? `  removed:  ${summary.removed.join(', ')}` : '',
            summary.restored.length ? `  restored: ${summary.restored.join(', ')}` : '',
            summary.created ? '' : `  ${replanned} running enrollment(s) re-planned`,
          ]
            .filter(Boolean)
            .join('\n'),
        );
      });
    });
  seq
    .command('export <key>')
    .description('print a sequence as the definition file that would make it (YAML; --json for JSON): every setting, stop rule and step')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (key: string, o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const id = await sequenceIdByKey(store.db, w.id, key);
        const def = id && (await loadDefinition(store.db, w.id, id));
        if (!def) throw cadenzaError('NOT_FOUND', `no sequence with key '${key}' in workspace ${w.name}`);
        const { id: _id, version: _version, ...definition } = def;
        const doc = toDocument(definition);
        output(g, doc, () => renderDefinitionYaml(definition).trimEnd());
      });
    });
  seq
    .command('list')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const rows = (await listSequences(store.db, w.id, 'key')).map((s) => ({ key: s.key, name: s.name, status: s.status, version: s.version, steps: s.steps, active: s.active }));
        output(g, rows, () => table(rows));
      });
    });
}
