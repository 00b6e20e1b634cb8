import { spawn } from 'node:child_process';
import type { RoleChild } from './supervisor.ts';

/**
 * A supervised child: this very program again (`process.execPath`, its flags, such as tsx's loader
 * when run from source, and its script), as `start --roles <roles>`, with the parent's environment
 * plus `env`. Its output is the parent's (inherited), so one log shows every role; its stdin is
 * closed. It is not detached: a terminal's Ctrl-C reaches it too, and its drain ignores the
 * supervisor's SIGTERM that follows.
 */
export interface RoleProcessOptions {
  /** The command's arguments after the roles (`--port`, `--host` for the API's child). */
  args(roles: string[]): string[];
  env: NodeJS.ProcessEnv;
}

export function spawnRoleProcess(roles: string[], o: RoleProcessOptions): RoleChild {
  const script = process.argv[1];
  const child = spawn(process.execPath, [...process.execArgv, ...(script ? [script] : []), 'start', '--roles', roles.join(','), ...o.args(roles)], {
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const ended = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    // 'error' without 'exit' (the program could not be started at all) ends it too: a crash to the policy.
    child.once('error', () => resolve({ code: null, signal: null }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    pid: child.pid,
    ended,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
