import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/**
 * Runs the real `cadenza` command in a child process, as a user would. `env` is added to this
 * process's environment; `embedded` leaves DATABASE_URL out, so the command opens the embedded
 * store under its --data-dir whatever the test run points at.
 */
export function cadenza(args: string[], opts: { cwd: string; env?: Record<string, string>; embedded?: boolean }) {
  const inherited = opts.embedded ? Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL')) : process.env;
  const r = spawnSync(process.execPath, [join(root, 'bin', 'cadenza.js'), ...args], { cwd: opts.cwd, encoding: 'utf8', env: { ...inherited, ...opts.env }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) as Record<string, any> };
}
