import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { cadenzaError } from '../../common/errors.ts';
import { recordAudit } from '../../api/audit/audit-log.ts';
import { erasedMarker, erasureKey } from '../../common/erasure-key.ts';
import { eraseSubject } from '../../privacy/erase.ts';
import { exportSubject, sectionCsv } from '../../privacy/export.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { openRecording } from '../../dialer/recording/ingest.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { deps, globals, masterKey, nudgeRunning, output, withStore } from '../context.ts';

/** The operator at the command line, as the audit log names them. */
const CLI_ACTOR = { kind: 'system' as const, label: 'cadenza privacy (command line)' };

export function register(program: Command): void {
  const p = program.command('privacy').description('subject access export and erasure of one person (docs/privacy.md)');

  p.command('export <email>')
    .description('everything stored about an address in the workspace: export.json, and with --out a folder with one CSV per section and the call recordings as WAV files')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--out <dir>', 'write export.json, <section>.csv files and recordings/<call id>.wav into this folder (created) instead of printing JSON')
    .action(async (email: string, o: { workspace?: string; out?: string }, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const master = await masterKey(g, store);
        const key = erasureKey(master);
        const vault = new Vault(store, localKeyWrapper(master));
        const x = await exportSubject(store.db, w.id, email, { now: deps.clock.now(), key, sealer: vault });
        await recordAudit(store.db, deps, { workspaceId: w.id, action: 'privacy.exported', actor: CLI_ACTOR, target: erasedMarker(key, w.id, x.email), detail: { via: 'cli' } });
        if (!o.out) return void process.stdout.write(`${JSON.stringify(x, null, 2)}\n`);
        mkdirSync(o.out, { recursive: true, mode: 0o700 });
        writeFileSync(join(o.out, 'export.json'), `${JSON.stringify(x, null, 2)}\n`, { mode: 0o600 });
        const written = Object.entries(x.sections).filter(([, rows]) => rows.length);
        for (const [name, rows] of written) writeFileSync(join(o.out, `${name}.csv`), sectionCsv(rows), { mode: 0o600 });
        // The person's recorded voice is theirs too: each recording, opened from its sealed copy,
        // as recordings/<call id>.wav (the JSON lists them; the API's export gives where to download each).
        const recordings = (x.sections.call_recordings ?? []).map((r) => String(r.call_id));
        if (recordings.length) mkdirSync(join(o.out, 'recordings'), { recursive: true, mode: 0o700 });
        let audio = 0;
        for (const callId of recordings) {
          const wav = await openRecording(store, vault, w.id, callId);
          if (!wav) continue; // deleted since the export read its list
          writeFileSync(join(o.out, 'recordings', `${callId}.wav`), wav, { mode: 0o600 });
          audio++;
        }
        output(g, { out: o.out, sections: Object.fromEntries(written.map(([n, r]) => [n, r.length])), recordings: audio }, () =>
          [
            `wrote ${join(o.out!, 'export.json')}`,
            ...written.map(([n, r]) => `  ${n}.csv: ${r.length} row${r.length === 1 ? '' : 's'}`),
            ...(audio ? [`  recordings/: ${audio} WAV file${audio === 1 ? '' : 's'}`] : []),
          ].join('\n'),
        );
      });
    });

  p.command('erase <email>')
    .description("erase a person: stop their enrollments, delete their data, keep a keyed hash in the suppression list so they are never mailed again")
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--yes', 'erasure cannot be undone: required')
    .action(async (email: string, o: { workspace?: string; yes?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      if (!o.yes) throw cadenzaError('INVALID_INPUT', 'erasure cannot be undone: add --yes', { field: 'yes' });
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const key = erasureKey(await masterKey(g, store));
        const service = new EnrollmentService({ store, clock: deps.clock, random: deps.random });
        const r = await eraseSubject({ store, service, clock: deps.clock, key }, w.id, email);
        await recordAudit(store.db, deps, { workspaceId: w.id, action: 'privacy.erased', actor: CLI_ACTOR, target: r.marker, detail: { via: 'cli', stopped: r.stopped, deleted: r.deleted } });
        // A running server's scheduler forgets the stopped enrollments' timers now.
        await nudgeRunning(store, 'enrollments');
        output(g, r, () => [`erased: ${r.stopped} enrollment(s) stopped; suppression kept as ${r.marker.slice(0, 20)}…`, ...Object.entries(r.deleted).map(([k, n]) => `  ${k}: ${n} deleted`)].join('\n'));
      });
    });
}
