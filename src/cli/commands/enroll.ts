import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfig } from '../../common/config.ts';
import { csvRecord } from '../../common/csv-write.ts';
import { HygieneChecker } from '../../leads/hygiene/checker.ts';
import { cadenzaError } from '../../common/errors.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { sequenceIdByKey } from '../../sequence/sql/sequences.ts';
import { allLeadIds, leadIdsByEmail } from '../../leads/sql/lead-ids.ts';
import type { Store } from '../../store/store.ts';
import { deps, globals, nudgeRunning, output, withStore } from '../context.ts';
import { progressBar } from '../progress.ts';

interface EnrollOpts {
  sequence: string;
  workspace?: string;
  all?: boolean;
  leads?: string;
  lead?: string[];
  rejects?: string;
}

export function register(program: Command): void {
  program
    .command('enroll')
    .requiredOption('--sequence <key>', 'the sequence key')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--all', 'every lead of the workspace')
    .option('--leads <file>', 'a file with one email address or lead id per line')
    .option('--lead <email>', 'a lead by email (repeatable)', (v: string, acc: string[] = []) => [...acc, v])
    .option('--rejects <file>', 'write refused leads with their reason to this CSV file')
    .action(async (o: EnrollOpts, cmd: Command) => {
      const g = globals(cmd);
      const chosen = [o.all, o.leads, o.lead].filter((x) => x !== undefined).length;
      if (chosen !== 1) throw cadenzaError('INVALID_INPUT', 'choose the leads with exactly one of --all, --leads FILE or --lead EMAIL');
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const sequenceId = await sequenceIdByKey(store.db, w.id, o.sequence);
        if (!sequenceId) throw cadenzaError('NOT_FOUND', `sequence '${o.sequence}' not found (see \`cadenza sequence list\`)`);
        const { ids, unknown } = await selectLeads(store, w.id, o);
        // Every enrolled address is checked: the leads never checked, or whose DNS did not answer last time, are checked now (docs/deliverability.md).
        await HygieneChecker.fromConfig(loadConfig(), deps.clock)?.checkLeads(store.db, w.id, ids, { onlyDue: true });
        const bar = progressBar(!g.json, 'enrolling');
        const r = await bulkEnroll(store, deps, { workspaceId: w.id, sequenceId, leadIds: ids, onProgress: (d, t) => bar.update(d, t) });
        bar.stop();
        if (r.enrolled > 0) await nudgeRunning(store, 'enrollments');
        const refused = [...unknown.map((u) => ({ leadId: '', email: u, reason: 'not_found' as const })), ...r.refused];
        const byReason: Record<string, number> = {};
        for (const x of refused) byReason[x.reason] = (byReason[x.reason] ?? 0) + 1;
        if (o.rejects) {
          const csv = ['lead_id,email,reason,detail', ...refused.map((x) => csvRecord([x.leadId, x.email ?? '', x.reason, 'detail' in x ? (x.detail ?? '') : ''], ',', ''))];
          writeFileSync(o.rejects, `${csv.join('\n')}\n`);
        }
        const data = { sequence: o.sequence, enrolled: r.enrolled, refused: refused.length, refusedByReason: byReason, durationMs: r.durationMs, ...(g.json ? { refusedLeads: refused } : {}) };
        output(g, data, () =>
          [
            `enrolled ${r.enrolled} lead(s) in ${o.sequence} in ${(r.durationMs / 1000).toFixed(1)} s`,
            ...Object.entries(byReason).map(([k, n]) => `  refused ${n}: ${k.replace(/_/g, ' ')}`),
            o.rejects && refused.length ? `  refused leads written to ${o.rejects}` : '',
          ]
            .filter(Boolean)
            .join('\n'),
        );
      });
    });
}

async function selectLeads(store: Store, workspaceId: string, o: EnrollOpts): Promise<{ ids: string[]; unknown: string[] }> {
  if (o.all) return { ids: await allLeadIds(store.db, workspaceId), unknown: [] };
  let refs: string[];
  if (o.leads) {
    let text: string;
    try {
      text = readFileSync(o.leads, 'utf8');
    } catch (e) {
      throw cadenzaError('INVALID_INPUT', `cannot read ${o.leads}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    refs = text.split(/\r?\n/).map((l) => l.split(',')[0]!.trim()).filter((l) => l && !/^e-?mail|^id$|^lead_id$/i.test(l));
  } else refs = o.lead ?? [];
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const ids = refs.filter((r) => uuid.test(r));
  const emails = [...new Set(refs.filter((r) => !uuid.test(r)).map((e) => e.toLowerCase()))];
  const found = await leadIdsByEmail(store.db, workspaceId, emails);
  return { ids: [...ids, ...found.values()], unknown: emails.filter((e) => !found.has(e)) };
}
