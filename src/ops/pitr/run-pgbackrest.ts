import { spawn } from 'node:child_process';
import { cadenzaError } from '../../common/errors.ts';
import { pgbackrestCommand, type PgBackRestTarget } from './pgbackrest.ts';

/**
 * Runs pgBackRest; resolves with its standard output. Its own error text is the message when it
 * fails (it names the problem plainly: "unable to restore while PostgreSQL is running", a missing
 * stanza, an unreachable repository).
 */
export async function runPgBackRest(t: PgBackRestTarget, args: string[]): Promise<string> {
  const [file, argv] = pgbackrestCommand(args, t.asUser, process.getuid?.());
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => void (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => void (err += b.toString()));
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(cadenzaError('CONFIG_INVALID', e.code === 'ENOENT' ? `${file} is not installed (Debian: apt-get install pgbackrest)` : `cannot run ${file}: ${e.message}`)),
    );
    child.on('close', (code) => {
      if (code === 0) return resolve(out);
      const said = (err || out).trim().split('\n').filter(Boolean).slice(-3).join(' ').replace(/\s+/g, ' ');
      reject(cadenzaError('BACKUP_FAILED', `pgbackrest ${args.find((a) => !a.startsWith('--')) ?? ''} failed (exit ${code}): ${said}`, { exitCode: code }));
    });
  });
}
