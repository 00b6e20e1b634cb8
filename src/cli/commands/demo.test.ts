import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');

/**
 * Runs `cadenza demo` in a child process, as a user would. With `interruptMs`, Ctrl-C that long after
 * the first line: SIGINT to the process group, as a terminal sends it (bin/cadenza.js runs the CLI
 * in a child of its own). The group is killed if it is still there when the test gives up.
 */
function cadenza(args: string[], interruptMs?: number, giveUpMs = 90_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [join(root, 'bin', 'cadenza.js'), ...args], { cwd: root, detached: true, env: { ...process.env, CADENZA_LOG_LEVEL: 'silent' } });
    const group = (signal: NodeJS.Signals) => {
      try {
        process.kill(-p.pid!, signal);
      } catch {
        // already gone
      }
    };
    const giveUp = setTimeout(() => group('SIGKILL'), giveUpMs);
    let interrupted = false;
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (interruptMs !== undefined && !interrupted && stdout.includes('\n')) {
        interrupted = true;
        setTimeout(() => group('SIGINT'), interruptMs);
      }
    });
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => {
      clearTimeout(giveUp);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('cadenza demo', () => {
  it('prints progress per sequence as JSON lines and exits cleanly when its time is up', async () => {
    const r = await cadenza(['--json', 'demo', '--leads', '12', '--speed', '7200', '--duration', '4', '--every', '1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { at: string; sequences: Array<{ name: string; enrolled: number; sent: number }> });
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const last = lines[lines.length - 1]!;
    expect(last.sequences.map((s) => [s.name, s.enrolled])).toEqual([['Outbound: RevOps leaders', 8], ['Follow-up: event visitors', 4]]);
    expect(last.sequences.reduce((n, s) => n + s.sent, 0)).toBeGreaterThan(0);
    // Simulated time ran ahead of the real clock.
    expect(Date.parse(last.at)).toBeGreaterThan(Date.now() + 3_600_000);
  }, 120_000);

  it('stops on Ctrl-C with the final counts', async () => {
    const r = await cadenza(['demo', '--leads', '12', '--duration', '600', '--every', '60'], 1500);
    // The wrapper (bin/cadenza.js) dies of the signal, as it does at a terminal; the CLI it runs
    // stops the demo, prints, and ends (the pipes close only when it has).
    expect(r.stdout, r.stdout + r.stderr).toMatch(/Demo stopped\. Final counts:\n.*\n {2}Outbound: RevOps leaders: 8 enrolled/);
  }, 120_000);

  it('refuses a bad option with exit code 2', async () => {
    const r = await cadenza(['demo', '--speed', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--speed must be a number from 1/);
  }, 60_000);
});
